// XDR, record marking, the RPC dispatcher and the port mapper, without
// sockets or a filesystem.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "nfs/portmap_program.h"
#include "nfs/program_numbers.h"
#include "nfs/record_assembler.h"
#include "nfs/rpc.h"
#include "nfs/rpc_dispatcher.h"
#include "nfs/rpc_tcp_server.h"
#include "nfs/xdr.h"

namespace pail::nfs {
namespace {

TEST(XdrTest, RoundTripsScalarsAndOpaques) {
  std::string buf;
  XdrEncoder e(&buf);
  e.U32(0xdeadbeef);
  e.U64(0x0102030405060708ull);
  e.Bool(true);
  e.Opaque("abcde");
  e.FixedOpaque("xy");
  EXPECT_EQ(buf.size(), 4u + 8 + 4 + (4 + 8) + 4);

  XdrDecoder d(buf);
  EXPECT_EQ(d.U32(), 0xdeadbeefu);
  EXPECT_EQ(d.U64(), 0x0102030405060708ull);
  EXPECT_TRUE(d.Bool());
  EXPECT_EQ(d.Opaque(16), "abcde");
  EXPECT_EQ(d.FixedOpaque(2), "xy");
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.remaining(), 0u);
}

TEST(XdrTest, ShortInputLatchesFailure) {
  std::string buf("\0\0\0", 3);
  XdrDecoder d(buf);
  EXPECT_EQ(d.U32(), 0u);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.U32(), 0u);
  EXPECT_FALSE(d.ok());
}

TEST(XdrTest, HostileLengthIsRefusedBeforeCopying) {
  std::string buf;
  XdrEncoder e(&buf);
  e.U32(0xfffffff0u);  // claims ~4 GiB follow
  XdrDecoder d(buf);
  EXPECT_TRUE(d.Opaque(0xffffffffu).empty());
  EXPECT_FALSE(d.ok());

  XdrDecoder capped(buf);
  capped.Opaque(1024);
  EXPECT_FALSE(capped.ok());
}

TEST(XdrTest, BooleanOtherThanZeroOrOneIsMalformed) {
  std::string buf;
  XdrEncoder(&buf).U32(2);
  XdrDecoder d(buf);
  d.Bool();
  EXPECT_FALSE(d.ok());
}

std::string Fragment(std::string_view body, bool last) {
  std::string out;
  XdrEncoder(&out).U32(static_cast<uint32_t>(body.size()) | (last ? kLastFragmentBit : 0));
  out.append(body);
  return out;
}

TEST(RecordAssemblerTest, JoinsFragmentsFedOneByteAtATime) {
  std::string stream = Fragment("hello ", false) + Fragment("", false) + Fragment("world", true) +
                       Fragment("second", true);
  RecordAssembler assembler(1024);
  std::vector<std::string> records;
  for (char c : stream) {
    bool ready = false;
    Result<size_t> used = assembler.Feed(&c, 1, &ready);
    ASSERT_TRUE(used.ok());
    EXPECT_EQ(*used, 1u);
    if (ready) records.push_back(assembler.TakeRecord());
  }
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], "hello world");
  EXPECT_EQ(records[1], "second");
}

TEST(RecordAssemblerTest, StopsAfterEachRecord) {
  std::string stream = Fragment("one", true) + Fragment("two", true);
  RecordAssembler assembler(1024);
  bool ready = false;
  Result<size_t> used = assembler.Feed(stream.data(), stream.size(), &ready);
  ASSERT_TRUE(used.ok());
  EXPECT_TRUE(ready);
  EXPECT_EQ(*used, 7u);
  EXPECT_EQ(assembler.TakeRecord(), "one");
  used = assembler.Feed(stream.data() + 7, stream.size() - 7, &ready);
  ASSERT_TRUE(used.ok());
  EXPECT_TRUE(ready);
  EXPECT_EQ(assembler.TakeRecord(), "two");
}

