// A loopback HTTP/1.1 server whose answers a test scripts, for failures the
// real servers cannot be made to produce on demand (throttling, a part
// upload that fails). It reads each request fully (honouring
// "Expect: 100-continue" and Content-Length), records its request line, and
// sends whatever the handler returns for it.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pail::testing {

// The value of header `name` (any case) in a request's header block, or "".
std::string HeaderValue(const std::string& head, const char* name);

struct ScriptedReply {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

class ScriptedServer {
 public:
  // `handler` gets the request line ("GET /bucket/key?x=1 HTTP/1.1") and the
  // whole header block, and may be called from several connection threads
  // at once.
  using Handler = std::function<ScriptedReply(const std::string& request_line,
                                              const std::string& head)>;
  explicit ScriptedServer(Handler handler);
  ~ScriptedServer();

  std::string Endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> RequestLines();

 private:
  void Serve(int conn);

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> request_lines_;
  std::vector<int> connections_;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace pail::testing
