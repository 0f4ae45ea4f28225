// ServerProcess: the NFS server under test, as a child process on a file://
// bucket in a temporary directory, so tests can stop it, SIGKILL it and
// start it again on the same bucket.
//
// It runs `pailfs run -c CONFIG` (PAIL_PAILFS_BINARY) with a generated
// config: file:// bucket, cache and a [servers.*] section (NFS by default;
// the 9P tests pass their own) on a free loopback port.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace pail::nfs::test {

// A loopback TCP port that was free a moment ago.
uint16_t FreePort();

class ServerProcess {
 public:
  // A fresh temporary directory for bucket, cache and config.
  // `nfs_options`: lines added to [servers.nfs]. The default trusts client
  // uids (squash = "none"), since most tests act as several users including
  // root; the security tests pass their own. `extra_config`: whole sections
  // appended to the config (e.g. "[filesystem]\nflush_interval_ms = 60000\n").
  explicit ServerProcess(bool durable_commit, std::string nfs_options = "squash = \"none\"\n",
                         std::string extra_config = "");
  // `servers_section(address)` is the config's server section(s), listening
  // on "127.0.0.1:PORT".
  using ServersSection = std::function<std::string(const std::string& address)>;
  explicit ServerProcess(ServersSection servers_section);
  ~ServerProcess();

  // Starts the server on a free port and waits until it accepts connections.
  bool Start();
  // SIGTERM and wait for a clean exit; true when it exited with status 0.
  bool Stop();
  // SIGKILL: no flush, no goodbye.
  void Kill();

  // Sections appended after the server section(s), for sections that name
  // paths under dir(); replaces what an earlier call set.
  void set_extra_config(std::string toml) { extra_config_ = std::move(toml); }

  uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  bool WaitForPort();

  ServersSection servers_section_;
  std::string extra_config_;
  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace pail::nfs::test
