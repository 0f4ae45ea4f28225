#include "server/config.h"

#include <chrono>
#include <cstdlib>
#include <regex>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

namespace pail::server {
namespace {

bool IsVarChar(char c, bool first) {
  return c == '_' || std::isalpha(static_cast<unsigned char>(c)) ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// Reads one table into typed fields, refusing keys it does not know.
class TableReader {
 public:
  TableReader(const toml::table* table, std::string section, const std::string& source)
      : table_(table), section_(std::move(section)), source_(source) {}

  Status String(const char* key, std::string* out) {
    seen_.insert(key);
    auto node = Node(key);
    if (!node) return Status::OK();
    auto v = node->value<std::string>();
    if (!v) return TypeError(key, "a string");
    auto substituted = SubstituteEnv(*v);
    if (!substituted.ok()) return substituted.status().WithContext(Where(key));
    *out = *substituted;
    return Status::OK();
  }
  Status Bool(const char* key, bool* out) {
    seen_.insert(key);
    auto node = Node(key);
    if (!node) return Status::OK();
    auto v = node->value<bool>();
    if (!v) return TypeError(key, "true or false");
    *out = *v;
    return Status::OK();
  }
  Status Number(const char* key, double* out, double min, double max) {
    seen_.insert(key);
    auto node = Node(key);
    if (!node) return Status::OK();
    auto v = node->value<double>();
    if (!v) return TypeError(key, "a number");
    if (*v < min || *v > max) {
      return Status::InvalidArgument(Where(key) + " must be between " + std::to_string(min) +
                                     " and " + std::to_string(max));
    }
    *out = *v;
    return Status::OK();
  }
  Status Unsigned(const char* key, uint32_t* out, uint32_t min, uint32_t max) {
    double v = *out;
    PAIL_RETURN_IF_ERROR(Number(key, &v, min, max));
    if (v != static_cast<uint32_t>(v)) return TypeError(key, "a whole number");
    *out = static_cast<uint32_t>(v);
    return Status::OK();
  }
  Status Seconds(const char* key, std::chrono::seconds* out, uint32_t max) {
    uint32_t v = static_cast<uint32_t>(out->count());
    PAIL_RETURN_IF_ERROR(Unsigned(key, &v, 0, max));
    *out = std::chrono::seconds(v);
    return Status::OK();
  }
  Status Count(const char* key, size_t* out, uint32_t min, uint32_t max) {
    uint32_t v = static_cast<uint32_t>(*out);
    PAIL_RETURN_IF_ERROR(Unsigned(key, &v, min, max));
    *out = v;
    return Status::OK();
  }
  // A bad value's error names the key only: values may be secrets.
  Status Invalid(const char* key, const Status& why) const {
    return Status::InvalidArgument(Where(key) + ": " + why.message());
  }
  Status StringList(const char* key, std::vector<std::string>* out) {
    seen_.insert(key);
    auto node = Node(key);
    if (!node) return Status::OK();
    auto* array = node->as_array();
    if (!array) return TypeError(key, "a list of strings");
    out->clear();
    for (auto& item : *array) {
      auto v = item.value<std::string>();
      if (!v) return TypeError(key, "a list of strings");
      PAIL_ASSIGN_OR_RETURN(std::string s, SubstituteEnv(*v));
      out->push_back(std::move(s));
    }
    return Status::OK();
  }
  // Call last: any key not read above is a mistake.
  Status RejectUnknown() {
    if (!table_) return Status::OK();
    for (auto& [k, v] : *table_) {
      if (!seen_.count(std::string(k.str()))) {
        return Status::InvalidArgument(source_ + ": unknown key '" + std::string(k.str()) +
                                       "' in [" + section_ + "]");
      }
    }
    return Status::OK();
  }

 private:
  const toml::node* Node(const char* key) { return table_ ? table_->get(key) : nullptr; }
  std::string Where(const char* key) const { return source_ + ": [" + section_ + "] " + key; }
  Status TypeError(const char* key, const char* want) const {
    return Status::InvalidArgument(Where(key) + " must be " + want);
  }

  const toml::table* table_;
  std::string section_;
  const std::string& source_;
  std::set<std::string> seen_;
};

// Who may connect and how many at once: every network server section has it.
Status ReadClientRules(TableReader& r, AccessPolicy* policy) {
  std::vector<std::string> clients;
  PAIL_RETURN_IF_ERROR(r.StringList("allowed_clients", &clients));
  if (!clients.empty()) {
    policy->allowed_clients.clear();
    for (const std::string& text : clients) {
      Result<ClientNetwork> network = ClientNetwork::Parse(text);
      if (!network.ok()) return r.Invalid("allowed_clients", network.status());
      policy->allowed_clients.push_back(*network);
    }
  }
  PAIL_RETURN_IF_ERROR(r.Bool("secure_port", &policy->secure_port));
  ConnectionLimits& limits = policy->limits;
  PAIL_RETURN_IF_ERROR(r.Count("max_connections", &limits.max_connections, 1, 65536));
  PAIL_RETURN_IF_ERROR(r.Count("max_connections_per_client", &limits.max_connections_per_client,
                               1, 65536));
  return Status::OK();
}

// The client rules plus the identities callers act as, for servers that
// take identities from the wire.
Status ReadAccessPolicy(TableReader& r, AccessPolicy* policy) {
  PAIL_RETURN_IF_ERROR(ReadClientRules(r, policy));
  std::string squash = SquashName(policy->squash);
  PAIL_RETURN_IF_ERROR(r.String("squash", &squash));
  Result<Squash> parsed = ParseSquash(squash);
  if (!parsed.ok()) return r.Invalid("squash", parsed.status());
  policy->squash = *parsed;
  PAIL_RETURN_IF_ERROR(r.Unsigned("anonuid", &policy->anonuid, 0, UINT32_MAX));
  PAIL_RETURN_IF_ERROR(r.Unsigned("anongid", &policy->anongid, 0, UINT32_MAX));
  return Status::OK();
}

}  // namespace

Result<std::string> SubstituteEnv(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {
      out.push_back('$');
      ++i;
      continue;
    }
    std::string name;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos) {
        // Not quoting the text: it may be a password.
        return Status::InvalidArgument("unterminated ${ (a '}' is missing; write $$ for a literal $)");
      }
      name = std::string(text.substr(i + 2, close - i - 2));
      i = close;
    } else {
      size_t j = i + 1;
      while (j < text.size() && IsVarChar(text[j], j == i + 1)) ++j;
      name = std::string(text.substr(i + 1, j - i - 1));
      i = j - 1;
    }
    if (name.empty() || !IsVarChar(name[0], true)) {
      return Status::InvalidArgument("'$' must start a variable name (write $$ for a literal $)");
    }
    const char* value = std::getenv(name.c_str());
    if (!value) {
      // The name is quoted only when it is the whole value: in a longer
      // value it may be part of a password that holds a '$'.
      bool whole = text == "$" + name || text == "${" + name + "}";
      return Status::InvalidArgument(
          (whole ? "environment variable " + name + " is not set"
                 : std::string("an environment variable it refers to is not set")) +
          " (write $$ for a literal $)");
    }
    out += value;
  }
  return out;
}

