#include "p9_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pail::ninep::test {

std::unique_ptr<P9Client> P9Client::ConnectTcp(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return nullptr;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return std::unique_ptr<P9Client>(new P9Client(fd));
}

std::unique_ptr<P9Client> P9Client::ConnectUnix(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<P9Client>(new P9Client(fd));
}

P9Client::~P9Client() { close(fd_); }

bool P9Client::SendBytes(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool P9Client::Send(uint8_t type, uint16_t tag, const std::string& body) {
  Fields f;
  f.u32(static_cast<uint32_t>(4 + 1 + 2 + body.size())).u8(type).u16(tag).raw(body);
  return SendBytes(f.bytes());
}

bool P9Client::Receive(P9Reply* reply, int timeout_ms) {
  for (;;) {
    if (inbox_.size() >= 4) {
      Parse p(inbox_);
      uint32_t size = p.u32();
      if (size < 7) return false;
      if (inbox_.size() >= size) {
        std::string msg = inbox_.substr(0, size);
        inbox_.erase(0, size);
        Parse m(msg);
        m.u32();
        reply->type = m.u8();
        reply->tag = m.u16();
        reply->body = msg.substr(7);
        return true;
      }
    }
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) <= 0) return false;
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    inbox_.append(buf, static_cast<size_t>(n));
  }
}

