// P9Client: a small 9P2000.L client for the integration tests, written
// independently of the server's codec (src/ninep/wire.*) so that a shared
// misreading of the protocol cannot hide. Messages are built field by field
// into byte strings and parsed back the same way; calls return 0 or the
// errno of an Rlerror, and -1 for a broken connection or malformed reply.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pail::ninep::test {

// Message numbers, spelled out here rather than borrowed from the server.
enum : uint8_t {
  Tlerror = 6, Rlerror = 7, Tstatfs = 8, Tlopen = 12, Tlcreate = 14, Tsymlink = 16,
  Tmknod = 18, Trename = 20, Treadlink = 22, Tgetattr = 24, Tsetattr = 26, Txattrwalk = 30,
  Txattrcreate = 32, Treaddir = 40, Tfsync = 50, Tlock = 52, Tgetlock = 54, Tlink = 70,
  Tmkdir = 72, Trenameat = 74, Tunlinkat = 76, Tversion = 100, Tauth = 102, Tattach = 104,
  Tflush = 108, Rflush = 109, Twalk = 110, Tread = 116, Twrite = 118, Tclunk = 120,
  Tremove = 122,
};

// Little-endian field builder.
class Fields {
 public:
  Fields& u8(uint8_t v) { return put(v, 1); }
  Fields& u16(uint16_t v) { return put(v, 2); }
  Fields& u32(uint32_t v) { return put(v, 4); }
  Fields& u64(uint64_t v) { return put(v, 8); }
  Fields& str(const std::string& s) { u16(static_cast<uint16_t>(s.size())); bytes_ += s; return *this; }
  Fields& raw(const std::string& s) { bytes_ += s; return *this; }
  const std::string& bytes() const { return bytes_; }