Result<Config> Config::Parse(std::string_view text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << source << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
        << e.description();
    return Status::InvalidArgument(msg.str());
  }
  static const std::set<std::string> kSections = {"storage", "cache", "filesystem",
                                                  "aws",     "azure", "servers"};
  for (auto& [k, v] : root) {
    if (!kSections.count(std::string(k.str()))) {
      return Status::InvalidArgument(source + ": unknown section [" + std::string(k.str()) + "]");
    }
  }
  auto table = [&](const char* name) { return root[name].as_table(); };
  Config c;
  {
    TableReader r(table("storage"), "storage", source);
    PAIL_RETURN_IF_ERROR(r.String("url", &c.storage.url));
    PAIL_RETURN_IF_ERROR(r.String("encryption_password", &c.storage.encryption_password));
    PAIL_RETURN_IF_ERROR(r.Bool("allow_unsafe_no_conditional_writes",
                                &c.storage.allow_unsafe_no_conditional_writes));
    PAIL_RETURN_IF_ERROR(r.RejectUnknown());
  }
  {
    TableReader r(table("cache"), "cache", source);
    PAIL_RETURN_IF_ERROR(r.String("dir", &c.cache.dir));
    PAIL_RETURN_IF_ERROR(r.Number("disk_size_gb", &c.cache.disk_size_gb, 0.01, 1 << 20));
    PAIL_RETURN_IF_ERROR(r.Number("memory_size_gb", &c.cache.memory_size_gb, 0.001, 1 << 16));
    PAIL_RETURN_IF_ERROR(r.RejectUnknown());
  }
  {
    TableReader r(table("filesystem"), "filesystem", source);
    PAIL_RETURN_IF_ERROR(r.String("compression", &c.filesystem.compression));
    PAIL_RETURN_IF_ERROR(r.Unsigned("flush_interval_ms", &c.filesystem.flush_interval_ms, 1, 3600000));
    PAIL_RETURN_IF_ERROR(r.Number("max_size_gb", &c.filesystem.max_size_gb, 0.001, 8e9));
    PAIL_RETURN_IF_ERROR(r.RejectUnknown());
  }
  {
    TableReader r(table("aws"), "aws", source);
    PAIL_RETURN_IF_ERROR(r.String("access_key_id", &c.aws.access_key_id));
    PAIL_RETURN_IF_ERROR(r.String("secret_access_key", &c.aws.secret_access_key));
    PAIL_RETURN_IF_ERROR(r.String("region", &c.aws.region));
    PAIL_RETURN_IF_ERROR(r.String("endpoint", &c.aws.endpoint));
    PAIL_RETURN_IF_ERROR(r.Bool("allow_http", &c.aws.allow_http));
    PAIL_RETURN_IF_ERROR(r.Bool("path_style", &c.aws.path_style));
    PAIL_RETURN_IF_ERROR(r.RejectUnknown());
  }
  {
    TableReader r(table("azure"), "azure", source);
    PAIL_RETURN_IF_ERROR(r.String("storage_account_name", &c.azure.storage_account_name));
    PAIL_RETURN_IF_ERROR(r.String("storage_account_key", &c.azure.storage_account_key));
    PAIL_RETURN_IF_ERROR(r.String("endpoint", &c.azure.endpoint));
    PAIL_RETURN_IF_ERROR(r.Bool("allow_http", &c.azure.allow_http));
    PAIL_RETURN_IF_ERROR(r.RejectUnknown());
  }
  if (auto* servers = table("servers")) {
    for (auto& [k, v] : *servers) {
      std::string name(k.str());
      if (name != "fuse" && name != "nfs" && name != "ninep" && name != "nbd" &&
          name != "admin") {
        return Status::InvalidArgument(source + ": unknown server [servers." + name +
                                       "] (known: fuse, nfs, ninep, nbd, admin)");
      }
    }
    if (auto* fuse = (*servers)["fuse"].as_table()) {
      TableReader r(fuse, "servers.fuse", source);
      c.fuse.enabled = true;
      PAIL_RETURN_IF_ERROR(r.String("mountpoint", &c.fuse.mountpoint));
      PAIL_RETURN_IF_ERROR(r.Bool("allow_other", &c.fuse.allow_other));
      PAIL_RETURN_IF_ERROR(r.RejectUnknown());
      if (c.fuse.mountpoint.empty()) {
        return Status::InvalidArgument(source + ": [servers.fuse] needs mountpoint");
      }
    }
    if (auto* nfs = (*servers)["nfs"].as_table()) {
      TableReader r(nfs, "servers.nfs", source);
      c.nfs.enabled = true;
      PAIL_RETURN_IF_ERROR(r.StringList("addresses", &c.nfs.addresses));
      PAIL_RETURN_IF_ERROR(r.String("commit", &c.nfs.commit));
      PAIL_RETURN_IF_ERROR(ReadAccessPolicy(r, &c.nfs.access));
      PAIL_RETURN_IF_ERROR(
          r.Seconds("idle_timeout_seconds", &c.nfs.access.limits.idle_timeout, 86400));
      PAIL_RETURN_IF_ERROR(r.RejectUnknown());
      if (c.nfs.addresses.empty()) c.nfs.addresses = {"127.0.0.1:2049"};
      if (c.nfs.commit != "async" && c.nfs.commit != "durable") {
        return Status::InvalidArgument(source + ": [servers.nfs] commit must be \"async\" or \"durable\"");
      }
    }
    if (auto* ninep = (*servers)["ninep"].as_table()) {
      TableReader r(ninep, "servers.ninep", source);
      c.ninep.enabled = true;
      PAIL_RETURN_IF_ERROR(r.StringList("addresses", &c.ninep.addresses));
      PAIL_RETURN_IF_ERROR(r.String("unix_socket", &c.ninep.unix_socket));
      PAIL_RETURN_IF_ERROR(r.Unsigned("max_msize", &c.ninep.max_msize, 4096, 16u << 20));
      PAIL_RETURN_IF_ERROR(ReadAccessPolicy(r, &c.ninep.access));
      PAIL_RETURN_IF_ERROR(r.Seconds("attach_timeout_seconds", &c.ninep.attach_timeout, 86400));
      PAIL_RETURN_IF_ERROR(r.RejectUnknown());
      if (c.ninep.addresses.empty() && c.ninep.unix_socket.empty()) {
        c.ninep.addresses = {"127.0.0.1:5564"};
      }
    }
  }
  if (auto* nbd = table("servers") ? (*table("servers"))["nbd"].as_table() : nullptr) {
    TableReader r(nbd, "servers.nbd", source);
    c.nbd.enabled = true;
    PAIL_RETURN_IF_ERROR(r.StringList("addresses", &c.nbd.addresses));
    PAIL_RETURN_IF_ERROR(r.String("unix_socket", &c.nbd.unix_socket));
    PAIL_RETURN_IF_ERROR(ReadClientRules(r, &c.nbd.access));
    PAIL_RETURN_IF_ERROR(r.Seconds("handshake_timeout_seconds", &c.nbd.handshake_timeout, 86400));
    PAIL_RETURN_IF_ERROR(r.RejectUnknown());
    // Neither given: the standard port on loopback.
    if (c.nbd.addresses.empty() && c.nbd.unix_socket.empty()) c.nbd.addresses = {"127.0.0.1:10809"};
  }
  if (auto* servers = table("servers"); servers && (*servers)["admin"].as_table()) {
    TableReader r((*servers)["admin"].as_table(), "servers.admin", source);
    c.admin.enabled = true;
    PAIL_RETURN_IF_ERROR(r.StringList("addresses", &c.admin.addresses));
    PAIL_RETURN_IF_ERROR(r.String("unix_socket", &c.admin.unix_socket));
    PAIL_RETURN_IF_ERROR(r.Unsigned("max_connections", &c.admin.max_connections, 1, 1024));
    PAIL_RETURN_IF_ERROR(r.RejectUnknown());
    if (c.admin.addresses.empty() && c.admin.unix_socket.empty()) {
      c.admin.addresses = {"127.0.0.1:7390"};
    }
  }
  if (c.storage.url.empty()) return Status::InvalidArgument(source + ": [storage] url is required");
  if (c.storage.encryption_password.empty()) {
    return Status::InvalidArgument(source + ": [storage] encryption_password is required");
  }
  if (c.cache.dir.empty()) return Status::InvalidArgument(source + ": [cache] dir is required");
  return c;
}

