// ServerProcess: the NFS server under test, as a child process on a file://
// bucket in a temporary directory, so tests can stop it, SIGKILL it and
// start it again on the same bucket.
//
// It runs `pailfs run -c CONFIG` (PAIL_PAILFS_BINARY) with a generated
// config: file:// bucket, cache and [servers.nfs] on a free loopback port.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace pail::nfs::test {

class ServerProcess {
 public:
  // A fresh temporary directory for bucket, cache and config.
  // `nfs_options`: lines added to [servers.nfs]. The default trusts client
  // uids (squash = "none"), since most tests act as several users including
  // root; the security tests pass their own. `extra_config`: whole sections
  // appended to the config (e.g. "[filesystem]\nflush_interval_ms = 60000\n").
  explicit ServerProcess(bool durable_commit, std::string nfs_options = "squash = \"none\"\n",
                         std::string extra_config = "");
  ~ServerProcess();

  // Starts the server on a free port and waits until it accepts connections.
  bool Start();
  // SIGTERM and wait for a clean exit; true when it exited with status 0.
  bool Stop();
  // SIGKILL: no flush, no goodbye.
  void Kill();

  uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  bool WaitForPort();

  bool durable_commit_;
  std::string nfs_options_;
  std::string extra_config_;
  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace pail::nfs::test
