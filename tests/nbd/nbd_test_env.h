// The NBD server under test: `pailfs run` serving NFS (to make, resize and
// remove export files) and NBD on TCP and a Unix socket, plus small
// helpers over libnbd and a raw socket for what libnbd will not send.
#pragma once

#include <gtest/gtest.h>
#include <libnbd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../nfs/nfs_test_client.h"
#include "../nfs/server_process.h"

namespace pail::nbd::test {

struct HandleCloser {
  void operator()(nbd_handle* h) const { nbd_close(h); }
};
using Handle = std::unique_ptr<nbd_handle, HandleCloser>;

class NbdServerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Starts (or restarts) the server on the same bucket and ports.
  void StartServer();
  // After the server started: waits for the NBD port and mounts over NFS.
  void ConnectAfterStart();
  // True once the NBD port answers; false if it does not within 5 s or the
  // server could not bind it.
  bool WaitForNbdPort();
  void KillServer() { server_->Kill(); }
  bool StopServer() { return server_->Stop(); }

  // /.nbd/NAME with this size (made if missing, resized if present).
  void MakeExport(const std::string& name, uint64_t size);
  void RemoveExport(const std::string& name);

  // A handle connected over TCP to `name`, with base:allocation asked for
  // and libnbd's client-side checks off (so the server's checks are what
  // the tests see). structured=false forces simple replies.
  Handle Connect(const std::string& name, bool structured = true);
  Handle NewHandle(bool structured = true);
  bool ConnectTcp(nbd_handle* h);

  std::unique_ptr<nfs::test::ServerProcess> server_;
  std::unique_ptr<nfs::test::NfsClient> nfs_;
  std::string nbd_dir_fh_;
  uint16_t nbd_port_ = 0;
  uint16_t nbd_port6_ = 0;  // 0: no IPv6 loopback here
  std::string unix_socket_;
};

// A plain socket speaking NBD bytes, for options and requests libnbd
// refuses to send.
class RawClient {
 public:
  explicit RawClient(uint16_t port);
  ~RawClient();
  bool connected() const { return fd_ >= 0; }
  bool Send(const std::string& bytes);
  // Exactly n bytes, or fewer when the server closed first.
  std::string Receive(size_t n);
  // True when the server closed the connection (reads EOF within a while).
  bool ClosedByServer();
  // Greeting read and client flags sent.
  bool Negotiate(uint32_t client_flags);
  // Sends an option and reads one reply header: (type, data).
  std::pair<uint32_t, std::string> Option(uint32_t option, const std::string& data);
  std::pair<uint32_t, std::string> ReadOptionReply(uint32_t option);

 private:
  int fd_ = -1;
};

std::string U16(uint16_t v);
std::string U32(uint32_t v);
std::string U64(uint64_t v);
uint32_t GetU32(const std::string& s, size_t at);
uint64_t GetU64(const std::string& s, size_t at);

}  // namespace pail::nbd::test
