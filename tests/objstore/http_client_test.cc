// HttpClient against loopback sockets that misbehave: silence and refusal
// must turn into prompt kRetryable errors, never hangs.
#include "objstore/http_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace pail {
namespace {

// A loopback socket that listens (so connects complete in the kernel's
// backlog) but never reads or answers.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(fd_, 16);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentServer() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A loopback HTTP/1.1 server that answers every request with a 2-byte body
// and keeps connections open, counting the connections it accepts.
class KeepAliveServer {
 public:
  KeepAliveServer() {
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
        accepted_++;
        workers_.emplace_back([conn] { Serve(conn); });
      }
    });
  }
  ~KeepAliveServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    acceptor_.join();
    for (auto& w : workers_) w.join();
  }
  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  // Answers each request (headers end at an empty line; the test sends no
  // bodies) until the client closes the connection.
  static void Serve(int conn) {
    std::string pending;
    char buf[4096];
    while (true) {
      ssize_t n = read(conn, buf, sizeof buf);
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      size_t end;
      while ((end = pending.find("\r\n\r\n")) != std::string::npos) {
        pending.erase(0, end + 4);
        const char kReply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        if (write(conn, kReply, sizeof kReply - 1) < 0) break;
      }
    }
    close(conn);
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(HttpClientTest, SilentServerTimesOutAsRetryable) {
  SilentServer server;
  HttpClientOptions options;
  options.request_timeout_ms = 500;
  options.stall_timeout_sec = 30;
  HttpClient client(options);
  HttpRequest request;
  request.method = "GET";
  request.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/bucket/key?sig=secret";
  auto start = std::chrono::steady_clock::now();
  auto r = client.Send(request);
  EXPECT_LT(SecondsSince(start), 5.0);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsRetryable()) << r.status().ToString();
  // The query (where tokens travel) stays out of the message.
  EXPECT_EQ(r.status().message().find("secret"), std::string::npos) << r.status().message();
}

TEST(HttpClientTest, SilentServerTimesOutDuringUpload) {
  SilentServer server;
  HttpClientOptions options;
  options.request_timeout_ms = 500;
  options.min_transfer_bytes_per_sec = 1 << 30;
  HttpClient client(options);
  std::string body(8 << 20, 'x');
  HttpRequest request;
  request.method = "PUT";
  request.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/bucket/key";
  request.body = body;
  auto start = std::chrono::steady_clock::now();
  auto r = client.Send(request);
  EXPECT_LT(SecondsSince(start), 5.0);
  EXPECT_TRUE(r.status().IsRetryable()) << r.status().ToString();
}

TEST(HttpClientTest, PooledHandlesReuseTheirConnections) {
  KeepAliveServer server;
  {
    HttpClient client;
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/k";
    for (int i = 0; i < 50; ++i) {
      auto r = client.Send({"GET", url, {}, {}, "", ""});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->body, "ok");
    }
    EXPECT_EQ(server.accepted(), 1) << "sequential requests must share one connection";

    constexpr int kThreads = 6;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 30; ++i) {
          if (!client.Send({"GET", url, {}, {}, "", ""}).ok()) failures++;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    // One connection per handle in use at once, never one per request.
    EXPECT_LE(server.accepted(), 1 + kThreads);
  }  // the client closes its connections, letting the server threads end
}

TEST(HttpClientTest, RefusedConnectionIsRetryable) {
  int port;
  {
    SilentServer closed_soon;  // grab a free port, then release it
    port = closed_soon.port();
  }
  HttpClient client;
  HttpRequest request;
  request.method = "HEAD";
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/x";
  auto r = client.Send(request);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsRetryable()) << r.status().ToString();
}

}  // namespace
}  // namespace pail