TEST(RecordAssemblerTest, RefusesOversizedRecordFromHeaderAlone) {
  RecordAssembler assembler(1000);
  std::string header;
  XdrEncoder(&header).U32(kLastFragmentBit | 0x7fffffffu);
  bool ready = false;
  EXPECT_FALSE(assembler.Feed(header.data(), header.size(), &ready).ok());

  // Fragments that are each small but add up past the cap fail too.
  RecordAssembler summed(1000);
  std::string stream = Fragment(std::string(600, 'a'), false) + Fragment(std::string(600, 'b'), true);
  Result<size_t> used = summed.Feed(stream.data(), stream.size(), &ready);
  EXPECT_FALSE(used.ok());
}

// An RPC call header with AUTH_SYS or AUTH_NONE credentials.
std::string CallHeader(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                       bool auth_sys = false, uint32_t rpcvers = kRpcVersion) {
  std::string out;
  XdrEncoder e(&out);
  e.U32(xid);
  e.U32(kMsgCall);
  e.U32(rpcvers);
  e.U32(prog);
  e.U32(vers);
  e.U32(proc);
  if (auth_sys) {
    std::string body;
    XdrEncoder b(&body);
    b.U32(12345);
    b.String("client");
    b.U32(1000);
    b.U32(100);
    b.U32(2);
    b.U32(4);
    b.U32(24);
    e.U32(kAuthSys);
    e.Opaque(body);
  } else {
    e.U32(kAuthNone);
    e.U32(0);
  }
  e.U32(kAuthNone);
  e.U32(0);
  return out;
}

struct Reply {
  uint32_t xid = 0;
  uint32_t reply_stat = 0;
  uint32_t stat = 0;  // accept_stat or reject_stat
  std::string rest;
};

Reply ParseReply(const std::string& framed) {
  XdrDecoder d(framed);
  uint32_t mark = d.U32();
  EXPECT_EQ(mark, kLastFragmentBit | (framed.size() - 4));
  Reply r;
  r.xid = d.U32();
  EXPECT_EQ(d.U32(), kMsgReply);
  r.reply_stat = d.U32();
  if (r.reply_stat == kReplyAccepted) {
    d.U32();
    d.Opaque(kMaxAuthBytes);
  }
  r.stat = d.U32();
  EXPECT_TRUE(d.ok());
  r.rest = framed.substr(framed.size() - d.remaining());
  return r;
}

// Records the credentials of the last call it saw.
class EchoProgram : public RpcProgram {
 public:
  uint32_t program() const override { return 400000; }
  uint32_t min_version() const override { return 2; }
  uint32_t max_version() const override { return 3; }
  AcceptStat Call(const RpcCall& call, const CallContext&, XdrDecoder& args,
                  XdrEncoder& results) override {
    last = call;
    if (call.procedure != 1) return AcceptStat::kProcUnavail;
    uint32_t v = args.U32();
    if (!args.ok()) return AcceptStat::kGarbageArgs;
    results.U32(v + 1);
    return AcceptStat::kSuccess;
  }
  RpcCall last;
};

class DispatcherTest : public ::testing::Test {
 protected:
  // Identities as sent (squash none) unless a test says otherwise.
  static server::AccessPolicy Policy(server::Squash squash = server::Squash::kNone) {
    server::AccessPolicy policy;
    policy.squash = squash;
    policy.anonuid = 65534;
    policy.anongid = 65533;
    return policy;
  }
  explicit DispatcherTest(server::AccessPolicy policy = Policy()) : dispatcher_(policy) {
    dispatcher_.Register(&echo_);
    dispatcher_.Register(&portmap_);
    context_.local_port = 20490;
    context_.peer_address = "127.0.0.1";
    context_.peer_port = 40000;
  }
  Reply Call(const std::string& record) {
    auto framed = dispatcher_.Dispatch(record, context_);
    EXPECT_TRUE(framed.has_value());
    return framed ? ParseReply(*framed) : Reply{};
  }

  EchoProgram echo_;
  PortmapProgram portmap_;
  RpcDispatcher dispatcher_;
  CallContext context_;
};

