#include "fs/key_codec.h"

namespace pail::fs {

void PutBigEndian32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint32_t GetBigEndian32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void PutBigEndian64(std::string* out, uint64_t v) {
  char buf[8];
  for (int i = 7; i >= 0; --i) {
    buf[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  out->append(buf, 8);
}

uint64_t GetBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

namespace {
std::string KindAndId(uint8_t kind, uint64_t id) {
  std::string k;
  k.reserve(9);
  k.push_back(static_cast<char>(kind));
  PutBigEndian64(&k, id);
  return k;
}
}  // namespace

std::string InodeKey(Ino ino) { return KindAndId(kKindInode, ino); }

std::string DirEntryKey(Ino dir, std::string_view name) {
  std::string k = KindAndId(kKindDirEntry, dir);
  k.append(name);
  return k;
}
std::string DirEntryPrefix(Ino dir) { return KindAndId(kKindDirEntry, dir); }

std::string DirScanKey(Ino dir, uint64_t cookie) {
  std::string k = KindAndId(kKindDirScan, dir);
  PutBigEndian64(&k, cookie);
  return k;
}
std::string DirScanPrefix(Ino dir) { return KindAndId(kKindDirScan, dir); }

std::string XattrKey(Ino ino, std::string_view name) {
  std::string k = KindAndId(kKindXattr, ino);
  k.append(name);
  return k;
}
std::string XattrPrefix(Ino ino) { return KindAndId(kKindXattr, ino); }
std::string XattrTotalsKey(Ino ino) { return KindAndId(kKindXattrTotals, ino); }
std::string OrphanKey(Ino ino) { return KindAndId(kKindOrphan, ino); }
std::string ReclaimKey(Ino ino) { return KindAndId(kKindReclaim, ino); }

std::string StatsKey(int shard) {
  std::string k;
  k.push_back(static_cast<char>(kKindStats));
  k.push_back(static_cast<char>(shard));
  return k;
}

std::string SystemKey(uint8_t subtype) {
  std::string k;
  k.push_back(static_cast<char>(kKindSystem));
  k.push_back(static_cast<char>(subtype));
  return k;
}

std::string KindPrefix(uint8_t kind) { return std::string(1, static_cast<char>(kind)); }

std::string SegmentKey(uint64_t segment) {
  std::string k(1, static_cast<char>(kKindSegment));
  PutBigEndian64(&k, segment);
  return k;
}

std::string ChunkKey(Ino ino, uint64_t index) {
  std::string k;
  k.reserve(16);
  PutBigEndian64(&k, ino);
  PutBigEndian64(&k, index);
  return k;
}

std::string EncodeDirEntry(const DirEntryValue& v) {
  std::string out;
  out.reserve(17);
  PutBigEndian64(&out, v.ino);
  PutBigEndian64(&out, v.cookie);
  out.push_back(static_cast<char>(v.type >> 12));
  return out;
}

bool DecodeDirEntry(std::string_view in, DirEntryValue* v) {
  if (in.size() != 17) return false;
  v->ino = GetBigEndian64(in.data());
  v->cookie = GetBigEndian64(in.data() + 8);
  v->type = static_cast<uint32_t>(static_cast<uint8_t>(in[16])) << 12;
  return true;
}

std::string EncodeDirScan(Ino ino, uint32_t type, std::string_view name) {
  std::string out;
  out.reserve(9 + name.size());
  PutBigEndian64(&out, ino);
  out.push_back(static_cast<char>(type >> 12));
  out.append(name);
  return out;
}

bool DecodeDirScan(std::string_view in, DirScanValue* v) {
  if (in.size() < 10) return false;  // a name has at least one byte
  v->ino = GetBigEndian64(in.data());
  v->type = static_cast<uint32_t>(static_cast<uint8_t>(in[8])) << 12;
  v->name.assign(in.substr(9));
  return true;
}

std::string EncodeStats(const StatsValue& v) {
  std::string out;
  PutBigEndian64(&out, v.used_bytes);
  PutBigEndian64(&out, v.inodes);
  return out;
}

bool DecodeStats(std::string_view in, StatsValue* v) {
  if (in.size() != 16) return false;
  v->used_bytes = GetBigEndian64(in.data());
  v->inodes = GetBigEndian64(in.data() + 8);
  return true;
}

std::string EncodeXattrTotals(const XattrTotals& v) {
  std::string out;
  PutBigEndian64(&out, v.name_bytes);
  PutBigEndian64(&out, v.value_bytes);
  PutBigEndian64(&out, v.count);
  return out;
}

bool DecodeXattrTotals(std::string_view in, XattrTotals* v) {
  if (in.size() != 16 && in.size() != 24) return false;
  v->name_bytes = GetBigEndian64(in.data());
  v->value_bytes = GetBigEndian64(in.data() + 8);
  v->count = in.size() == 24 ? GetBigEndian64(in.data() + 16) : kXattrCountUnknown;
  return true;
}

}  // namespace pail::fs
