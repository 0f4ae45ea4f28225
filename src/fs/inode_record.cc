#include "fs/inode_record.h"

#include <sys/random.h>

#include <cstring>
#include <random>

namespace pail::fs {

// Layout after the version byte, all little-endian: mode, uid, gid, nlink
// (u32 each); size, used, rdev (a directory's first_cookie) (u64 each);
// atime, mtime, ctime (i64 seconds then u32 nanoseconds each); parent,
// entries, next_cookie, generation (u64 each); then to the end of the value
// a symlink's target or a regular file's reserved chunks.
namespace {
constexpr size_t kFixedSize = 1 + 4 * 4 + 3 * 8 + 3 * 12 + 4 * 8;

void Put32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void Put64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t Get32(const char*& p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  p += 4;
  return v;
}
uint64_t Get64(const char*& p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  p += 8;
  return v;
}
void PutTime(std::string* out, const struct timespec& t) {
  Put64(out, static_cast<uint64_t>(t.tv_sec));
  Put32(out, static_cast<uint32_t>(t.tv_nsec));
}
struct timespec GetTime(const char*& p) {
  struct timespec t {};
  t.tv_sec = static_cast<time_t>(static_cast<int64_t>(Get64(p)));
  t.tv_nsec = static_cast<long>(Get32(p));
  return t;
}
}  // namespace

std::string EncodeInode(const InodeRecord& r) {
  std::string out;
  out.reserve(kFixedSize + r.symlink_target.size());
  out.push_back(static_cast<char>(kInodeRecordVersion));
  Put32(&out, r.mode);
  Put32(&out, r.uid);
  Put32(&out, r.gid);
  Put32(&out, r.nlink);
  Put64(&out, r.size);
  Put64(&out, r.used);
  Put64(&out, r.is_dir() ? r.first_cookie : r.rdev);
  PutTime(&out, r.atime);
  PutTime(&out, r.mtime);
  PutTime(&out, r.ctime);
  Put64(&out, r.parent);
  Put64(&out, r.entries);
  Put64(&out, r.next_cookie);
  Put64(&out, r.generation);
  if (r.is_reg()) {
    r.reserved.AppendTo(&out);
  } else {
    out.append(r.symlink_target);
  }
  return out;
}

bool DecodeInode(std::string_view in, InodeRecord* r) {
  if (in.size() < kFixedSize || static_cast<uint8_t>(in[0]) != kInodeRecordVersion) return false;
  const char* p = in.data() + 1;
  r->mode = Get32(p);
  r->uid = Get32(p);
  r->gid = Get32(p);
  r->nlink = Get32(p);
  r->size = Get64(p);
  r->used = Get64(p);
  const uint64_t rdev_slot = Get64(p);
  r->rdev = r->is_dir() ? 0 : rdev_slot;
  r->first_cookie = r->is_dir() ? rdev_slot : 0;
  r->atime = GetTime(p);
  r->mtime = GetTime(p);
  r->ctime = GetTime(p);
  r->parent = Get64(p);
  r->entries = Get64(p);
  r->next_cookie = Get64(p);
  r->generation = Get64(p);
  r->symlink_target.clear();
  r->reserved = ReservedChunks();
  if (r->is_reg()) {
    if (!r->reserved.Parse(in.substr(kFixedSize))) return false;
  } else {
    r->symlink_target.assign(in.substr(kFixedSize));
  }
  if (r->atime.tv_nsec >= 1000000000 || r->mtime.tv_nsec >= 1000000000 ||
      r->ctime.tv_nsec >= 1000000000) {
    return false;
  }
  return true;
}

Attr ToAttr(Ino ino, const InodeRecord& r) {
  Attr a;
  a.ino = ino;
  a.generation = r.generation;
  a.mode = r.mode;
  a.nlink = r.nlink;
  a.uid = r.uid;
  a.gid = r.gid;
  if (r.is_dir()) {
    a.size = kBlockSize;
  } else if (S_ISLNK(r.mode)) {
    a.size = r.symlink_target.size();
  } else {
    a.size = r.size;
  }
  a.used = r.is_reg() ? r.used : 0;
  a.rdev = r.rdev;
  a.atime = r.atime;
  a.mtime = r.mtime;
  a.ctime = r.ctime;
  return a;
}

uint64_t NewGeneration() {
  uint64_t g = kNoGeneration;
  while (g == kNoGeneration) {
    if (getrandom(&g, sizeof(g), 0) != static_cast<ssize_t>(sizeof(g))) {
      // getrandom only fails on kernels older than 3.17; fall back to the
      // library's random device, which reads /dev/urandom there.
      std::random_device device;
      g = (uint64_t{device()} << 32) | device();
    }
  }
  return g;
}

struct timespec NowTimespec() {
  struct timespec t {};
  clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

}  // namespace pail::fs
