#include "nbd_test_env.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace pail::nbd::test {

using nfs::test::Fh;

namespace {

// A port free on ::1, or 0 when this machine has no IPv6 loopback.
uint16_t FreeIpv6Port() {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin6_port);
  }
  close(fd);
  return port;
}

}  // namespace

void NbdServerTest::SetUp() {
  // The ports are free when picked but may be taken by a parallel test
  // before the server binds them: pick again then.
  for (int attempt = 1;; ++attempt) {
    server_ = std::make_unique<nfs::test::ServerProcess>(false);
    nbd_port_ = nfs::test::FreePort();
    nbd_port6_ = FreeIpv6Port();
    unix_socket_ = server_->dir() + "/nbd.sock";
    std::string addresses = "\"127.0.0.1:" + std::to_string(nbd_port_) + "\"";
    if (nbd_port6_ != 0) addresses += ", \"[::1]:" + std::to_string(nbd_port6_) + "\"";
    server_->set_extra_config("[servers.nbd]\naddresses = [" + addresses + "]\nunix_socket = \"" +
                              unix_socket_ + "\"\n");
    ASSERT_TRUE(server_->Start()) << server_->log();
    // NBD starts right after NFS, which Start waited for.
    if (WaitForNbdPort()) break;
    const bool port_taken = server_->log().find("Address already in use") != std::string::npos;
    ASSERT_TRUE(port_taken && attempt < 3) << server_->log();
    server_->Kill();
  }
  ConnectAfterStart();
}

bool NbdServerTest::WaitForNbdPort() {
  for (int i = 0; i < 500; i++) {
    RawClient probe(nbd_port_);
    if (probe.connected()) return true;
    if (server_->log().find("Address already in use") != std::string::npos) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void NbdServerTest::TearDown() {
  nfs_.reset();
  if (server_) {
    bool clean = server_->Stop();
    if (!clean) ADD_FAILURE() << "server did not stop cleanly:\n" << server_->log();
  }
}

void NbdServerTest::StartServer() {
  nfs_.reset();
  ASSERT_TRUE(server_->Start()) << server_->log();
  ConnectAfterStart();
}

void NbdServerTest::ConnectAfterStart() {
  WaitForNbdPort();
  nfs_ = nfs::test::NfsClient::Connect(server_->port());
  ASSERT_TRUE(nfs_);
  auto root = nfs_->Mount("/");
  ASSERT_TRUE(root);
  ASSERT_EQ(nfs_->Lookup(*root, ".nbd", &nbd_dir_fh_), NFS3_OK);
}

void NbdServerTest::MakeExport(const std::string& name, uint64_t size) {
  std::string fh;
  if (nfs_->Lookup(nbd_dir_fh_, name, &fh) != NFS3_OK) {
    ASSERT_EQ(nfs_->Create(nbd_dir_fh_, name, UNCHECKED, 0600, &fh), NFS3_OK);
  }
  SETATTR3args args;
  std::memset(&args, 0, sizeof(args));
  args.object = Fh(fh);
  args.new_attributes.size.set_it = 1;
  args.new_attributes.size.set_size3_u.size = size;
  int status = -1;
  nfs_->nfs().Call<SETATTR3res>(rpc_nfs3_setattr_async, &args,
                                [&](SETATTR3res* res) { status = res->status; });
  ASSERT_EQ(status, NFS3_OK);
}

void NbdServerTest::RemoveExport(const std::string& name) {
  ASSERT_EQ(nfs_->Remove(nbd_dir_fh_, name), NFS3_OK);
}

Handle NbdServerTest::NewHandle(bool structured) {
  Handle h(nbd_create());
  EXPECT_TRUE(h);
  nbd_set_strict_mode(h.get(), 0);
  nbd_add_meta_context(h.get(), LIBNBD_CONTEXT_BASE_ALLOCATION);
  nbd_set_request_structured_replies(h.get(), structured);
  return h;
}

bool NbdServerTest::ConnectTcp(nbd_handle* h) {
  return nbd_connect_tcp(h, "127.0.0.1", std::to_string(nbd_port_).c_str()) == 0;
}

Handle NbdServerTest::Connect(const std::string& name, bool structured) {
  Handle h = NewHandle(structured);
  nbd_set_export_name(h.get(), name.c_str());
  EXPECT_TRUE(ConnectTcp(h.get())) << nbd_get_error();
  return h;
}

RawClient::RawClient(uint16_t port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

RawClient::~RawClient() {
  if (fd_ >= 0) close(fd_);
}

bool RawClient::Send(const std::string& bytes) {
  return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

std::string RawClient::Receive(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) <= 0) break;
    ssize_t r = ::recv(fd_, out.data() + got, n - got, 0);
    if (r <= 0) break;
    got += r;
  }
  out.resize(got);
  return out;
}

bool RawClient::ClosedByServer() {
  char c;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, 10000) <= 0) return false;
  return ::recv(fd_, &c, 1, 0) <= 0;
}

bool RawClient::Negotiate(uint32_t client_flags) {
  std::string greeting = Receive(18);
  if (greeting.size() != 18 || GetU64(greeting, 0) != 0x4e42444d41474943) return false;
  return Send(U32(client_flags));
}

std::pair<uint32_t, std::string> RawClient::ReadOptionReply(uint32_t option) {
  std::string header = Receive(20);
  if (header.size() != 20 || GetU64(header, 0) != 0x0003e889045565a9 ||
      GetU32(header, 8) != option) {
    return {0, "bad reply header"};
  }
  return {GetU32(header, 12), Receive(GetU32(header, 16))};
}

std::pair<uint32_t, std::string> RawClient::Option(uint32_t option, const std::string& data) {
  Send(U64(0x49484156454f5054) + U32(option) + U32(static_cast<uint32_t>(data.size())) + data);
  return ReadOptionReply(option);
}

std::string U16(uint16_t v) { return std::string{char(v >> 8), char(v)}; }
std::string U32(uint32_t v) { return U16(uint16_t(v >> 16)) + U16(uint16_t(v)); }
std::string U64(uint64_t v) { return U32(uint32_t(v >> 32)) + U32(uint32_t(v)); }
uint32_t GetU32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; i++) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}
uint64_t GetU64(const std::string& s, size_t at) {
  return uint64_t{GetU32(s, at)} << 32 | GetU32(s, at + 4);
}

}  // namespace pail::nbd::test
