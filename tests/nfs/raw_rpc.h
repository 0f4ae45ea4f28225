// Raw ONC RPC over a loopback TCP socket, for tests that send what no
// well-behaved client library would: malformed records, pipelined calls
// whose replies are never read, calls from chosen source ports.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "nfs/xdr.h"

namespace pail::nfs::test {

class RawConnection {
 public:
  // source_port 0: any (an unprivileged ephemeral port).
  explicit RawConnection(uint16_t port, uint16_t source_port = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (source_port != 0) {
      int one = 1;
      setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      sockaddr_in local{};
      local.sin_family = AF_INET;
      local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      local.sin_port = htons(source_port);
      bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) == 0;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval timeout{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  bool SendRecord(const std::string& body) {
    std::string framed;
    XdrEncoder(&framed).U32(0x80000000u | static_cast<uint32_t>(body.size()));
    return Send(framed + body);
  }
  // One reply record's body; empty when the server closed the connection.
  std::string ReadRecord() {
    char header[4];
    if (!ReadExactly(header, 4)) return "";
    uint32_t length = XdrDecoder(header, 4).U32() & 0x7fffffffu;
    std::string body(length, '\0');
    if (!ReadExactly(body.data(), length)) return "";
    return body;
  }
  bool ClosedByPeer() {
    char c;
    return recv(fd_, &c, 1, 0) == 0;
  }

 private:
  bool ReadExactly(char* out, size_t n) {
    while (n > 0) {
      ssize_t got = recv(fd_, out, n, 0);
      if (got <= 0) return false;
      out += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }
  int fd_;
  bool connected_ = false;
  bool bound_ = true;

 public:
  int fd() const { return fd_; }
  bool bound() const { return bound_; }
};

inline std::string Call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, const std::string& args = "") {
  std::string out;
  XdrEncoder e(&out);
  for (uint32_t w : {xid, 0u, 2u, prog, vers, proc, 0u, 0u, 0u, 0u}) e.U32(w);
  return out + args;
}

// A call with an AUTH_SYS credential for uid/gid.
inline std::string CallAs(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, uint32_t uid,
                          uint32_t gid, const std::string& args = "") {
  std::string cred;
  XdrEncoder c(&cred);
  c.U32(0);  // stamp
  c.String("raw-test");
  c.U32(uid);
  c.U32(gid);
  c.U32(0);  // no supplementary groups
  std::string out;
  XdrEncoder e(&out);
  for (uint32_t w : {xid, 0u, 2u, prog, vers, proc, 1u}) e.U32(w);
  e.Opaque(cred);
  e.U32(0);
  e.U32(0);
  return out + args;
}

// accept_stat of an accepted reply (or 100 + reject_stat for a denied one).
inline uint32_t ReplyStat(const std::string& reply, uint32_t* xid = nullptr) {
  XdrDecoder d(reply);
  uint32_t x = d.U32();
  if (xid) *xid = x;
  d.U32();
  if (d.U32() != 0) return 100 + d.U32();
  d.U32();
  d.Opaque(400);
  return d.U32();
}


}  // namespace pail::nfs::test
