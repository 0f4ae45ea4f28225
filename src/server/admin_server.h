// The HTTP/1.1 admin endpoint (libmicrohttpd): Prometheus metrics, health,
// and the requests behind `pailfs flush`, `pailfs status` and `pailfs cost`.
//
//   GET  /metrics                 text exposition format 0.0.4
//   GET  /healthz                 200 "ok" while serving and not fenced,
//                                 else 503 with a one-line reason
//   GET  /status[?format=json]    a short summary
//   GET  /cost?provider=P[&format=json]
//   POST /flush                   200 once everything is in the bucket,
//                                 500 with the reason otherwise
//
// It listens on exactly the configured TCP addresses and Unix socket, one
// thread per connection with at most `max_connections` of them, and every
// connection times out when idle.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace pail::server {

struct AdminReply {
  int http_status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
};

struct AdminHandlers {
  std::function<AdminReply()> metrics;
  std::function<AdminReply()> health;
  std::function<AdminReply(bool json)> status;
  std::function<AdminReply(const std::string& provider, bool json)> cost;
  std::function<AdminReply()> flush;
};

struct AdminServerOptions {
  std::vector<std::string> addresses;  // "host:port", "[v6]:port"; port 0 picks one
  std::string unix_socket;
  unsigned max_connections = 8;
};

class AdminServer {
 public:
  static Result<std::unique_ptr<AdminServer>> Start(const AdminServerOptions& options,
                                                    AdminHandlers handlers);
  ~AdminServer();

  // What it listens on, with ports resolved ("127.0.0.1:41234", "unix:/path").
  const std::vector<std::string>& listening() const { return listening_; }

  AdminReply Route(const std::string& method, const std::string& path,
                   const std::function<std::string(const char*)>& query) const;

 private:
  AdminServer() = default;
  struct Daemon;
  AdminHandlers handlers_;
  std::vector<std::unique_ptr<Daemon>> daemons_;
  std::vector<std::string> listening_;
  std::string unix_socket_;
};

}  // namespace pail::server
