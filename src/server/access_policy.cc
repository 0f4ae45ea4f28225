#include "server/access_policy.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

#include <spdlog/spdlog.h>

namespace pail::server {

namespace {

// Parses an IPv4 or IPv6 address; IPv4-mapped IPv6 addresses come back as
// IPv4.
bool ParseAddress(std::string_view text, bool* v4, std::array<uint8_t, 16>* bytes) {
  std::string s(text);
  // Link-local addresses may carry a zone ("fe80::1%eth0"); it is not part
  // of the address.
  if (size_t zone = s.find('%'); zone != std::string::npos) s.resize(zone);
  bytes->fill(0);
  if (inet_pton(AF_INET, s.c_str(), bytes->data()) == 1) {
    *v4 = true;
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), bytes->data()) != 1) return false;
  static constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(bytes->data(), kMappedPrefix, 12) == 0) {
    std::memmove(bytes->data(), bytes->data() + 12, 4);
    std::memset(bytes->data() + 4, 0, 12);
    *v4 = true;
    return true;
  }
  *v4 = false;
  return true;
}

}  // namespace

Result<ClientNetwork> ClientNetwork::Parse(std::string_view cidr) {
  ClientNetwork n;
  std::string_view address = cidr;
  std::optional<unsigned> prefix;
  if (size_t slash = cidr.find('/'); slash != std::string_view::npos) {
    address = cidr.substr(0, slash);
    std::string_view digits = cidr.substr(slash + 1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return Status::InvalidArgument("'" + std::string(cidr) + "': bad prefix length");
    }
    prefix = value;
  }
  if (!ParseAddress(address, &n.v4_, &n.bytes_) || address.find('%') != std::string_view::npos) {
    return Status::InvalidArgument("'" + std::string(cidr) +
                                   "' is not an address or CIDR block (e.g. 192.168.1.0/24, ::1/128)");
  }
  unsigned bits = n.v4_ ? 32 : 128;
  n.prefix_ = prefix.value_or(bits);
  if (n.prefix_ > bits) {
    return Status::InvalidArgument("'" + std::string(cidr) + "': prefix longer than " +
                                   std::to_string(bits) + " bits");
  }
  // Host bits set below the prefix would make the block mean something other
  // than it says; refuse rather than guess.
  for (unsigned bit = n.prefix_; bit < bits; bit++) {
    if (n.bytes_[bit / 8] & (0x80 >> (bit % 8))) {
      return Status::InvalidArgument("'" + std::string(cidr) +
                                     "': address has bits set past the prefix length");
    }
  }
  return n;
}

bool ClientNetwork::Contains(std::string_view address) const {
  bool v4 = false;
  std::array<uint8_t, 16> bytes;
  if (!ParseAddress(address, &v4, &bytes) || v4 != v4_) return false;
  for (unsigned bit = 0; bit < prefix_; bit++) {
    uint8_t mask = 0x80 >> (bit % 8);
    if ((bytes[bit / 8] & mask) != (bytes_[bit / 8] & mask)) return false;
  }
  return true;
}

std::string ClientNetwork::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(v4_ ? AF_INET : AF_INET6, bytes_.data(), text, sizeof(text));
  return std::string(text) + "/" + std::to_string(prefix_);
}

Result<Squash> ParseSquash(std::string_view text) {
  if (text == "root") return Squash::kRoot;
  if (text == "all") return Squash::kAll;
  if (text == "none") return Squash::kNone;
  return Status::InvalidArgument("squash must be \"root\", \"all\" or \"none\"");
}

const char* SquashName(Squash squash) {
  switch (squash) {
    case Squash::kRoot: return "root";
    case Squash::kAll: return "all";
    case Squash::kNone: return "none";
  }
  return "?";
}

std::vector<ClientNetwork> AccessPolicy::DefaultAllowedClients() {
  return {*ClientNetwork::Parse("127.0.0.0/8"), *ClientNetwork::Parse("::1/128")};
}

bool AccessPolicy::AllowsAddress(std::string_view address) const {
  for (const ClientNetwork& network : allowed_clients) {
    if (network.Contains(address)) return true;
  }
  return false;
}

std::optional<std::string> AccessPolicy::RefusalReason(std::string_view address,
                                                       uint16_t port) const {
  if (!AllowsAddress(address)) return "address not in allowed_clients";
  if (!AllowsPort(port)) return "source port " + std::to_string(port) + " is not below 1024 (secure_port)";
  return std::nullopt;
}

ClientIdentity AccessPolicy::Squashed(const ClientIdentity& claimed, bool authenticated) const {
  ClientIdentity anonymous{anonuid, anongid, {}};
  if (!authenticated || squash == Squash::kAll) return anonymous;
  ClientIdentity out = claimed;
  if (squash == Squash::kRoot) {
    if (out.uid == 0) out.uid = anonuid;
    if (out.gid == 0) out.gid = anongid;
    for (uint32_t& g : out.groups) {
      if (g == 0) g = anongid;
    }
  }
  return out;
}

std::vector<std::string> AccessPolicy::AllowedClientStrings() const {
  std::vector<std::string> out;
  for (const ClientNetwork& network : allowed_clients) out.push_back(network.ToString());
  return out;
}

std::string AccessPolicy::Describe() const {
  std::string clients;
  for (const std::string& c : AllowedClientStrings()) clients += (clients.empty() ? "" : " ") + c;
  return "clients [" + clients + "], squash=" + SquashName(squash) + " (anon " +
         std::to_string(anonuid) + ":" + std::to_string(anongid) + "), secure_port=" +
         (secure_port ? "true" : "false") + ", max " + std::to_string(limits.max_connections) +
         " connections (" + std::to_string(limits.max_connections_per_client) +
         " per address), idle timeout " + std::to_string(limits.idle_timeout.count()) + " s";
}

void RefusalLog::Refused(const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  auto now = std::chrono::steady_clock::now();
  if (logged_once_ && now - last_ < interval_) {
    suppressed_++;
    return;
  }
  if (suppressed_ > 0) {
    spdlog::warn("{} ({} similar refusals not logged)", message, suppressed_);
  } else {
    spdlog::warn("{}", message);
  }
  logged_once_ = true;
  last_ = now;
  suppressed_ = 0;
}

std::optional<std::string> ConnectionCount::Admit(const std::string& address) {
  if (Full()) return std::to_string(open_) + " connections open";
  if (std::optional<std::string> refusal = ClientRefusal(address)) return refusal;
  if (!address.empty()) per_client_[address]++;
  open_++;
  return std::nullopt;
}

std::optional<std::string> ConnectionCount::ClientRefusal(const std::string& address) const {
  auto it = per_client_.find(address);
  if (address.empty() || it == per_client_.end() ||
      it->second < limits_.max_connections_per_client) {
    return std::nullopt;
  }
  return std::to_string(it->second) + " connections open from " + address +
         " (max_connections_per_client)";
}

void ConnectionCount::Release(const std::string& address) {
  if (open_ > 0) open_--;
  auto it = per_client_.find(address);
  if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
}

}  // namespace pail::server
