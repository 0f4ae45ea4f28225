// The stored form of an inode (value of an InodeKey), see docs/FORMAT.md.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/filesystem.h"

namespace pail::fs {

// First byte of every inode record; a reader refuses other versions.
inline constexpr uint8_t kInodeRecordVersion = 2;

struct InodeRecord {
  uint32_t mode = 0;  // S_IFMT | 07777
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t nlink = 0;   // directories: 2 + subdirectories
  uint64_t size = 0;    // regular files: bytes; symlinks: target length
  uint64_t used = 0;    // stored chunk bytes of a regular file
  uint64_t rdev = 0;
  struct timespec atime {};
  struct timespec mtime {};
  struct timespec ctime {};
  // Directories only: the directory holding this one (the root holds
  // itself), the number of entries, and the cookie the next entry gets.
  Ino parent = 0;
  uint64_t entries = 0;
  uint64_t next_cookie = 0;
  // Random, fixed at creation: what tells this inode from an earlier one
  // that had the same number (numbers can come back after a crash rolls
  // back their reservation) and what makes a file handle unguessable.
  uint64_t generation = 0;
  std::string symlink_target;

  bool is_dir() const { return S_ISDIR(mode); }
  bool is_reg() const { return S_ISREG(mode); }
  uint32_t type() const { return mode & S_IFMT; }
};

std::string EncodeInode(const InodeRecord& r);
bool DecodeInode(std::string_view in, InodeRecord* r);

// A fresh generation from the system's CSPRNG, never 0 (kNoGeneration).
uint64_t NewGeneration();

// The attributes a protocol sees.
Attr ToAttr(Ino ino, const InodeRecord& r);

struct timespec NowTimespec();

}  // namespace pail::fs