TEST_F(DispatcherTest, SuccessCarriesResultsAndCredentials) {
  std::string record = CallHeader(7, 400000, 3, 1, /*auth_sys=*/true);
  XdrEncoder(&record).U32(41);
  Reply r = Call(record);
  EXPECT_EQ(r.xid, 7u);
  EXPECT_EQ(r.reply_stat, kReplyAccepted);
  EXPECT_EQ(r.stat, static_cast<uint32_t>(AcceptStat::kSuccess));
  XdrDecoder d(r.rest);
  EXPECT_EQ(d.U32(), 42u);
  EXPECT_EQ(echo_.last.credentials.uid, 1000u);
  EXPECT_EQ(echo_.last.credentials.gid, 100u);
  EXPECT_EQ(echo_.last.credentials.groups, (std::vector<uint32_t>{4, 24}));
}

TEST_F(DispatcherTest, AuthNoneGetsAnonymousIds) {
  std::string record = CallHeader(8, 400000, 3, 1);
  XdrEncoder(&record).U32(1);
  Call(record);
  EXPECT_EQ(echo_.last.credentials.uid, 65534u);
  EXPECT_EQ(echo_.last.credentials.gid, 65533u);
}

TEST_F(DispatcherTest, RefusedClientsAreDeniedEverythingButNull) {
  context_.peer_address = "192.0.2.7";
  std::string record = CallHeader(9, 400000, 3, 1, /*auth_sys=*/true);
  XdrEncoder(&record).U32(1);
  echo_.last = RpcCall{};
  EXPECT_EQ(Call(record).reply_stat, kReplyDenied);
  EXPECT_EQ(echo_.last.xid, 0u);  // the program never saw it
  EXPECT_EQ(Call(CallHeader(10, 400000, 3, 0)).reply_stat, kReplyAccepted);
}

TEST_F(DispatcherTest, CallShapeComesFromTheProgram) {
  // Unknown programs and undecodable records announce nothing.
  EXPECT_EQ(dispatcher_.Examine(CallHeader(1, 999, 1, 0)).reply_bytes_bound, 0u);
  EXPECT_FALSE(dispatcher_.Examine(CallHeader(1, 999, 1, 1)).quick);
  EXPECT_EQ(dispatcher_.Examine("junk").reply_bytes_bound, 0u);
  EXPECT_FALSE(dispatcher_.Examine("junk").quick);
  // NULL is quick in every program; other calls only if the program says so.
  EXPECT_TRUE(dispatcher_.Examine(CallHeader(2, 400000, 3, 0)).quick);
  EXPECT_FALSE(dispatcher_.Examine(CallHeader(3, 400000, 3, 1)).quick);
}

TEST_F(DispatcherTest, RpcErrors) {
  EXPECT_EQ(Call(CallHeader(1, 999, 1, 0)).stat, static_cast<uint32_t>(AcceptStat::kProgUnavail));

  Reply mismatch = Call(CallHeader(2, 400000, 9, 0));
  EXPECT_EQ(mismatch.stat, static_cast<uint32_t>(AcceptStat::kProgMismatch));
  XdrDecoder range(mismatch.rest);
  EXPECT_EQ(range.U32(), 2u);
  EXPECT_EQ(range.U32(), 3u);

  EXPECT_EQ(Call(CallHeader(3, 400000, 2, 77)).stat, static_cast<uint32_t>(AcceptStat::kProcUnavail));
  // Procedure 1 wants a word of arguments; none given.
  EXPECT_EQ(Call(CallHeader(4, 400000, 2, 1)).stat, static_cast<uint32_t>(AcceptStat::kGarbageArgs));

  Reply rpcvers = Call(CallHeader(5, 400000, 2, 1, false, /*rpcvers=*/3));
  EXPECT_EQ(rpcvers.reply_stat, kReplyDenied);
  EXPECT_EQ(rpcvers.stat, kRejectRpcMismatch);

  // A call cut off inside its credentials.
  std::string truncated = CallHeader(6, 400000, 2, 1, true).substr(0, 30);
  Reply garbage = Call(truncated);
  EXPECT_EQ(garbage.xid, 6u);
  EXPECT_EQ(garbage.stat, static_cast<uint32_t>(AcceptStat::kGarbageArgs));
}

