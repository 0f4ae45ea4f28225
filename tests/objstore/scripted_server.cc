#include "scripted_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace pail::testing {
namespace {

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string HeaderValue(const std::string& head, const char* name) {
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string::npos) {
    pos += 2;
    size_t colon = head.find(':', pos);
    size_t eol = head.find("\r\n", pos);
    if (colon == std::string::npos || eol == std::string::npos || colon > eol) continue;
    if (strncasecmp(head.c_str() + pos, name, colon - pos) == 0 && std::string(name).size() == colon - pos) {
      size_t v = colon + 1;
      while (v < eol && head[v] == ' ') ++v;
      return head.substr(v, eol - v);
    }
  }
  return "";
}

ScriptedServer::ScriptedServer(Handler handler)
    : handler_(std::move(handler)) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  listen(fd_, 64);
  socklen_t len = sizeof addr;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] {
    while (true) {
      int conn = accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      std::lock_guard<std::mutex> lock(mu_);
      connections_.push_back(conn);
      workers_.emplace_back([this, conn] { Serve(conn); });
    }
  });
}

ScriptedServer::~ScriptedServer() {
  shutdown(fd_, SHUT_RDWR);
  close(fd_);
  acceptor_.join();
  // Connections are closed only after their threads end, so no thread can
  // touch a descriptor number that was already reused.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int conn : connections_) shutdown(conn, SHUT_RDWR);
  }
  for (auto& w : workers_) w.join();
  for (int conn : connections_) close(conn);
}

std::vector<std::string> ScriptedServer::RequestLines() {
  std::lock_guard<std::mutex> lock(mu_);
  return request_lines_;
}

void ScriptedServer::Serve(int conn) {
  std::string buffer;
  char chunk[65536];
  auto fill = [&]() {
    ssize_t n = read(conn, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  };
  while (true) {
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return;
    }
    std::string head = buffer.substr(0, end + 2);
    buffer.erase(0, end + 4);
    std::string line = head.substr(0, head.find("\r\n"));
    size_t body_length = std::strtoull(HeaderValue(head, "Content-Length").c_str(), nullptr, 10);
    if (!HeaderValue(head, "Expect").empty() && !WriteAll(conn, "HTTP/1.1 100 Continue\r\n\r\n")) {
      return;
    }
    while (buffer.size() < body_length) {
      if (!fill()) return;
    }
    buffer.erase(0, body_length);
    {
      std::lock_guard<std::mutex> lock(mu_);
      request_lines_.push_back(line);
    }
    ScriptedReply reply = handler_(line, head);
    bool is_head = line.rfind("HEAD ", 0) == 0;
    std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " Scripted\r\n";
    for (const auto& [name, value] : reply.headers) out += name + ": " + value + "\r\n";
    out += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n\r\n";
    if (!is_head) out += reply.body;
    if (!WriteAll(conn, out)) return;
  }
}

}  // namespace pail::testing
