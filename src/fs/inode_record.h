// The stored form of an inode (value of an InodeKey), see docs/FORMAT.md.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/filesystem.h"
#include "fs/reserved_chunks.h"

namespace pail::fs {

// First byte of every inode record; a reader refuses other versions.
inline constexpr uint8_t kInodeRecordVersion = 2;

struct InodeRecord {
  uint32_t mode = 0;  // S_IFMT | 07777
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t nlink = 0;   // directories: 2 + subdirectories
  uint64_t size = 0;    // regular files: bytes; symlinks: target length
  uint64_t used = 0;    // regular files: stored chunk bytes, reserved chunks whole
  uint64_t rdev = 0;    // device nodes
  struct timespec atime {};
  struct timespec mtime {};
  struct timespec ctime {};
  // Directories only: the directory holding this one (the root holds
  // itself), the number of entries, and the cookie the next entry gets.
  Ino parent = 0;
  uint64_t entries = 0;
  uint64_t next_cookie = 0;
  // Directories only: no entry has a lower cookie. Set to next_cookie when
  // the directory empties, so that listings start past the rows of the
  // removed entries, which the engine keeps as deletion markers until a
  // compaction drops them: a directory emptied and refilled over and over
  // (a build's scratch directory) had every listing step over all of them.
  // Stored where devices keep rdev (docs/FORMAT.md).
  uint64_t first_cookie = 0;
  // Random, fixed at creation: what tells this inode from an earlier one
  // that had the same number (numbers can come back after a crash rolls
  // back their reservation) and what makes a file handle unguessable.
  uint64_t generation = 0;
  std::string symlink_target;
  // Regular files only: the chunks fallocate set aside, charged in `used`
  // whole (fs/reserved_chunks.h). Stored where symlinks keep their target.
  ReservedChunks reserved;

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