TEST_F(DispatcherTest, UnsupportedCredentialFlavorIsAuthError) {
  std::string record;
  XdrEncoder e(&record);
  for (uint32_t w : {9u, kMsgCall, kRpcVersion, 400000u, 2u, 1u}) e.U32(w);
  e.U32(6);  // RPCSEC_GSS
  e.Opaque("xxxx");
  e.U32(0);
  e.U32(0);
  Reply r = Call(record);
  EXPECT_EQ(r.reply_stat, kReplyDenied);
  EXPECT_EQ(r.stat, kRejectAuthError);
  EXPECT_EQ(XdrDecoder(r.rest).U32(), static_cast<uint32_t>(AuthStat::kTooWeak));
}

TEST_F(DispatcherTest, NonCallsGetNoReply) {
  EXPECT_FALSE(dispatcher_.Dispatch("abc", context_).has_value());
  std::string reply_message;
  XdrEncoder e(&reply_message);
  e.U32(1);
  e.U32(kMsgReply);
  EXPECT_FALSE(dispatcher_.Dispatch(reply_message, context_).has_value());
}

TEST_F(DispatcherTest, PortmapGetPortAnswersThisPortForNfsAndMount) {
  auto getport = [&](uint32_t prog, uint32_t vers, uint32_t proto) {
    std::string record = CallHeader(10, kPortmapProgram, kPortmapVersion, 3);
    XdrEncoder e(&record);
    e.U32(prog);
    e.U32(vers);
    e.U32(proto);
    e.U32(0);
    Reply r = Call(record);
    EXPECT_EQ(r.stat, 0u);
    return XdrDecoder(r.rest).U32();
  };
  EXPECT_EQ(getport(kNfsProgram, 3, kIpProtoTcp), 20490u);
  EXPECT_EQ(getport(kMountProgram, 3, kIpProtoTcp), 20490u);
  EXPECT_EQ(getport(kNfsProgram, 4, kIpProtoTcp), 0u);
  EXPECT_EQ(getport(kNfsProgram, 3, 17), 0u);  // no UDP
  EXPECT_EQ(getport(100021, 4, kIpProtoTcp), 0u);  // no lock manager
}