 private:
  Fields& put(uint64_t v, int n) {
    for (int i = 0; i < n; i++) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  std::string bytes_;
};

// Little-endian field parser; bad() once anything was short.
class Parse {
 public:
  explicit Parse(const std::string& s) : s_(s) {}
  uint64_t get(int n) {
    if (pos_ + n > s_.size()) { bad_ = true; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= uint64_t(uint8_t(s_[pos_ + i])) << (8 * i);
    pos_ += n;
    return v;
  }
  uint8_t u8() { return static_cast<uint8_t>(get(1)); }
  uint16_t u16() { return static_cast<uint16_t>(get(2)); }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  std::string str() { return take(u16()); }
  std::string take(size_t n) {
    if (pos_ + n > s_.size()) { bad_ = true; return {}; }
    std::string out = s_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  bool bad() const { return bad_; }
  bool at_end() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  size_t pos_ = 0;
  bool bad_ = false;
};

struct P9Qid {
  uint8_t type = 0;
  uint32_t version = 0;
  uint64_t path = 0;
};

struct P9Attr {
  uint64_t valid = 0;
  P9Qid qid;
  uint32_t mode = 0, uid = 0, gid = 0;
  uint64_t nlink = 0, rdev = 0, size = 0, blksize = 0, blocks = 0;
  uint64_t atime_sec = 0, atime_nsec = 0, mtime_sec = 0, mtime_nsec = 0, ctime_sec = 0,
           ctime_nsec = 0;
};

struct P9Dirent {
  P9Qid qid;
  uint64_t offset = 0;
  uint8_t type = 0;
  std::string name;
};

struct P9Reply {
  uint8_t type = 0;
  uint16_t tag = 0;
  std::string body;
};

class P9Client {
 public:
  static std::unique_ptr<P9Client> ConnectTcp(uint16_t port);
  static std::unique_ptr<P9Client> ConnectUnix(const std::string& path);
  ~P9Client();

  // Raw messages, for pipelining, flush and malformed input.
  bool Send(uint8_t type, uint16_t tag, const std::string& body);
  bool SendBytes(const std::string& bytes);
  // False on timeout or a closed connection.
  bool Receive(P9Reply* reply, int timeout_ms = 20000);
  // True when the server closed the connection (EOF within timeout).
  bool WaitClosed(int timeout_ms = 10000);
  // Sends with a fresh tag and waits for that tag's reply.
  P9Reply Call(uint8_t type, const std::string& body);
  uint16_t NextTag() { return next_tag_++ % 0xfff0; }

  int Version(uint32_t msize, const std::string& version, uint32_t* out_msize = nullptr,
              std::string* out_version = nullptr);
  int Attach(uint32_t fid, uint32_t n_uname, const std::string& aname = "",
             P9Qid* qid = nullptr, const std::string& uname = "");
  // Connects' usual start: version (msize 256 KiB) and attach fid 0 as root.
  int Start(uint32_t n_uname = 0, const std::string& aname = "");
  int Walk(uint32_t fid, uint32_t newfid, const std::vector<std::string>& names,
           std::vector<P9Qid>* qids = nullptr);
  int Lopen(uint32_t fid, uint32_t flags, P9Qid* qid = nullptr);
  int Lcreate(uint32_t fid, const std::string& name, uint32_t flags, uint32_t mode,
              uint32_t gid = 0, P9Qid* qid = nullptr);
  int Read(uint32_t fid, uint64_t offset, uint32_t count, std::string* data);
  int Write(uint32_t fid, uint64_t offset, const std::string& data, uint32_t* written = nullptr);
  int Clunk(uint32_t fid);
  int Remove(uint32_t fid);
  int Getattr(uint32_t fid, P9Attr* attr);
  int Setattr(uint32_t fid, uint32_t valid, uint32_t mode, uint32_t uid, uint32_t gid,
              uint64_t size, uint64_t atime_sec = 0, uint64_t atime_nsec = 0,
              uint64_t mtime_sec = 0, uint64_t mtime_nsec = 0);
  int Statfs(uint32_t fid, uint32_t* type, uint64_t* blocks, uint64_t* files, uint32_t* namelen);
  int Readdir(uint32_t fid, uint64_t offset, uint32_t count, std::vector<P9Dirent>* entries);
  int Mkdir(uint32_t dfid, const std::string& name, uint32_t mode, uint32_t gid = 0,
            P9Qid* qid = nullptr);
  int Symlink(uint32_t dfid, const std::string& name, const std::string& target, uint32_t gid = 0);
  int Mknod(uint32_t dfid, const std::string& name, uint32_t mode, uint32_t major,
            uint32_t minor, uint32_t gid = 0);
  int Link(uint32_t dfid, uint32_t fid, const std::string& name);
  int Readlink(uint32_t fid, std::string* target);
  int Rename(uint32_t fid, uint32_t dfid, const std::string& name);
  int Renameat(uint32_t olddfid, const std::string& oldname, uint32_t newdfid,
               const std::string& newname);
  int Unlinkat(uint32_t dfid, const std::string& name, uint32_t flags);
  int Fsync(uint32_t fid);
  int Lock(uint32_t fid, uint8_t type, uint32_t flags, uint64_t start, uint64_t length,
           uint32_t proc_id, const std::string& client, uint8_t* status);
  int Getlock(uint32_t fid, uint8_t type, uint64_t start, uint64_t length, uint32_t proc_id,
              const std::string& client, uint8_t* out_type, uint64_t* out_start = nullptr,
              uint64_t* out_length = nullptr, uint32_t* out_proc = nullptr,
              std::string* out_client = nullptr);
  int Xattrwalk(uint32_t fid, uint32_t newfid, const std::string& name, uint64_t* size);
  int Xattrcreate(uint32_t fid, const std::string& name, uint64_t size, uint32_t flags);
  // Reads a whole xattr fid (Xattrwalk result) into `value`.
  int XattrGet(uint32_t fid, uint32_t newfid, const std::string& name, std::string* value);
  int XattrSet(uint32_t fid, uint32_t newfid, const std::string& name, const std::string& value,
               uint32_t flags);

 private:
  explicit P9Client(int fd) : fd_(fd) {}
  // 0 if the reply has `type`, the Rlerror errno, or -1.
  static int Check(const P9Reply& r, uint8_t type);

  int fd_;
  uint16_t next_tag_ = 1;
  std::string inbox_;
  std::vector<P9Reply> held_;  // replies received while waiting for another tag
};

}  // namespace pail::ninep::test