bool P9Client::WaitClosed(int timeout_ms) {
  for (;;) {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

P9Reply P9Client::Call(uint8_t type, const std::string& body) {
  uint16_t tag = NextTag();
  P9Reply reply;
  if (!Send(type, tag, body)) return reply;
  for (size_t i = 0; i < held_.size(); i++) {
    if (held_[i].tag == tag) {
      reply = held_[i];
      held_.erase(held_.begin() + static_cast<long>(i));
      return reply;
    }
  }
  P9Reply r;
  while (Receive(&r)) {
    if (r.tag == tag) return r;
    held_.push_back(r);
  }
  return reply;  // type 0: no reply
}

int P9Client::Check(const P9Reply& r, uint8_t type) {
  if (r.type == Rlerror) {
    Parse p(r.body);
    uint32_t e = p.u32();
    return p.bad() ? -1 : static_cast<int>(e);
  }
  return r.type == type ? 0 : -1;
}

namespace {
P9Qid ReadQid(Parse& p) {
  P9Qid q;
  q.type = p.u8();
  q.version = p.u32();
  q.path = p.u64();
  return q;
}
}  // namespace

int P9Client::Version(uint32_t msize, const std::string& version, uint32_t* out_msize,
                      std::string* out_version) {
  P9Reply r = Call(Tversion, Fields().u32(msize).str(version).bytes());
  int e = Check(r, Tversion + 1);
  if (e) return e;
  Parse p(r.body);
  uint32_t m = p.u32();
  std::string v = p.str();
  if (p.bad()) return -1;
  if (out_msize) *out_msize = m;
  if (out_version) *out_version = v;
  return 0;
}

int P9Client::Attach(uint32_t fid, uint32_t n_uname, const std::string& aname, P9Qid* qid,
                     const std::string& uname) {
  P9Reply r = Call(Tattach, Fields().u32(fid).u32(0xffffffff).str(uname).str(aname).u32(n_uname).bytes());
  int e = Check(r, Tattach + 1);
  if (e) return e;
  Parse p(r.body);
  P9Qid q = ReadQid(p);
  if (qid) *qid = q;
  return p.bad() ? -1 : 0;
}

int P9Client::Start(uint32_t n_uname, const std::string& aname) {
  std::string v;
  int e = Version(256 * 1024, "9P2000.L", nullptr, &v);
  if (e) return e;
  if (v != "9P2000.L") return -1;
  return Attach(0, n_uname, aname);
}

int P9Client::Walk(uint32_t fid, uint32_t newfid, const std::vector<std::string>& names,
                   std::vector<P9Qid>* qids) {
  Fields f;
  f.u32(fid).u32(newfid).u16(static_cast<uint16_t>(names.size()));
  for (auto& n : names) f.str(n);
  P9Reply r = Call(Twalk, f.bytes());
  int e = Check(r, Twalk + 1);
  if (e) return e;
  Parse p(r.body);
  uint16_t n = p.u16();
  std::vector<P9Qid> got;
  for (uint16_t i = 0; i < n && !p.bad(); i++) got.push_back(ReadQid(p));
  if (qids) *qids = got;
  return p.bad() ? -1 : 0;
}

int P9Client::Lopen(uint32_t fid, uint32_t flags, P9Qid* qid) {
  P9Reply r = Call(Tlopen, Fields().u32(fid).u32(flags).bytes());
  int e = Check(r, Tlopen + 1);
  if (e) return e;
  Parse p(r.body);
  P9Qid q = ReadQid(p);
  if (qid) *qid = q;
  return 0;
}

int P9Client::Lcreate(uint32_t fid, const std::string& name, uint32_t flags, uint32_t mode,
                      uint32_t gid, P9Qid* qid) {
  P9Reply r = Call(Tlcreate, Fields().u32(fid).str(name).u32(flags).u32(mode).u32(gid).bytes());
  int e = Check(r, Tlcreate + 1);
  if (e) return e;
  Parse p(r.body);
  P9Qid q = ReadQid(p);
  if (qid) *qid = q;
  return 0;
}

int P9Client::Read(uint32_t fid, uint64_t offset, uint32_t count, std::string* data) {
  P9Reply r = Call(Tread, Fields().u32(fid).u64(offset).u32(count).bytes());
  int e = Check(r, Tread + 1);
  if (e) return e;
  Parse p(r.body);
  uint32_t n = p.u32();
  *data = p.take(n);
  return p.bad() ? -1 : 0;
}

int P9Client::Write(uint32_t fid, uint64_t offset, const std::string& data, uint32_t* written) {
  P9Reply r = Call(Twrite, Fields().u32(fid).u64(offset).u32(static_cast<uint32_t>(data.size())).raw(data).bytes());
  int e = Check(r, Twrite + 1);
  if (e) return e;
  Parse p(r.body);
  uint32_t n = p.u32();
  if (written) *written = n;
  return p.bad() ? -1 : 0;
}

int P9Client::Clunk(uint32_t fid) { return Check(Call(Tclunk, Fields().u32(fid).bytes()), Tclunk + 1); }
int P9Client::Remove(uint32_t fid) { return Check(Call(Tremove, Fields().u32(fid).bytes()), Tremove + 1); }

int P9Client::Getattr(uint32_t fid, P9Attr* a) {
  P9Reply r = Call(Tgetattr, Fields().u32(fid).u64(0x7ff).bytes());
  int e = Check(r, Tgetattr + 1);
  if (e) return e;
  Parse p(r.body);
  a->valid = p.u64();
  a->qid = ReadQid(p);
  a->mode = p.u32();
  a->uid = p.u32();
  a->gid = p.u32();
  a->nlink = p.u64();
  a->rdev = p.u64();
  a->size = p.u64();
  a->blksize = p.u64();
  a->blocks = p.u64();
  a->atime_sec = p.u64();
  a->atime_nsec = p.u64();
  a->mtime_sec = p.u64();
  a->mtime_nsec = p.u64();
  a->ctime_sec = p.u64();
  a->ctime_nsec = p.u64();
  for (int i = 0; i < 4; i++) p.u64();  // btime, gen, data_version
  return p.bad() || !p.at_end() ? -1 : 0;
}

int P9Client::Setattr(uint32_t fid, uint32_t valid, uint32_t mode, uint32_t uid, uint32_t gid,
                      uint64_t size, uint64_t atime_sec, uint64_t atime_nsec, uint64_t mtime_sec,
                      uint64_t mtime_nsec) {
  return Check(Call(Tsetattr, Fields().u32(fid).u32(valid).u32(mode).u32(uid).u32(gid).u64(size)
                                  .u64(atime_sec).u64(atime_nsec).u64(mtime_sec).u64(mtime_nsec).bytes()),
               Tsetattr + 1);
}

int P9Client::Statfs(uint32_t fid, uint32_t* type, uint64_t* blocks, uint64_t* files,
                     uint32_t* namelen) {
  P9Reply r = Call(Tstatfs, Fields().u32(fid).bytes());
  int e = Check(r, Tstatfs + 1);
  if (e) return e;
  Parse p(r.body);
  *type = p.u32();
  p.u32();
  *blocks = p.u64();
  p.u64();
  p.u64();
  *files = p.u64();
  p.u64();
  p.u64();
  *namelen = p.u32();
  return p.bad() || !p.at_end() ? -1 : 0;
}

int P9Client::Readdir(uint32_t fid, uint64_t offset, uint32_t count, std::vector<P9Dirent>* out) {
  P9Reply r = Call(Treaddir, Fields().u32(fid).u64(offset).u32(count).bytes());
  int e = Check(r, Treaddir + 1);
  if (e) return e;
  Parse p(r.body);
  uint32_t n = p.u32();
  std::string data = p.take(n);
  if (p.bad() || n > count) return -1;
  Parse d(data);
  out->clear();
  while (!d.at_end() && !d.bad()) {
    P9Dirent ent;
    ent.qid = ReadQid(d);
    ent.offset = d.u64();
    ent.type = d.u8();
    ent.name = d.str();
    out->push_back(ent);
  }
  return d.bad() ? -1 : 0;
}

int P9Client::Mkdir(uint32_t dfid, const std::string& name, uint32_t mode, uint32_t gid, P9Qid* qid) {
  P9Reply r = Call(Tmkdir, Fields().u32(dfid).str(name).u32(mode).u32(gid).bytes());
  int e = Check(r, Tmkdir + 1);
  if (e) return e;
  Parse p(r.body);
  P9Qid q = ReadQid(p);
  if (qid) *qid = q;
  return 0;
}

int P9Client::Symlink(uint32_t dfid, const std::string& name, const std::string& target, uint32_t gid) {
  return Check(Call(Tsymlink, Fields().u32(dfid).str(name).str(target).u32(gid).bytes()), Tsymlink + 1);
}

int P9Client::Mknod(uint32_t dfid, const std::string& name, uint32_t mode, uint32_t major,
                    uint32_t minor, uint32_t gid) {
  return Check(Call(Tmknod, Fields().u32(dfid).str(name).u32(mode).u32(major).u32(minor).u32(gid).bytes()),
               Tmknod + 1);
}

int P9Client::Link(uint32_t dfid, uint32_t fid, const std::string& name) {
  return Check(Call(Tlink, Fields().u32(dfid).u32(fid).str(name).bytes()), Tlink + 1);
}

int P9Client::Readlink(uint32_t fid, std::string* target) {
  P9Reply r = Call(Treadlink, Fields().u32(fid).bytes());
  int e = Check(r, Treadlink + 1);
  if (e) return e;
  Parse p(r.body);
  *target = p.str();
  return p.bad() ? -1 : 0;
}

int P9Client::Rename(uint32_t fid, uint32_t dfid, const std::string& name) {
  return Check(Call(Trename, Fields().u32(fid).u32(dfid).str(name).bytes()), Trename + 1);
}

int P9Client::Renameat(uint32_t olddfid, const std::string& oldname, uint32_t newdfid,
                       const std::string& newname) {
  return Check(Call(Trenameat, Fields().u32(olddfid).str(oldname).u32(newdfid).str(newname).bytes()),
               Trenameat + 1);
}

int P9Client::Unlinkat(uint32_t dfid, const std::string& name, uint32_t flags) {
  return Check(Call(Tunlinkat, Fields().u32(dfid).str(name).u32(flags).bytes()), Tunlinkat + 1);
}

int P9Client::Fsync(uint32_t fid) {
  return Check(Call(Tfsync, Fields().u32(fid).u32(0).bytes()), Tfsync + 1);
}

int P9Client::Lock(uint32_t fid, uint8_t type, uint32_t flags, uint64_t start, uint64_t length,
                   uint32_t proc_id, const std::string& client, uint8_t* status) {
  P9Reply r = Call(Tlock, Fields().u32(fid).u8(type).u32(flags).u64(start).u64(length).u32(proc_id)
                              .str(client).bytes());
  int e = Check(r, Tlock + 1);
  if (e) return e;
  Parse p(r.body);
  *status = p.u8();
  return p.bad() ? -1 : 0;
}

int P9Client::Getlock(uint32_t fid, uint8_t type, uint64_t start, uint64_t length,
                      uint32_t proc_id, const std::string& client, uint8_t* out_type,
                      uint64_t* out_start, uint64_t* out_length, uint32_t* out_proc,
                      std::string* out_client) {
  P9Reply r = Call(Tgetlock, Fields().u32(fid).u8(type).u64(start).u64(length).u32(proc_id)
                                 .str(client).bytes());
  int e = Check(r, Tgetlock + 1);
  if (e) return e;
  Parse p(r.body);
  *out_type = p.u8();
  uint64_t s = p.u64(), l = p.u64();
  uint32_t pid = p.u32();
  std::string c = p.str();
  if (out_start) *out_start = s;
  if (out_length) *out_length = l;
  if (out_proc) *out_proc = pid;
  if (out_client) *out_client = c;
  return p.bad() ? -1 : 0;
}

int P9Client::Xattrwalk(uint32_t fid, uint32_t newfid, const std::string& name, uint64_t* size) {
  P9Reply r = Call(Txattrwalk, Fields().u32(fid).u32(newfid).str(name).bytes());
  int e = Check(r, Txattrwalk + 1);
  if (e) return e;
  Parse p(r.body);
  *size = p.u64();
  return p.bad() ? -1 : 0;
}

int P9Client::Xattrcreate(uint32_t fid, const std::string& name, uint64_t size, uint32_t flags) {
  return Check(Call(Txattrcreate, Fields().u32(fid).str(name).u64(size).u32(flags).bytes()),
               Txattrcreate + 1);
}

int P9Client::XattrGet(uint32_t fid, uint32_t newfid, const std::string& name, std::string* value) {
  uint64_t size = 0;
  int e = Xattrwalk(fid, newfid, name, &size);
  if (e) return e;
  value->clear();
  while (value->size() < size) {
    std::string part;
    e = Read(newfid, value->size(), 8192, &part);
    if (e || part.empty()) break;
    *value += part;
  }
  int c = Clunk(newfid);
  return e ? e : c;
}

int P9Client::XattrSet(uint32_t fid, uint32_t newfid, const std::string& name,
                       const std::string& value, uint32_t flags) {
  int e = Walk(fid, newfid, {});
  if (e) return e;
  e = Xattrcreate(newfid, name, value.size(), flags);
  if (e) {
    Clunk(newfid);
    return e;
  }
  for (size_t off = 0; off < value.size() && !e; off += 8192) {
    e = Write(newfid, off, value.substr(off, 8192));
  }
  int c = Clunk(newfid);
  return e ? e : c;
}

}  // namespace pail::ninep::test