// Sends one record-marked call to 127.0.0.1 or ::1 and returns the reply body.
std::string RoundTrip(int family, uint16_t port, const std::string& call) {
  int fd = socket(family, SOCK_STREAM, 0);
  sockaddr_storage addr{};
  socklen_t len;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    a->sin6_addr = in6addr_loopback;
    len = sizeof(*a);
  }
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) {
    std::string framed;
    XdrEncoder(&framed).U32(kLastFragmentBit | static_cast<uint32_t>(call.size()));
    framed += call;
    if (send(fd, framed.data(), framed.size(), 0) == static_cast<ssize_t>(framed.size())) {
      char buf[4096];
      ssize_t n;
      while (reply.size() < 4 || reply.size() < 4 + (XdrDecoder(reply).U32() & ~kLastFragmentBit)) {
        n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        reply.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  return reply.size() > 4 ? reply.substr(4) : "";
}

TEST(RpcTcpServerTest, ServesEveryAddressIpv4AndIpv6) {
  EchoProgram echo;
  RpcDispatcher dispatcher{server::AccessPolicy{}};
  dispatcher.Register(&echo);
  RpcTcpServerOptions options;
  options.addresses = {"127.0.0.1:0", "[::1]:0"};
  RpcTcpServer server(dispatcher, options);
  ASSERT_TRUE(server.Start().ok());
  std::vector<uint16_t> ports = server.bound_ports();
  ASSERT_EQ(ports.size(), 2u);
  std::string call = CallHeader(5, 400000, 2, 1);
  XdrEncoder(&call).U32(99);
  for (auto [family, port] : {std::pair{AF_INET, ports[0]}, std::pair{AF_INET6, ports[1]}}) {
    std::string reply = RoundTrip(family, port, call);
    ASSERT_GE(reply.size(), 28u) << family;
    XdrDecoder d(reply);
    EXPECT_EQ(d.U32(), 5u);  // xid
    d.U32();
    EXPECT_EQ(d.U32(), kReplyAccepted);
    d.U32();
    d.Opaque(kMaxAuthBytes);
    EXPECT_EQ(d.U32(), 0u);   // SUCCESS
    EXPECT_EQ(d.U32(), 100u);  // 99 + 1
  }
  server.Stop();
  server.Stop();  // idempotent
}

TEST(RpcTcpServerTest, StartFailsOnBadOrBusyAddress) {
  EchoProgram echo;
  RpcDispatcher dispatcher{server::AccessPolicy{}};
  dispatcher.Register(&echo);
  RpcTcpServerOptions bad_options;
  bad_options.addresses = {"not-an-ip:1"};
  RpcTcpServer bad(dispatcher, bad_options);
  EXPECT_FALSE(bad.Start().ok());

  RpcTcpServerOptions first_options;
  first_options.addresses = {"127.0.0.1:0"};
  RpcTcpServer first(dispatcher, first_options);
  ASSERT_TRUE(first.Start().ok());
  std::string busy = "127.0.0.1:" + std::to_string(first.bound_ports()[0]);
  RpcTcpServerOptions second_options;
  second_options.addresses = {busy};
  RpcTcpServer second(dispatcher, second_options);
  EXPECT_FALSE(second.Start().ok());
}

// Procedure 1 waits until `needed` calls are inside it at once (or 10 s
// pass) and answers 1 if they met, 0 if not.
class RendezvousProgram : public RpcProgram {
 public:
  explicit RendezvousProgram(int needed) : needed_(needed) {}
  uint32_t program() const override { return 400001; }
  uint32_t min_version() const override { return 1; }
  uint32_t max_version() const override { return 1; }
  AcceptStat Call(const RpcCall& call, const CallContext&, XdrDecoder&, XdrEncoder& results) override {
    if (call.procedure != 1) return AcceptStat::kProcUnavail;
    std::unique_lock<std::mutex> lock(mu_);
    ++inside_;
    cv_.notify_all();
    bool met = cv_.wait_for(lock, std::chrono::seconds(10), [&] { return inside_ >= needed_; });
    results.U32(met ? 1 : 0);
    return AcceptStat::kSuccess;
  }

 private:
  const int needed_;
  std::mutex mu_;
  std::condition_variable cv_;
  int inside_ = 0;
};

// Connects to 127.0.0.1:port; -1 on failure.
int ConnectLoopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `count` rendezvous calls on `fd` in one write (xids first_xid...).
bool SendRendezvousCalls(int fd, uint32_t first_xid, int count) {
  std::string framed;
  for (int i = 0; i < count; ++i) {
    std::string call = CallHeader(first_xid + static_cast<uint32_t>(i), 400001, 1, 1);
    XdrEncoder(&framed).U32(kLastFragmentBit | static_cast<uint32_t>(call.size()));
    framed += call;
  }
  return send(fd, framed.data(), framed.size(), 0) == static_cast<ssize_t>(framed.size());
}

// Reads `count` replies from `fd`; how many said the rendezvous was met.
int RendezvousReplies(int fd, int count) {
  std::string buf;
  int met = 0;
  for (int got = 0; got < count;) {
    if (buf.size() >= 4) {
      size_t len = XdrDecoder(buf).U32() & ~kLastFragmentBit;
      if (buf.size() >= 4 + len) {
        Reply r = ParseReply(buf.substr(0, 4 + len));
        if (r.stat == 0 && XdrDecoder(r.rest).U32() == 1) ++met;
        buf.erase(0, 4 + len);
        ++got;
        continue;
      }
    }
    char chunk[4096];
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  return met;
}

// The calls a connection pipelines run side by side (up to half the
// workers), not one after another.
TEST(RpcTcpServerTest, PipelinedCallsOfOneConnectionRunAtOnce) {
  RendezvousProgram rendezvous(4);
  RpcDispatcher dispatcher{server::AccessPolicy{}};
  dispatcher.Register(&rendezvous);
  RpcTcpServerOptions options;
  options.addresses = {"127.0.0.1:0"};
  options.worker_threads = 8;  // so 4 calls of one connection may run at once
  RpcTcpServer server(dispatcher, options);
  ASSERT_TRUE(server.Start().ok());
  int fd = ConnectLoopback(server.bound_ports()[0]);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendRendezvousCalls(fd, 1, 4));
  EXPECT_EQ(RendezvousReplies(fd, 4), 4);
  close(fd);
  server.Stop();
}

// While calls of several connections are inside the filesystem (here:
// waiting for each other), the server goes on reading and starting the
// calls of the others: as many at once as there are workers.
TEST(RpcTcpServerTest, CallsOfManyConnectionsRunAtOnce) {
  constexpr int kClients = 8;
  RendezvousProgram rendezvous(kClients);
  RpcDispatcher dispatcher{server::AccessPolicy{}};
  dispatcher.Register(&rendezvous);
  RpcTcpServerOptions options;
  options.addresses = {"127.0.0.1:0"};
  options.worker_threads = kClients;
  RpcTcpServer server(dispatcher, options);
  ASSERT_TRUE(server.Start().ok());
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    int fd = ConnectLoopback(server.bound_ports()[0]);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    ASSERT_TRUE(SendRendezvousCalls(fd, static_cast<uint32_t>(i) + 1, 1));
  }
  int met = 0;
  for (int fd : fds) {
    met += RendezvousReplies(fd, 1);
    close(fd);
  }
  EXPECT_EQ(met, kClients);
  server.Stop();
}

// Procedure 1 waits until Open() (or 10 s) and answers 1 if it was opened;
// procedure 2 answers 2 at once and is quick.
class GateProgram : public RpcProgram {
 public:
  uint32_t program() const override { return 400002; }
  uint32_t min_version() const override { return 1; }
  uint32_t max_version() const override { return 1; }
  AcceptStat Call(const RpcCall& call, const CallContext&, XdrDecoder&, XdrEncoder& results) override {
    if (call.procedure == 2) {
      results.U32(2);
      return AcceptStat::kSuccess;
    }
    if (call.procedure != 1) return AcceptStat::kProcUnavail;
    std::unique_lock<std::mutex> lock(mu_);
    bool opened = cv_.wait_for(lock, std::chrono::seconds(10), [&] { return open_; });
    results.U32(opened ? 1 : 0);
    return AcceptStat::kSuccess;
  }
  bool Quick(const RpcCall& call, XdrDecoder&) const override { return call.procedure == 2; }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// The one worker is inside a call that waits; another client's quick call
// is answered on the I/O thread meanwhile. (With every call on the workers
// it would wait the full 10 s.)
TEST(RpcTcpServerTest, QuickCallsAreAnsweredWhileEveryWorkerWaits) {
  GateProgram gate;
  RpcDispatcher dispatcher{server::AccessPolicy{}};
  dispatcher.Register(&gate);
  RpcTcpServerOptions options;
  options.addresses = {"127.0.0.1:0"};
  options.worker_threads = 1;
  RpcTcpServer server(dispatcher, options);
  ASSERT_TRUE(server.Start().ok());
  uint16_t port = server.bound_ports()[0];
  int waiting = ConnectLoopback(port);
  ASSERT_GE(waiting, 0);
  std::string call = CallHeader(1, 400002, 1, 1);
  std::string framed;
  XdrEncoder(&framed).U32(kLastFragmentBit | static_cast<uint32_t>(call.size()));
  framed += call;
  ASSERT_EQ(send(waiting, framed.data(), framed.size(), 0), static_cast<ssize_t>(framed.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the worker takes it

  auto start = std::chrono::steady_clock::now();
  std::string body = RoundTrip(AF_INET, port, CallHeader(2, 400002, 1, 2));
  std::string reply;
  XdrEncoder(&reply).U32(kLastFragmentBit | static_cast<uint32_t>(body.size()));
  Reply quick = ParseReply(reply + body);
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(quick.stat, 0u);
  EXPECT_EQ(XdrDecoder(quick.rest).U32(), 2u);
  EXPECT_LT(waited, std::chrono::seconds(5));

  gate.Open();
  EXPECT_EQ(RendezvousReplies(waiting, 1), 1);
  close(waiting);
  server.Stop();
}

}  // namespace
}  // namespace pail::nfs
