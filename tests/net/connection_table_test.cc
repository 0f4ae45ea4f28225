// ConnectionTable and StopServing: admission under the limits, the
// connection metrics, and a stop that closes and forgets every connection.
#include "net/connection_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace pail::net {
namespace {

// The protocol's line of a metric family, e.g. `pailfs_protocol_connections`.
std::string MetricLine(const std::string& family, const std::string& protocol) {
  metrics::TextWriter out;
  metrics::ProtocolMetrics::WriteAll(out);
  const std::string prefix = family + "{protocol=\"" + protocol + "\"} ";
  const std::string& text = out.text();
  size_t at = text.find("\n" + prefix);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

struct FakeConnection {
  explicit FakeConnection(std::string a) : address_(std::move(a)) {}
  const std::string& address() const { return address_; }
  std::string address_;
};

server::ConnectionLimits Limits(size_t total, size_t per_client) {
  server::ConnectionLimits limits;
  limits.max_connections = total;
  limits.max_connections_per_client = per_client;
  return limits;
}

TEST(ConnectionTableTest, AdmitsWithinTheLimitsAndCountsConnections) {
  ConnectionTable<FakeConnection> table("table-test-admit", Limits(3, 2));
  auto admit = [&](const std::string& address, std::string* refusal) {
    return table.Admit(address, refusal, [&] { return std::make_shared<FakeConnection>(address); });
  };
  std::string refusal;
  auto a1 = admit("10.0.0.1", &refusal);
  auto a2 = admit("10.0.0.1", &refusal);
  ASSERT_TRUE(a1 && a2);
  EXPECT_TRUE(refusal.empty());
  // A third from the same client is over its own limit.
  EXPECT_EQ(admit("10.0.0.1", &refusal), nullptr);
  EXPECT_FALSE(refusal.empty());
  EXPECT_TRUE(table.ClientRefusal("10.0.0.1").has_value());
  refusal.clear();
  auto b = admit("10.0.0.2", &refusal);
  ASSERT_TRUE(b);
  EXPECT_TRUE(table.Full());
  EXPECT_EQ(admit("10.0.0.3", &refusal), nullptr);
  EXPECT_FALSE(refusal.empty());
  EXPECT_EQ(table.Open().size(), 3u);
  EXPECT_EQ(MetricLine("pailfs_protocol_connections", "table-test-admit"),
            "pailfs_protocol_connections{protocol=\"table-test-admit\"} 3");

  // Forgetting releases the client's count and the total, once.
  EXPECT_TRUE(table.Forget(a1.get()));
  EXPECT_FALSE(table.Forget(a1.get()));
  EXPECT_FALSE(table.Full());
  EXPECT_FALSE(table.ClientRefusal("10.0.0.1").has_value());
  refusal.clear();
  EXPECT_TRUE(admit("10.0.0.1", &refusal));
  EXPECT_EQ(MetricLine("pailfs_protocol_connections", "table-test-admit"),
            "pailfs_protocol_connections{protocol=\"table-test-admit\"} 3");
  EXPECT_EQ(MetricLine("pailfs_protocol_connections_accepted_total", "table-test-admit"),
            "pailfs_protocol_connections_accepted_total{protocol=\"table-test-admit\"} 4");

  // Stopped: the open connections are handed over once; nothing more is
  // admitted, and make() is not even called.
  auto open = table.Stop();
  ASSERT_TRUE(open.has_value());
  EXPECT_EQ(open->size(), 3u);
  EXPECT_FALSE(table.Stop().has_value());
  EXPECT_TRUE(table.stopped());
  bool made = false;
  refusal.clear();
  EXPECT_EQ(table.Admit("10.0.0.9", &refusal,
                        [&] {
                          made = true;
                          return std::make_shared<FakeConnection>("10.0.0.9");
                        }),
            nullptr);
  EXPECT_FALSE(made);
  EXPECT_TRUE(refusal.empty());
  table.Clear();
  EXPECT_TRUE(table.Open().empty());
  EXPECT_EQ(MetricLine("pailfs_protocol_connections", "table-test-admit"),
            "pailfs_protocol_connections{protocol=\"table-test-admit\"} 0");
}

// A connection as the servers have them: its socket lives on a strand, and
// closing it (from any thread) forgets it on that strand.
class StrandConnection : public std::enable_shared_from_this<StrandConnection> {
 public:
  StrandConnection(ConnectionTable<StrandConnection>* table, Socket socket)
      : table_(table), socket_(std::move(socket)), strand_(asio::make_strand(socket_.get_executor())) {}
  ~StrandConnection() { destroyed++; }
  const std::string& address() const { return address_; }
  void Start() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->Read(); });
  }
  void Close() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      asio::error_code ignored;
      self->socket_.close(ignored);
      self->table_->Forget(self.get());
    });
  }
  static inline std::atomic<int> destroyed{0};

 private:
  void Read() {
    socket_.async_read_some(asio::buffer(&byte_, 1),
                            asio::bind_executor(strand_, [self = shared_from_this()](
                                                             asio::error_code ec, size_t) {
                              if (!ec) self->Read();
                            }));
  }
  ConnectionTable<StrandConnection>* table_;
  Socket socket_;
  asio::strand<Socket::executor_type> strand_;
  const std::string address_ = "127.0.0.1";
  char byte_ = 0;
};

// StopServing closes every open connection and returns only once each is
// forgotten and destroyed (its read handler, left pending on the closed
// socket, has run); a second call returns at once.
TEST(ConnectionTableTest, StopServingClosesAndDestroysEveryConnection) {
  asio::io_context io;
  asio::thread_pool workers(2);
  IoThreads io_threads;
  Listeners listeners(io, "table-test");
  ConnectionTable<StrandConnection> table("table-test-stop", Limits(16, 16));
  ASSERT_TRUE(listeners.Open({"127.0.0.1:0"}, "").ok());
  std::atomic<int> admitted{0};
  listeners.Start([&](Socket socket, const Peer&) {
    std::string refusal;
    auto connection = table.Admit("127.0.0.1", &refusal, [&] {
      return std::make_shared<StrandConnection>(&table, std::move(socket));
    });
    if (connection) {
      connection->Start();
      admitted++;
    }
  });
  io_threads.Start(io, 2);

  asio::io_context client_io;
  std::vector<asio::ip::tcp::socket> clients;
  const asio::ip::tcp::endpoint server(asio::ip::make_address("127.0.0.1"),
                                       listeners.bound_ports().at(0));
  for (int i = 0; i < 5; i++) {
    clients.emplace_back(client_io);
    clients.back().connect(server);
  }
  for (int i = 0; i < 500 && admitted < 5; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(admitted.load(), 5);
  EXPECT_EQ(MetricLine("pailfs_protocol_connections", "table-test-stop"),
            "pailfs_protocol_connections{protocol=\"table-test-stop\"} 5");

  bool hook_ran = false;
  StopServing(table, listeners, workers, io_threads, [&] {
    hook_ran = true;
    EXPECT_TRUE(table.stopped());
  });
  EXPECT_TRUE(hook_ran);
  EXPECT_TRUE(table.Open().empty());
  EXPECT_EQ(StrandConnection::destroyed.load(), 5);
  EXPECT_EQ(MetricLine("pailfs_protocol_connections", "table-test-stop"),
            "pailfs_protocol_connections{protocol=\"table-test-stop\"} 0");
  // The clients see their connections closed.
  char byte;
  asio::error_code ec;
  clients[0].read_some(asio::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec);
  StopServing(table, listeners, workers, io_threads, [&] { ADD_FAILURE() << "stopped twice"; });
}

}  // namespace
}  // namespace pail::net
