#include "server/admin_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace pail::server {
namespace {

// An idle admin connection is closed after this long.
constexpr unsigned kConnectionTimeoutSeconds = 30;
// Bytes libmicrohttpd may hold per connection (headers and our reply).
constexpr size_t kConnectionMemoryBytes = 64 * 1024;
constexpr int kListenBacklog = 16;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// "host:port" or "[v6]:port" into host and port.
Status SplitAddress(const std::string& address, std::string* host, std::string* port) {
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return Status::InvalidArgument("admin address '" + address + "' must be [v6]:port");
    }
    *host = address.substr(1, close - 1);
    *port = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return Status::InvalidArgument("admin address '" + address + "' must be host:port");
    }
    *host = address.substr(0, colon);
    *port = address.substr(colon + 1);
  }
  return Status::OK();
}

Result<int> ListenTcp(const std::string& address, std::string* bound) {
  std::string host, port;
  PAIL_RETURN_IF_ERROR(SplitAddress(address, &host, &port));
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* info = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &info) != 0 || info == nullptr) {
    return Status::InvalidArgument("admin address '" + address +
                                   "' needs a numeric IP address and port");
  }
  int fd = socket(info->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
            (info->ai_family != AF_INET6 ||
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) == 0) &&
            bind(fd, info->ai_addr, info->ai_addrlen) == 0 && listen(fd, kListenBacklog) == 0;
  freeaddrinfo(info);
  if (!ok) {
    Status s = Status::IOError(Errno("admin: listening on " + address));
    if (fd >= 0) close(fd);
    return s;
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  char text[INET6_ADDRSTRLEN] = {};
  uint16_t bound_port = 0;
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    bound_port = ntohs(a->sin6_port);
    *bound = "[" + std::string(text) + "]:" + std::to_string(bound_port);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    bound_port = ntohs(a->sin_port);
    *bound = std::string(text) + ":" + std::to_string(bound_port);
  }
  return fd;
}

// Only the owner may connect: the endpoint can make the server act.
Result<int> ListenUnix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("admin unix_socket path is too long: " + path);
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    // A socket left by an earlier run; anything else is not ours to remove.
    if (!S_ISSOCK(st.st_mode)) {
      return Status::InvalidArgument("admin unix_socket " + path + " exists and is not a socket");
    }
    unlink(path.c_str());
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(Errno("admin: socket"));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const mode_t old_umask = umask(0177);
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  umask(old_umask);
  ok = ok && chmod(path.c_str(), 0600) == 0 && listen(fd, kListenBacklog) == 0;
  if (!ok) {
    Status s = Status::IOError(Errno("admin: listening on " + path));
    close(fd);
    return s;
  }
  return fd;
}

}  // namespace

struct AdminServer::Daemon {
  MHD_Daemon* daemon = nullptr;
  int fd = -1;
  ~Daemon() {
    // A running daemon owns its listening socket and closes it on stop.
    if (daemon) {
      MHD_stop_daemon(daemon);
    } else if (fd >= 0) {
      close(fd);
    }
  }
};

namespace {

int kHeadersSeen;  // marks a request whose headers were seen (address only)

MHD_Result Answer(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char*, const char*, size_t* upload_data_size, void** request_state) {
  if (*request_state == nullptr) {
    *request_state = &kHeadersSeen;
    return MHD_YES;
  }
  // No endpoint takes a body: drain any (bounded per call by the
  // connection's memory limit) and answer once it is over.
  if (*upload_data_size != 0) {
    *upload_data_size = 0;
    return MHD_YES;
  }
  auto* server = static_cast<const AdminServer*>(cls);
  AdminReply reply = server->Route(method, url, [connection](const char* name) {
    const char* v = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, name);
    return std::string(v ? v : "");
  });
  MHD_Response* response = MHD_create_response_from_buffer(
      reply.body.size(), reply.body.data(), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type.c_str());
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_Result r = MHD_queue_response(connection, reply.http_status, response);
  MHD_destroy_response(response);
  return r;
}

AdminReply Plain(int status, std::string body) {
  AdminReply r;
  r.http_status = status;
  r.body = std::move(body);
  if (r.body.empty() || r.body.back() != '\n') r.body += '\n';
  return r;
}

}  // namespace

AdminReply AdminServer::Route(const std::string& method, const std::string& path,
                              const std::function<std::string(const char*)>& query) const {
  const bool get = method == "GET" || method == "HEAD";
  const bool json = query("format") == "json";
  if (path == "/metrics" && get) return handlers_.metrics();
  if (path == "/healthz" && get) return handlers_.health();
  if (path == "/status" && get) return handlers_.status(json);
  if (path == "/cost" && get) return handlers_.cost(query("provider"), json);
  if (path == "/flush" && method == "POST") return handlers_.flush();
  if (path == "/metrics" || path == "/healthz" || path == "/status" || path == "/cost" ||
      path == "/flush") {
    return Plain(405, method + " is not allowed on " + path);
  }
  return Plain(404, "no such endpoint: " + path +
                        " (GET /metrics, /healthz, /status, /cost; POST /flush)");
}

Result<std::unique_ptr<AdminServer>> AdminServer::Start(const AdminServerOptions& options,
                                                        AdminHandlers handlers) {
  std::unique_ptr<AdminServer> server(new AdminServer());
  server->handlers_ = std::move(handlers);
  std::vector<std::pair<int, std::string>> sockets;
  auto close_all = [&] {
    for (auto& [fd, name] : sockets) close(fd);
  };
  for (const auto& address : options.addresses) {
    std::string bound;
    auto fd = ListenTcp(address, &bound);
    if (!fd.ok()) {
      close_all();
      return fd.status();
    }
    sockets.emplace_back(*fd, bound);
  }
  if (!options.unix_socket.empty()) {
    auto fd = ListenUnix(options.unix_socket);
    if (!fd.ok()) {
      close_all();
      return fd.status();
    }
    sockets.emplace_back(*fd, "unix:" + options.unix_socket);
    server->unix_socket_ = options.unix_socket;
  }
  for (auto& [fd, name] : sockets) {
    auto daemon = std::make_unique<Daemon>();
    daemon->fd = fd;
    daemon->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL,
        0, nullptr, nullptr, &Answer, server.get(),
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(options.max_connections),
        MHD_OPTION_CONNECTION_TIMEOUT, kConnectionTimeoutSeconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemoryBytes,
        MHD_OPTION_END);
    if (daemon->daemon == nullptr) {
      // The daemons already started own their sockets; close the rest.
      for (auto& [other, n] : sockets) {
        bool owned = false;
        for (auto& d : server->daemons_) owned = owned || d->fd == other;
        if (!owned) close(other);
      }
      daemon->fd = -1;
      return Status::IOError("admin: could not start the HTTP server on " + name);
    }
    server->daemons_.push_back(std::move(daemon));
    server->listening_.push_back(name);
    spdlog::info("admin endpoint on {}", name);
  }
  return server;
}

AdminServer::~AdminServer() {
  daemons_.clear();
  if (!unix_socket_.empty()) unlink(unix_socket_.c_str());
}

}  // namespace pail::server
