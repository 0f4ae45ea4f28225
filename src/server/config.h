// The TOML configuration of a pailfs server.
//
// String values may name environment variables as ${VAR} or $VAR (write $$
// for a literal '$'); an unset variable is an error that names it. Unknown
// sections or keys are errors too, so a typo never silently falls back to a
// default.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "objstore/cloud_options.h"
#include "server/access_policy.h"
#include "util/status.h"

namespace pail::server {

struct Config {
  struct Storage {
    std::string url;
    std::string encryption_password;
    bool allow_unsafe_no_conditional_writes = false;
  } storage;
  struct Cache {
    std::string dir;
    double disk_size_gb = 10;
    double memory_size_gb = 1;
  } cache;
  struct Filesystem {
    std::string compression = "zstd-3";
    uint32_t flush_interval_ms = 1000;
    double max_size_gb = 1024;
  } filesystem;
  AwsOptions aws;
  AzureOptions azure;
  struct Fuse {
    bool enabled = false;
    std::string mountpoint;
    bool allow_other = true;
  } fuse;
  struct Nfs {
    bool enabled = false;
    std::vector<std::string> addresses;
    std::string commit = "async";  // "async" | "durable"
    AccessPolicy access;
  } nfs;
  struct Ninep {
    bool enabled = false;
    std::vector<std::string> addresses;
    std::string unix_socket;
    uint32_t max_msize = 1u << 20;
    // No idle timeout (the kernel client does not reconnect), but a
    // connection that has not attached by then is closed. 0: never.
    std::chrono::seconds attach_timeout{60};
    AccessPolicy access;
  } ninep;
  struct Nbd {
    bool enabled = false;
    std::vector<std::string> addresses;
    std::string unix_socket;
    // allowed_clients, secure_port and the connection limits (NBD has no
    // identities to squash and no idle timeout: a kernel client stays
    // connected, idle, as long as the device is in use).
    AccessPolicy access;
    // A client that has not chosen an export by then is disconnected. 0: never.
    std::chrono::seconds handshake_timeout{60};
  } nbd;
  // The HTTP admin endpoint (metrics, health, flush, status, cost): off
  // unless [servers.admin] exists; it then listens on exactly the addresses
  // and Unix socket given (127.0.0.1:7390 when neither is).
  struct Admin {
    bool enabled = false;
    std::vector<std::string> addresses;
    std::string unix_socket;  // created mode 0600: only this user may connect
    uint32_t max_connections = 8;
  } admin;

  static Result<Config> Load(const std::string& path);
  // `source` names the text in error messages.
  static Result<Config> Parse(std::string_view text, const std::string& source);
};

// Replaces ${VAR} and $VAR with the environment's values. Error messages
// never quote the text: it may hold a secret.
Result<std::string> SubstituteEnv(std::string_view text);

// True when the config file holds a secret written out literally (not as an
// ${ENV} reference): an encryption password or a cloud key.
bool HoldsLiteralSecret(std::string_view config_text);

// A commented starter configuration serving a local directory.
std::string StarterConfig();

}  // namespace pail::server
