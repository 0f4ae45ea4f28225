// AccessPolicy: who may talk to a network server and as whom, independent of
// the protocol (NFS uses it today; 9P and NBD servers take the same policy).
//
// A server asks, in this order:
//  1. At accept: AdmitConnection() under the connection limits (a per-address
//     cap, a total cap, and a reserve: when the table is full, the connection
//     idle longest gives way to the newcomer).
//  2. On every call: Allows(address, port) (the CIDR allow-list and, with
//     secure_port, a source port below 1024), refusing the call otherwise.
//  3. For every identity a client claims: Squash() (root, all or none mapped
//     to anonuid/anongid).
// Refusals are logged through a RefusalLog, so a client hammering the server
// cannot fill the log.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace pail::server {

// One CIDR block, e.g. 127.0.0.0/8 or ::1/128. IPv4 blocks also match
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d).
class ClientNetwork {
 public:
  static Result<ClientNetwork> Parse(std::string_view cidr);
  // `address` in text form as the socket layer reports it; false for text
  // that is not an address.
  bool Contains(std::string_view address) const;
  std::string ToString() const;

 private:
  bool v4_ = false;
  std::array<uint8_t, 16> bytes_{};  // v4 uses the first 4
  unsigned prefix_ = 0;
};

enum class Squash {
  kRoot,  // uid 0 -> anonuid, gid 0 -> anongid (also among supplementary groups)
  kAll,   // every identity -> anonuid/anongid, no supplementary groups
  kNone,  // identities are taken as the client sends them
};

// "root" | "all" | "none".
Result<Squash> ParseSquash(std::string_view text);
const char* SquashName(Squash squash);

struct ClientIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
};

struct ConnectionLimits {
  // Open connections at once, over all clients.
  size_t max_connections = 512;
  // Open connections from one client address.
  size_t max_connections_per_client = 64;
  // A connection with nothing in flight for this long is closed; clients
  // reconnect transparently. 0 disables.
  std::chrono::seconds idle_timeout{300};
};

struct AccessPolicy {
  // Default: loopback only.
  std::vector<ClientNetwork> allowed_clients = DefaultAllowedClients();
  // Require a source port below 1024 (only root can bind one), as the Linux
  // kernel server's default `secure` does. Off by default: see docs/nfs.md.
  bool secure_port = false;
  Squash squash = Squash::kRoot;
  uint32_t anonuid = 65534;
  uint32_t anongid = 65534;
  ConnectionLimits limits;

  static std::vector<ClientNetwork> DefaultAllowedClients();

  bool AllowsAddress(std::string_view address) const;
  bool AllowsPort(uint16_t port) const { return !secure_port || port < 1024; }
  // Why a call from address:port is refused, or nullopt when it is allowed.
  std::optional<std::string> RefusalReason(std::string_view address, uint16_t port) const;
  // The identity a call acts as. `authenticated` is false for callers that
  // sent no identity (AUTH_NONE): they always act as anonuid/anongid.
  ClientIdentity Squashed(const ClientIdentity& claimed, bool authenticated) const;
  // The allow-list as text, e.g. "127.0.0.0/8 ::1/128".
  std::vector<std::string> AllowedClientStrings() const;
  // One line for the startup log.
  std::string Describe() const;
};

// The connections a server has open, in all and per client address, held
// against ConnectionLimits' two caps (the idle timeout is the server's own
// business). A Unix socket's connections (address "") count only towards
// the total. Not synchronised: the server's lock guards it.
class ConnectionCount {
 public:
  explicit ConnectionCount(const ConnectionLimits& limits) : limits_(limits) {}
  // Counts a new connection from `address`, or says why it is refused.
  std::optional<std::string> Admit(const std::string& address);
  // Why `address` may open no more connections whatever the total (it has
  // its max_connections_per_client open), or nullopt.
  std::optional<std::string> ClientRefusal(const std::string& address) const;
  // All max_connections are open. A server that can close an idle
  // connection (NFS) makes room before it Admits.
  bool Full() const { return open_ >= limits_.max_connections; }
  // Forgets one connection Admit counted.
  void Release(const std::string& address);

 private:
  ConnectionLimits limits_;
  size_t open_ = 0;
  std::map<std::string, size_t> per_client_;
};

// Admits at most one message per interval and counts what it swallowed, so
// refusal logs stay bounded whatever the clients do.
class RefusalLog {
 public:
  explicit RefusalLog(std::chrono::milliseconds interval = std::chrono::seconds(10))
      : interval_(interval) {}
  // Logs `message` (with the number of refusals suppressed since the last
  // line) when the interval has passed; otherwise only counts it.
  void Refused(const std::string& message);

 private:
  std::mutex mu_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  bool logged_once_ = false;
  uint64_t suppressed_ = 0;
};

}  // namespace pail::server