Result<Config> Config::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status::InvalidArgument("cannot read config file '" + path +
                                   "'; create one with `pailfs init " + path + "`");
  }
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

bool HoldsLiteralSecret(std::string_view config_text) {
  toml::table root;
  try {
    root = toml::parse(config_text);
  } catch (const toml::parse_error&) {
    return false;
  }
  auto literal = [&](const char* section, const char* key) {
    auto v = root[section][key].value<std::string>();
    // Anything but a whole ${VAR} / $VAR reference holds secret bytes.
    static const std::regex kReference(R"(\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)");
    return v && !v->empty() && !std::regex_match(*v, kReference);
  };
  return literal("storage", "encryption_password") || literal("aws", "secret_access_key") ||
         literal("azure", "storage_account_key");
}

std::string StarterConfig() {
  return R"(# pailfs configuration. Values may use ${ENV_VAR} or $ENV_VAR.

[storage]
# Where everything durable lives:
#   file:///path            a local directory (the embedded default)
#   s3://bucket/prefix      Amazon S3 or an S3-compatible store (see [aws])
#   azure://container/pre   Azure Blob Storage (see [azure])
url = "file:///var/lib/pailfs/bucket"
# Derives the key that wraps the bucket's data key (Argon2id). Losing it
# loses the data; change it with `pailfs change-password -c FILE`.
encryption_password = "${PAILFS_PASSWORD}"

[cache]
# Local cache only: may be emptied at any time (nothing durable lives here).
dir = "/var/cache/pailfs"
disk_size_gb = 10.0
# Three quarters for metadata blocks, a quarter for file data just uploaded (read back from it).
memory_size_gb = 1.0

[filesystem]
# "zstd-N" (1..22) or "lz4".
compression = "zstd-3"
# Writes are acknowledged from memory and reach the bucket within this window;
# fsync (and NFS COMMIT in durable mode) waits for the bucket.
flush_interval_ms = 1000
max_size_gb = 1024

# [aws]
# access_key_id = "${AWS_ACCESS_KEY_ID}"
# secret_access_key = "${AWS_SECRET_ACCESS_KEY}"
# region = "us-east-1"
# endpoint = "http://127.0.0.1:7480"   # S3-compatible stores
# allow_http = false
# path_style = false

# [azure]
# storage_account_name = "..."
# storage_account_key = "${AZURE_STORAGE_KEY}"
# endpoint = "https://ACCOUNT.blob.core.windows.net"

# [servers.fuse]
# mountpoint = "/mnt/pailfs"
# allow_other = true

[servers.nfs]
# NFSv3, MOUNT and the port mapper's GETPORT, all on one port.
addresses = ["127.0.0.1:2049"]
# "async": WRITE is stable from memory, the flush window bounds a crash's loss.
# "durable": COMMIT and every directory change return only once in the bucket.
commit = "async"
# Who may connect (CIDR blocks); anything else is refused. See docs/nfs.md.
allowed_clients = ["127.0.0.0/8", "::1/128"]
# "root": uid/gid 0 act as anonuid/anongid; "all": everyone does; "none":
# trust the uids clients send (only for clients whose root you trust).
squash = "root"
anonuid = 65534
anongid = 65534
# true: only clients on ports below 1024 (root on their host), as the kernel
# server's "secure"; unprivileged libnfs/qemu clients then cannot connect.
secure_port = false

[servers.ninep]
# 9P2000.L (Linux: mount -t 9p -o trans=tcp,port=5564,version=9p2000.L,access=user ...).
# Tfsync returns only once the data is in the bucket.
addresses = ["127.0.0.1:5564"]
# unix_socket = "/run/pailfs/9p.sock"
# max_msize = 1048576
# The same client policy as NFS (allowed_clients, squash, anonuid, anongid,
# secure_port, max_connections); the defaults serve loopback and squash root.
# A connection that has not attached within this is closed (0: never).
# attach_timeout_seconds = 60

# [servers.nbd]
# Every regular file in /.nbd/ is an NBD export of that name:
#   truncate -s 50G /mnt/pailfs/.nbd/disk1; nbd-client HOST 10809 /dev/nbd0 -N disk1
# addresses = ["127.0.0.1:10809"]
# unix_socket = "/run/pailfs/nbd.sock"
# Who may connect over TCP (CIDR blocks); NBD has no authentication.
# allowed_clients = ["127.0.0.0/8", "::1/128"]
# A client that has not chosen an export within this is disconnected (0: never).
# handshake_timeout_seconds = 60

[servers.admin]
# GET /metrics (Prometheus), GET /healthz, and what `pailfs flush`, `pailfs
# status` and `pailfs cost` ask for. It can make the server act: keep it on
# loopback or a Unix socket (created mode 0600).
addresses = ["127.0.0.1:7390"]
# unix_socket = "/run/pailfs/admin.sock"
)";
}

}  // namespace pail::server
