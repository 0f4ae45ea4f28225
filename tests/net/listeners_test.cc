// Listen addresses and the listening sockets the protocol servers share.
#include "net/listeners.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "net/io_threads.h"

// GCC says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PAIL_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PAIL_UNDER_SANITIZER 1
#endif
#endif
#ifndef PAIL_UNDER_SANITIZER
#define PAIL_UNDER_SANITIZER 0
#endif

namespace pail::net {
namespace {

TEST(ListenAddressTest, ParsesIpv4AndBracketedIpv6) {
  std::string host;
  uint16_t port = 0;
  ASSERT_TRUE(ParseListenAddress("127.0.0.1:2049", &host, &port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 2049);
  ASSERT_TRUE(ParseListenAddress("[::1]:0", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  for (const char* bad : {"127.0.0.1", "::1:2049", "[::1]2049", "localhost:2049", "1.2.3.4:65536",
                          "1.2.3.4:", "1.2.3.4:x", "[::1:2049"}) {
    EXPECT_FALSE(ParseListenAddress(bad, &host, &port).ok()) << bad;
  }
}

class ListenersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pailfs-listeners-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Connects to 127.0.0.1:port (or the Unix socket at `path`); the fd.
  static int ConnectTcp(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
  static int ConnectUnix(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }

  std::filesystem::path dir_;
  asio::io_context io_;
};

TEST_F(ListenersTest, AcceptsTcpAndUnixConnectionsWithTheirOrigin) {
  const std::string path = (dir_ / "s.sock").string();
  Listeners listeners(io_, "test");
  ASSERT_TRUE(listeners.Open({"127.0.0.1:0", "[::1]:0"}, path).ok());
  std::vector<uint16_t> ports = listeners.bound_ports();
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_NE(ports[0], 0);
  EXPECT_NE(listeners.Describe().find("127.0.0.1:0 (port " + std::to_string(ports[0]) + ")"),
            std::string::npos);
  EXPECT_NE(listeners.Describe().find(path), std::string::npos);

  std::vector<Peer> peers;
  std::vector<Socket> sockets;
  listeners.Start([&](Socket socket, const Peer& peer) {
    peers.push_back(peer);
    sockets.push_back(std::move(socket));
  });
  int tcp = ConnectTcp(ports[0]);
  int local = ConnectUnix(path);
  while (peers.size() < 2) io_.run_one();
  int tcp_seen = peers[0].tcp() ? 0 : 1;
  EXPECT_EQ(peers[tcp_seen].address, "127.0.0.1");
  EXPECT_NE(peers[tcp_seen].port, 0);
  EXPECT_FALSE(peers[1 - tcp_seen].tcp());
  // The accepted sockets carry bytes both ways.
  ASSERT_EQ(::write(tcp, "x", 1), 1);
  char c = 0;
  asio::read(sockets[tcp_seen], asio::buffer(&c, 1));
  EXPECT_EQ(c, 'x');
  ::close(tcp);
  ::close(local);

  listeners.Close();
  io_.run();  // the pending accepts end
  listeners.RemoveUnixSocket();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(ListenersTest, ReplacesAStaleSocketButNeverAnotherFile) {
  const std::string path = (dir_ / "s.sock").string();
  {
    Listeners first(io_, "test");
    ASSERT_TRUE(first.Open({}, path).ok());
    // Not removed: what a crashed server leaves behind.
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  Listeners second(io_, "test");
  EXPECT_TRUE(second.Open({}, path).ok());

  const std::string file = (dir_ / "precious").string();
  std::ofstream(file) << "data";
  Listeners third(io_, "test");
  Status s = third.Open({}, file);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("not a socket"), std::string::npos) << s.ToString();
  std::ifstream in(file);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "data");
}

TEST_F(ListenersTest, OpensAllOrNothing) {
  Listeners taken(io_, "test");
  ASSERT_TRUE(taken.Open({"127.0.0.1:0"}, "").ok());
  const uint16_t busy = taken.bound_ports()[0];
  Listeners listeners(io_, "test");
  Status s = listeners.Open({"127.0.0.1:0", "127.0.0.1:" + std::to_string(busy)}, "");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(listeners.bound_ports().empty());
  EXPECT_FALSE(listeners.Open({"localhost:1"}, "").ok());
}

// Servers run their io_context on several threads: connections arriving on
// three listeners at once are each handed over exactly once, one at a time,
// and Close from a thread outside the io_context stops every listener. (Under
// TSan this is also the check that the accepting state needs no lock.)
TEST_F(ListenersTest, ServesSeveralIoThreadsAndClosesFromAnyThread) {
  const std::string path = (dir_ / "s.sock").string();
  Listeners listeners(io_, "test");
  ASSERT_TRUE(listeners.Open({"127.0.0.1:0", "127.0.0.1:0"}, path).ok());
  const std::vector<uint16_t> ports = listeners.bound_ports();
  std::atomic<int> inside{0}, overlapped{0}, accepted{0};
  std::vector<Socket> sockets;  // only touched inside the callback
  listeners.Start([&](Socket socket, const Peer&) {
    if (inside.fetch_add(1) != 0) overlapped++;
    sockets.push_back(std::move(socket));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    inside--;
    accepted++;
  });
  IoThreads io_threads;
  io_threads.Start(io_, 4);

  constexpr int kPerListener = 40;
  std::vector<std::thread> clients;
  std::vector<std::vector<int>> fds(3);
  for (int l = 0; l < 3; l++) {
    clients.emplace_back([&, l] {
      for (int i = 0; i < kPerListener; i++) {
        fds[l].push_back(l < 2 ? ConnectTcp(ports[l]) : ConnectUnix(path));
      }
    });
  }
  for (auto& t : clients) t.join();
  for (int i = 0; i < 1000 && accepted.load() < 3 * kPerListener; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(accepted.load(), 3 * kPerListener);
  EXPECT_EQ(overlapped.load(), 0) << "the callback ran on two threads at once";

  listeners.Close();
  // Closed on the strand, soon: a new connection is refused.
  bool refused = false;
  for (int i = 0; i < 500 && !refused; i++) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(ports[0]);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    refused = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0;
    ::close(fd);
    if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(refused);
  io_threads.Drain();
  // (A probe that connected before the close took effect may have been
  // accepted too, so no count is checked here.)
  for (auto& list : fds) {
    for (int fd : list) ::close(fd);
  }
  listeners.RemoveUnixSocket();
}

TEST_F(ListenersTest, OutOfDescriptorsPausesAcceptingInsteadOfSpinning) {
#if PAIL_UNDER_SANITIZER
  // The sanitizers' runtimes open files of their own (to read the memory
  // map, to symbolize) and report false errors when none is left.
  GTEST_SKIP() << "needs every descriptor taken, which the sanitizer runtime cannot survive";
#endif
  Listeners listeners(io_, "test");
  ASSERT_TRUE(listeners.Open({"127.0.0.1:0"}, "").ok());
  std::vector<Socket> sockets;
  listeners.Start([&](Socket socket, const Peer&) { sockets.push_back(std::move(socket)); });
  std::vector<int> clients;
  for (int i = 0; i < 3; i++) clients.push_back(ConnectTcp(listeners.bound_ports()[0]));
  // No descriptor above the highest one in use: every accept fails (EMFILE).
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  int highest = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    highest = std::max(highest, std::stoi(entry.path().filename().string()));
  }
  rlimit low = before;
  low.rlim_cur = static_cast<rlim_t>(highest + 1);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;  // the free numbers below the limit
  for (int fd; (fd = ::dup(0)) >= 0;) fillers.push_back(fd);
  const size_t handlers = io_.run_for(std::chrono::milliseconds(500));
  for (int fd : fillers) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &before), 0);
  EXPECT_TRUE(sockets.empty());
  // A retry every kAcceptRetryDelay (a failure and a timer each), not one
  // per loop of the reactor.
  EXPECT_LT(handlers, 40u) << "accept retried without pause";
  while (sockets.size() < clients.size()) io_.run_one();
  for (int fd : clients) ::close(fd);
  listeners.Close();
  io_.run();
}

}  // namespace
}  // namespace pail::net
