// Keys and small values of the filesystem, as laid out in docs/FORMAT.md.
//
// Metadata lives in column family kMetaColumnFamily. Every key starts with a
// one-byte kind followed by big-endian numbers, so a prefix scan returns a
// directory's entries or a file's xattrs contiguously and in numeric order.
// File data lives in kDataColumnFamily, keyed by inode and chunk index, both
// big-endian, so one file's chunks are one range; a value holds the chunk
// inline or points into a segment object (chunk_value.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/filesystem.h"

namespace pail::fs {

inline constexpr const char* kMetaColumnFamily = "fs_meta";
inline constexpr const char* kDataColumnFamily = "fs_data";

// File data is cut into chunks of this many bytes; chunk i holds bytes
// [i * kChunkSize, (i + 1) * kChunkSize). A chunk is stored without its
// trailing zero bytes; a chunk of zeros is not stored at all (a hole).
inline constexpr uint64_t kChunkSize = 32 * 1024;

// Kinds: the first byte of every metadata key.
inline constexpr uint8_t kKindInode = 0x01;     // 01 | ino -> inode record
inline constexpr uint8_t kKindDirEntry = 0x02;  // 02 | dir | name -> DirEntryValue
inline constexpr uint8_t kKindDirScan = 0x03;   // 03 | dir | cookie -> DirScanValue
inline constexpr uint8_t kKindXattr = 0x04;     // 04 | ino | name -> value bytes
inline constexpr uint8_t kKindOrphan = 0x05;    // 05 | ino -> empty: unlinked while open
inline constexpr uint8_t kKindReclaim = 0x06;   // 06 | ino -> chunk count (u64 BE): data to free
inline constexpr uint8_t kKindStats = 0x07;     // 07 | shard(u8) -> used bytes, inodes (u64 BE each)
inline constexpr uint8_t kKindSystem = 0x08;    // 08 | subtype -> see below
inline constexpr uint8_t kKindSegment = 0x09;      // 09 | segment id -> SegmentUsage (merged)
inline constexpr uint8_t kKindXattrTotals = 0x0a;  // 0a | ino -> XattrTotals, when it has any

// System subtypes.
inline constexpr uint8_t kSystemNextInode = 0x01;  // u64 BE: inode numbers below are reserved
inline constexpr uint8_t kSystemFormat = 0x02;     // u64 BE: kFormatVersion

// 2: inode records carry a random generation (kInodeRecordVersion 2).
// 3: chunk values are tagged, inline or an extent of a segment object, and
//    every inode with xattrs has an XattrTotals key.
// 4: a chunk value may also be pieces of extents (kChunkPieces). A format 3
//    bucket is a valid format 4 one: opening it restamps it as 4.
inline constexpr uint64_t kFormatVersion = 4;
inline constexpr uint64_t kPreviousFormatVersion = 3;
inline constexpr int kStatsShards = 16;

// Cookies 1 and 2 are "." and ".."; real entries start here.
inline constexpr uint64_t kFirstEntryCookie = 3;

void PutBigEndian32(std::string* out, uint32_t v);
uint32_t GetBigEndian32(const char* p);
void PutBigEndian64(std::string* out, uint64_t v);
uint64_t GetBigEndian64(const char* p);

std::string InodeKey(Ino ino);
std::string DirEntryKey(Ino dir, std::string_view name);
std::string DirEntryPrefix(Ino dir);
std::string DirScanKey(Ino dir, uint64_t cookie);
std::string DirScanPrefix(Ino dir);
std::string XattrKey(Ino ino, std::string_view name);
std::string XattrPrefix(Ino ino);
std::string XattrTotalsKey(Ino ino);
std::string OrphanKey(Ino ino);
std::string ReclaimKey(Ino ino);
std::string StatsKey(int shard);
std::string SystemKey(uint8_t subtype);
std::string KindPrefix(uint8_t kind);
std::string ChunkKey(Ino ino, uint64_t index);
std::string SegmentKey(uint64_t segment);

// The id that follows the kind byte; the caller checked the key's length.
inline Ino KeyIno(std::string_view key) { return GetBigEndian64(key.data() + 1); }
// Chunk keys: inode and index.
inline Ino ChunkKeyIno(std::string_view key) { return GetBigEndian64(key.data()); }
inline uint64_t ChunkKeyIndex(std::string_view key) { return GetBigEndian64(key.data() + 8); }

// Value of a DirEntry key: child inode (8 BE), cookie (8 BE), type (1 byte:
// S_IFMT >> 12).
struct DirEntryValue {
  Ino ino = 0;
  uint64_t cookie = 0;
  uint32_t type = 0;  // S_IFMT bits
};
std::string EncodeDirEntry(const DirEntryValue& v);
bool DecodeDirEntry(std::string_view in, DirEntryValue* v);

// Value of a DirScan key: child inode (8 BE), type (1 byte), then the name.
struct DirScanValue {
  Ino ino = 0;
  uint32_t type = 0;
  std::string name;
};
std::string EncodeDirScan(Ino ino, uint32_t type, std::string_view name);
bool DecodeDirScan(std::string_view in, DirScanValue* v);

// Value of a stats shard.
struct StatsValue {
  uint64_t used_bytes = 0;
  uint64_t inodes = 0;
};
std::string EncodeStats(const StatsValue& v);
bool DecodeStats(std::string_view in, StatsValue* v);

// Value of an XattrTotals key: what the inode's attributes add up to, kept
// in the batch that changes them so the bounds cost one read to check.
// name_bytes counts each name with its NUL (what listxattr returns).
// Encoded as name_bytes (8 BE), value_bytes (8 BE), then count (8 BE). A
// record written before the count was kept has only the first two; it
// decodes with count kXattrCountUnknown, and the next change counts the
// attributes and writes all three.
inline constexpr uint64_t kXattrCountUnknown = ~uint64_t{0};
struct XattrTotals {
  uint64_t name_bytes = 0;
  uint64_t value_bytes = 0;
  uint64_t count = 0;
  bool operator==(const XattrTotals&) const = default;
};
std::string EncodeXattrTotals(const XattrTotals& v);
bool DecodeXattrTotals(std::string_view in, XattrTotals* v);

// Number of chunks that may hold data for a file of this size.
inline uint64_t ChunkCount(uint64_t size) { return size / kChunkSize + (size % kChunkSize != 0); }

}  // namespace pail::fs
