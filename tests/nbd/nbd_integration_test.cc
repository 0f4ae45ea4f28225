// The NBD server through libnbd (and a raw socket for what libnbd will not
// send) against `pailfs run`: every option and command, their errors,
// simple and structured replies, block status on a sparse export, several
// connections with one FLUSH, and FLUSH durability across SIGKILL.
#include <errno.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <chrono>

#include "nbd_test_env.h"

namespace pail::nbd::test {
namespace {

constexpr uint64_t kMiB = 1 << 20;

std::string Pattern(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

std::string Pread(nbd_handle* h, size_t n, uint64_t offset, int* error = nullptr) {
  std::string buf(n, '\x55');
  int r = nbd_pread(h, buf.data(), n, offset, 0);
  if (error) *error = r == 0 ? 0 : nbd_get_errno();
  EXPECT_TRUE(r == 0 || error) << nbd_get_error();
  return buf;
}

void Pwrite(nbd_handle* h, const std::string& data, uint64_t offset, uint32_t flags = 0) {
  ASSERT_EQ(nbd_pwrite(h, data.data(), data.size(), offset, flags), 0) << nbd_get_error();
}

struct Extent {
  uint64_t length;
  uint32_t flags;
  bool operator==(const Extent& o) const { return length == o.length && flags == o.flags; }
};

std::vector<Extent> BlockStatus(nbd_handle* h, uint64_t count, uint64_t offset,
                                uint32_t flags = 0) {
  std::vector<Extent> out;
  nbd_extent_callback cb{};
  cb.user_data = &out;
  cb.callback = [](void* user, const char* context, uint64_t, uint32_t* entries, size_t n,
                   int*) -> int {
    if (std::strcmp(context, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0) return 0;
    auto* v = static_cast<std::vector<Extent>*>(user);
    for (size_t i = 0; i + 1 < n; i += 2) v->push_back({entries[i], entries[i + 1]});
    return 0;
  };
  EXPECT_EQ(nbd_block_status(h, count, offset, cb, flags), 0) << nbd_get_error();
  return out;
}

constexpr uint32_t kHoleZero = LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO;

TEST_F(NbdServerTest, GoAdvertisesSizeFlagsAndBlockSizes) {
  MakeExport("disk1", 64 * kMiB);
  Handle h = Connect("disk1");
  EXPECT_EQ(nbd_get_size(h.get()), int64_t(64 * kMiB));
  EXPECT_EQ(nbd_get_structured_replies_negotiated(h.get()), 1);
  EXPECT_EQ(nbd_is_read_only(h.get()), 0);
  EXPECT_EQ(nbd_can_flush(h.get()), 1);
  EXPECT_EQ(nbd_can_fua(h.get()), 1);
  EXPECT_EQ(nbd_can_trim(h.get()), 1);
  EXPECT_EQ(nbd_can_zero(h.get()), 1);
  EXPECT_EQ(nbd_can_fast_zero(h.get()), 1);
  EXPECT_EQ(nbd_can_df(h.get()), 1);
  EXPECT_EQ(nbd_can_cache(h.get()), 1);
  EXPECT_EQ(nbd_can_multi_conn(h.get()), 1);
  EXPECT_EQ(nbd_can_meta_context(h.get(), LIBNBD_CONTEXT_BASE_ALLOCATION), 1);
  EXPECT_EQ(nbd_get_block_size(h.get(), LIBNBD_SIZE_MINIMUM), 1);
  EXPECT_EQ(nbd_get_block_size(h.get(), LIBNBD_SIZE_PREFERRED), 4096);
  EXPECT_EQ(nbd_get_block_size(h.get(), LIBNBD_SIZE_MAXIMUM), 32 * int64_t(kMiB));
  EXPECT_EQ(nbd_shutdown(h.get(), 0), 0);
}

TEST_F(NbdServerTest, ListInfoAndUnknownExports) {
  MakeExport("a", kMiB);
  MakeExport("b", 2 * kMiB);
  Handle h = NewHandle();
  nbd_set_opt_mode(h.get(), true);
  nbd_set_full_info(h.get(), true);
  ASSERT_TRUE(ConnectTcp(h.get())) << nbd_get_error();
  std::set<std::string> names;
  nbd_list_callback list{};
  list.user_data = &names;
  list.callback = [](void* user, const char* name, const char*) -> int {
    static_cast<std::set<std::string>*>(user)->insert(name);
    return 0;
  };
  ASSERT_EQ(nbd_opt_list(h.get(), list), 2) << nbd_get_error();
  EXPECT_EQ(names, (std::set<std::string>{"a", "b"}));
  nbd_set_export_name(h.get(), "b");
  ASSERT_EQ(nbd_opt_info(h.get()), 0) << nbd_get_error();
  EXPECT_EQ(nbd_get_size(h.get()), int64_t(2 * kMiB));
  char* canonical = nbd_get_canonical_export_name(h.get());
  ASSERT_TRUE(canonical);
  EXPECT_STREQ(canonical, "b");
  free(canonical);
  // LIST_META_CONTEXT on a named export.
  std::vector<std::string> contexts;
  nbd_context_callback ctx{};
  ctx.user_data = &contexts;
  ctx.callback = [](void* user, const char* name) -> int {
    static_cast<std::vector<std::string>*>(user)->push_back(name);
    return 0;
  };
  EXPECT_EQ(nbd_opt_list_meta_context(h.get(), ctx), 1) << nbd_get_error();
  EXPECT_EQ(contexts, std::vector<std::string>{LIBNBD_CONTEXT_BASE_ALLOCATION});
  nbd_set_export_name(h.get(), "missing");
  EXPECT_EQ(nbd_opt_info(h.get()), -1);
  EXPECT_EQ(nbd_opt_go(h.get()), -1);
  nbd_set_export_name(h.get(), "../a");
  EXPECT_EQ(nbd_opt_go(h.get()), -1);
  nbd_set_export_name(h.get(), "a");
  ASSERT_EQ(nbd_opt_go(h.get()), 0) << nbd_get_error();
  EXPECT_EQ(nbd_get_size(h.get()), int64_t(kMiB));
}

TEST_F(NbdServerTest, AbortEndsNegotiation) {
  Handle h = NewHandle();
  nbd_set_opt_mode(h.get(), true);
  ASSERT_TRUE(ConnectTcp(h.get()));
  EXPECT_EQ(nbd_opt_abort(h.get()), 0) << nbd_get_error();
  EXPECT_EQ(nbd_aio_is_closed(h.get()), 1);
}

TEST_F(NbdServerTest, RawOptionsGetTheirErrors) {
  MakeExport("d", kMiB);
  RawClient c(nbd_port_);
  ASSERT_TRUE(c.Negotiate(3));
  EXPECT_EQ(c.Option(5, "").first, 0x80000002u);    // STARTTLS: policy
  EXPECT_EQ(c.Option(4242, "xyz").first, 0x80000001u);  // unknown: unsupported
  EXPECT_EQ(c.Option(3, "junk").first, 0x80000003u);    // LIST with data: invalid
  // SET_META_CONTEXT before structured replies: invalid.
  std::string meta = U32(1) + "d" + U32(1) + U32(15) + "base:allocation";
  EXPECT_EQ(c.Option(10, meta).first, 0x80000003u);
  EXPECT_EQ(c.Option(8, "x").first, 0x80000003u);  // STRUCTURED_REPLY with data
  EXPECT_EQ(c.Option(8, "").first, 1u);
  EXPECT_EQ(c.Option(8, "").first, 0x80000003u);  // twice
  auto [type, data] = c.Option(10, meta);
  ASSERT_EQ(type, 4u);  // META_CONTEXT
  EXPECT_EQ(GetU32(data, 0), 1u);
  EXPECT_EQ(data.substr(4), "base:allocation");
  EXPECT_EQ(c.ReadOptionReply(10).first, 1u);
  // A context we do not have: only the ack.
  EXPECT_EQ(c.Option(10, U32(1) + "d" + U32(1) + U32(9) + "qemu:junk").first, 1u);
  // Truncated INFO / meta requests: invalid.
  EXPECT_EQ(c.Option(6, U32(100) + "d").first, 0x80000003u);
  EXPECT_EQ(c.Option(9, U32(1) + "d" + U32(5)).first, 0x80000003u);
  EXPECT_EQ(c.Option(6, U32(7) + "missing" + U16(0)).first, 0x80000006u);
  // EXPORT_NAME of an unknown export: the server hangs up.
  c.Send(U64(0x49484156454f5054) + U32(1) + U32(7) + "missing");
  EXPECT_TRUE(c.ClosedByServer());
}

TEST_F(NbdServerTest, RawHandshakeAbuseClosesTheConnection) {
  {
    RawClient c(nbd_port_);
    ASSERT_TRUE(c.Negotiate(0x80));  // unknown client flag
    EXPECT_TRUE(c.ClosedByServer());
  }
  {
    RawClient c(nbd_port_);
    ASSERT_TRUE(c.Negotiate(1));
    c.Send(U64(0x1234) + U32(3) + U32(0));  // bad option magic
    EXPECT_TRUE(c.ClosedByServer());
  }
  {
    RawClient c(nbd_port_);
    ASSERT_TRUE(c.Negotiate(1));
    c.Send(U64(0x49484156454f5054) + U32(3) + U32(1u << 30));  // huge option
    EXPECT_TRUE(c.ClosedByServer());
  }
}

TEST_F(NbdServerTest, ExportNameWithZeroesThenRawRequests) {
  MakeExport("d", kMiB);
  RawClient c(nbd_port_);
  ASSERT_TRUE(c.Negotiate(1));  // fixed newstyle, zeroes wanted
  c.Send(U64(0x49484156454f5054) + U32(1) + U32(1) + "d");
  std::string reply = c.Receive(8 + 2 + 124);
  ASSERT_EQ(reply.size(), 134u);
  EXPECT_EQ(GetU64(reply, 0), kMiB);
  auto request = [&](uint16_t flags, uint16_t type, uint64_t cookie, uint64_t offset,
                     uint32_t length) {
    return U32(0x25609513) + U16(flags) + U16(type) + U64(cookie) + U64(offset) + U32(length);
  };
  // Unknown command and unknown flags: EINVAL, simple replies.
  c.Send(request(0, 99, 7, 0, 0));
  std::string r = c.Receive(16);
  ASSERT_EQ(r.size(), 16u);
  EXPECT_EQ(GetU32(r, 0), 0x67446698u);
  EXPECT_EQ(GetU32(r, 4), 22u);
  EXPECT_EQ(GetU64(r, 8), 7u);
  c.Send(request(0x4000, 3, 8, 0, 0));
  r = c.Receive(16);
  EXPECT_EQ(GetU32(r, 4), 22u);
  // DF without structured replies: EINVAL.
  c.Send(request(4, 0, 9, 0, 512));
  EXPECT_EQ(GetU32(c.Receive(16), 4), 22u);
  // BLOCK_STATUS without a meta context: EINVAL.
  c.Send(request(0, 7, 10, 0, 512));
  EXPECT_EQ(GetU32(c.Receive(16), 4), 22u);
  // A read too large for one request: EINVAL.
  c.Send(request(0, 0, 11, 0, 64u << 20));
  EXPECT_EQ(GetU32(c.Receive(16), 4), 22u);
  // A write larger than the maximum cannot be skipped: hang up.
  c.Send(request(0, 1, 12, 0, 64u << 20));
  EXPECT_TRUE(c.ClosedByServer());
}

TEST_F(NbdServerTest, NoZeroesThenBadRequestMagicClosesTheConnection) {
  MakeExport("d", kMiB);
  RawClient c(nbd_port_);
  ASSERT_TRUE(c.Negotiate(3));
  c.Send(U64(0x49484156454f5054) + U32(1) + U32(1) + "d");
  ASSERT_EQ(c.Receive(10).size(), 10u);
  c.Send(U32(0xdeadbeef) + std::string(24, '\0'));
  EXPECT_TRUE(c.ClosedByServer());
}

class ReplyStyleTest : public NbdServerTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ReplyStyleTest, ReadWriteFlushTrimZeroCacheAndErrors) {
  bool structured = GetParam();
  MakeExport("d", 8 * kMiB + 100);
  Handle h = Connect("d", structured);
  EXPECT_EQ(nbd_get_structured_replies_negotiated(h.get()), structured ? 1 : 0);
  std::string data = Pattern(3 * kMiB, 1);
  Pwrite(h.get(), data, 1000);
  EXPECT_EQ(Pread(h.get(), data.size(), 1000), data);
  EXPECT_EQ(Pread(h.get(), 1000, 0), std::string(1000, '\0'));
  Pwrite(h.get(), "fua", 8 * kMiB + 97, LIBNBD_CMD_FLAG_FUA);  // up to the very end
  EXPECT_EQ(Pread(h.get(), 3, 8 * kMiB + 97), "fua");
  ASSERT_EQ(nbd_flush(h.get(), 0), 0) << nbd_get_error();
  ASSERT_EQ(nbd_cache(h.get(), kMiB, 0, 0), 0) << nbd_get_error();
  // TRIM and WRITE_ZEROES (plain, NO_HOLE, FAST_ZERO, FUA) read back zeros.
  ASSERT_EQ(nbd_trim(h.get(), kMiB, 1000, 0), 0) << nbd_get_error();
  ASSERT_EQ(nbd_zero(h.get(), 4096, kMiB + 5000, LIBNBD_CMD_FLAG_NO_HOLE), 0) << nbd_get_error();
  ASSERT_EQ(nbd_zero(h.get(), 10, 2 * kMiB, LIBNBD_CMD_FLAG_FAST_ZERO | LIBNBD_CMD_FLAG_FUA), 0)
      << nbd_get_error();
  std::string want = data;
  std::fill(want.begin(), want.begin() + kMiB, '\0');
  std::fill(want.begin() + kMiB + 4000, want.begin() + kMiB + 8096, '\0');
  std::fill(want.begin() + 2 * kMiB - 1000, want.begin() + 2 * kMiB - 990, '\0');
  EXPECT_EQ(Pread(h.get(), want.size(), 1000), want);
  // Out of range: reads EINVAL, writes ENOSPC; the connection lives on.
  int err = 0;
  Pread(h.get(), 10, 8 * kMiB + 95, &err);
  EXPECT_EQ(err, EINVAL);
  std::string two = "xy";
  EXPECT_EQ(nbd_pwrite(h.get(), two.data(), 2, 8 * kMiB + 99, 0), -1);
  EXPECT_EQ(nbd_get_errno(), ENOSPC);
  EXPECT_EQ(nbd_trim(h.get(), 200, 8 * kMiB, 0), -1);
  EXPECT_EQ(nbd_get_errno(), ENOSPC);
  EXPECT_EQ(nbd_zero(h.get(), 1, UINT64_MAX - 10, 0), -1);
  EXPECT_EQ(nbd_get_errno(), ENOSPC);
  EXPECT_EQ(nbd_cache(h.get(), 200, 8 * kMiB, 0), -1);
  EXPECT_EQ(nbd_get_errno(), EINVAL);
  // Flags a command does not take.
  EXPECT_EQ(nbd_flush(h.get(), LIBNBD_CMD_FLAG_NO_HOLE), -1);
  EXPECT_EQ(nbd_get_errno(), EINVAL);
  if (structured) {
    std::string buf(4096, '\0');
    EXPECT_EQ(nbd_pread(h.get(), buf.data(), buf.size(), 1000, LIBNBD_CMD_FLAG_DF), 0);
    EXPECT_EQ(buf, want.substr(0, 4096));
  }
  EXPECT_EQ(Pread(h.get(), 3, 8 * kMiB + 97), "fua");
  EXPECT_EQ(nbd_shutdown(h.get(), 0), 0);
}

INSTANTIATE_TEST_SUITE_P(Replies, ReplyStyleTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Structured" : "Simple"; });

TEST_F(NbdServerTest, BlockStatusReportsHolesOfASparseExport) {
  MakeExport("sparse", 16 * kMiB);
  Handle h = Connect("sparse");
  Pwrite(h.get(), Pattern(kMiB, 2), 2 * kMiB);
  Pwrite(h.get(), "x", 10 * kMiB);
  auto all = BlockStatus(h.get(), 16 * kMiB, 0);
  std::vector<Extent> want{{2 * kMiB, kHoleZero}, {kMiB, 0}, {7 * kMiB, kHoleZero},
                           {32 * 1024, 0}, {6 * kMiB - 32 * 1024, kHoleZero}};
  EXPECT_EQ(all, want);
  ASSERT_EQ(nbd_flush(h.get(), 0), 0);
  EXPECT_EQ(BlockStatus(h.get(), 16 * kMiB, 0), want);  // stored alike
  // REQ_ONE: one extent, inside the range.
  auto one = BlockStatus(h.get(), 4 * kMiB, kMiB, LIBNBD_CMD_FLAG_REQ_ONE);
  EXPECT_EQ(one, (std::vector<Extent>{{kMiB, kHoleZero}}));
  // A trimmed range turns into a hole.
  ASSERT_EQ(nbd_trim(h.get(), kMiB, 2 * kMiB, 0), 0);
  EXPECT_EQ(BlockStatus(h.get(), 4 * kMiB, 0), (std::vector<Extent>{{4 * kMiB, kHoleZero}}));
  // Out of range and zero length: EINVAL.
  nbd_extent_callback cb{};
  cb.callback = [](void*, const char*, uint64_t, uint32_t*, size_t, int*) { return 0; };
  EXPECT_EQ(nbd_block_status(h.get(), 10, 16 * kMiB - 5, cb, 0), -1);
  EXPECT_EQ(nbd_get_errno(), EINVAL);
  EXPECT_EQ(nbd_block_status(h.get(), 0, 0, cb, 0), -1);
  EXPECT_EQ(nbd_get_errno(), EINVAL);
}

TEST_F(NbdServerTest, ManyRequestsInFlightOnOneConnection) {
  MakeExport("q", 64 * kMiB);
  Handle h = Connect("q");
  constexpr int kRequests = 256;
  std::vector<std::string> blocks;
  for (int i = 0; i < kRequests; i++) blocks.push_back(Pattern(64 * 1024, 100 + i));
  std::vector<int64_t> cookies;
  for (int i = 0; i < kRequests; i++) {
    int64_t c = nbd_aio_pwrite(h.get(), blocks[i].data(), blocks[i].size(),
                               uint64_t(i) * 256 * 1024, {}, 0);
    ASSERT_GT(c, 0) << nbd_get_error();
    cookies.push_back(c);
  }
  while (nbd_aio_in_flight(h.get()) > 0) ASSERT_GE(nbd_poll(h.get(), -1), 0);
  for (int64_t c : cookies) EXPECT_EQ(nbd_aio_command_completed(h.get(), c), 1);
  std::vector<std::string> back(kRequests, std::string(64 * 1024, '\0'));
  for (int i = 0; i < kRequests; i++) {
    ASSERT_GT(nbd_aio_pread(h.get(), back[i].data(), back[i].size(), uint64_t(i) * 256 * 1024,
                            {}, 0), 0);
  }
  while (nbd_aio_in_flight(h.get()) > 0) ASSERT_GE(nbd_poll(h.get(), -1), 0);
  for (int i = 0; i < kRequests; i++) EXPECT_EQ(back[i], blocks[i]) << i;
}

TEST_F(NbdServerTest, Ipv6ServesToo) {
  if (nbd_port6_ == 0) GTEST_SKIP() << "no IPv6 loopback";
  MakeExport("six", kMiB);
  Handle h = NewHandle();
  nbd_set_export_name(h.get(), "six");
  ASSERT_EQ(nbd_connect_tcp(h.get(), "::1", std::to_string(nbd_port6_).c_str()), 0)
      << nbd_get_error();
  Pwrite(h.get(), "v6", 0);
  EXPECT_EQ(Pread(h.get(), 2, 0), "v6");
}

TEST_F(NbdServerTest, ClientsOutsideTheAllowListAreRefused) {
  MakeExport("acl", kMiB);
  ASSERT_TRUE(StopServer());
  server_->set_extra_config("[servers.nbd]\naddresses = [\"127.0.0.1:" +
                            std::to_string(nbd_port_) + "\"]\nunix_socket = \"" + unix_socket_ +
                            "\"\nallowed_clients = [\"192.0.2.0/24\"]\n");
  StartServer();
  {
    RawClient c(nbd_port_);
    ASSERT_TRUE(c.connected());
    EXPECT_TRUE(c.ClosedByServer());  // not even a greeting
  }
  Handle h = NewHandle();
  nbd_set_export_name(h.get(), "acl");
  EXPECT_FALSE(ConnectTcp(h.get()));
  // The Unix socket is not subject to the address list.
  Handle u = NewHandle();
  nbd_set_export_name(u.get(), "acl");
  ASSERT_EQ(nbd_connect_unix(u.get(), unix_socket_.c_str()), 0) << nbd_get_error();
  EXPECT_NE(server_->log().find("refusing connection"), std::string::npos);
}

// With a 1 s handshake timeout: a client that reads the greeting and then
// chooses no export is disconnected; one that chose an export is not, however
// long it stays idle.
TEST_F(NbdServerTest, ClientsThatChooseNoExportAreDisconnected) {
  MakeExport("idle", kMiB);
  ASSERT_TRUE(StopServer());
  server_->set_extra_config("[servers.nbd]\naddresses = [\"127.0.0.1:" +
                            std::to_string(nbd_port_) + "\"]\nunix_socket = \"" + unix_socket_ +
                            "\"\nhandshake_timeout_seconds = 1\n");
  StartServer();
  Handle h = Connect("idle");
  RawClient silent(nbd_port_);
  ASSERT_TRUE(silent.Negotiate(1));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.ClosedByServer());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  // Well past the timeout, the client that chose its export still works.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Pwrite(h.get(), "still here", 0);
  EXPECT_EQ(Pread(h.get(), 10, 0), "still here");
  EXPECT_NE(server_->log().find("no export chosen within 1 s"), std::string::npos);
}

TEST_F(NbdServerTest, UnixSocketServesToo) {
  MakeExport("u", kMiB);
  Handle h = NewHandle();
  nbd_set_export_name(h.get(), "u");
  ASSERT_EQ(nbd_connect_unix(h.get(), unix_socket_.c_str()), 0) << nbd_get_error();
  Pwrite(h.get(), "hello", 0);
  EXPECT_EQ(Pread(h.get(), 5, 0), "hello");
}

TEST_F(NbdServerTest, FlushOnOneConnectionCoversAllAndSurvivesSigkill) {
  MakeExport("m", 4 * kMiB);
  std::string a = Pattern(kMiB, 7), b = Pattern(kMiB, 8);
  {
    Handle h1 = Connect("m");
    Handle h2 = Connect("m");
    Handle h3 = Connect("m");
    Pwrite(h1.get(), a, 0);
    Pwrite(h2.get(), b, 2 * kMiB);
    // Acknowledged on h1 and h2; one FLUSH on h3 makes both durable.
    ASSERT_EQ(nbd_flush(h3.get(), 0), 0) << nbd_get_error();
    KillServer();
  }
  StartServer();
  Handle h = Connect("m");
  EXPECT_EQ(Pread(h.get(), kMiB, 0), a);
  EXPECT_EQ(Pread(h.get(), kMiB, 2 * kMiB), b);
  EXPECT_EQ(Pread(h.get(), kMiB, kMiB), std::string(kMiB, '\0'));
}

TEST_F(NbdServerTest, FuaWriteSurvivesSigkill) {
  MakeExport("f", kMiB);
  std::string a = Pattern(100000, 9);
  {
    Handle h = Connect("f");
    Pwrite(h.get(), a, 5, LIBNBD_CMD_FLAG_FUA);
    KillServer();
  }
  StartServer();
  Handle h = Connect("f");
  EXPECT_EQ(Pread(h.get(), a.size(), 5), a);
}

// Where two strings of one length first differ (their length if nowhere):
// the strings themselves are too long to print.
size_t FirstDifference(const std::string& a, const std::string& b) {
  return std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin();
}

// Random writes (block-aligned and not, some FUA), TRIMs and WRITE_ZEROES
// over two connections against a model; reads and block status checked
// along the way, then one FLUSH, SIGKILL, and the whole device read back.
TEST_F(NbdServerTest, RandomCommandsMatchAModelAcrossSigkill) {
  constexpr uint64_t kSize = 2 * kMiB + 512;
  MakeExport("model", kSize);
  std::string model(kSize, '\0');
  std::mt19937_64 rng(11);
  auto offset = [&](uint64_t len) {
    uint64_t at = rng() % (kSize - len + 1);
    return rng() % 2 == 0 ? at / 4096 * 4096 : at;
  };
  auto length = [&] {
    return rng() % 3 == 0 ? 4096 * (1 + rng() % 16) : 1 + rng() % (200 * 1024);
  };
  {
    Handle conns[2] = {Connect("model"), Connect("model")};
    for (int step = 0; step < 600; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      nbd_handle* h = conns[rng() % 2].get();
      const uint64_t len = length();
      const uint64_t at = offset(len);
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 5) {
        std::string data = Pattern(len, static_cast<uint32_t>(rng()));
        Pwrite(h, data, at, rng() % 8 == 0 ? LIBNBD_CMD_FLAG_FUA : 0);
        model.replace(at, len, data);
      } else if (kind < 7) {
        ASSERT_EQ(rng() % 2 == 0 ? nbd_trim(h, len, at, 0)
                                 : nbd_zero(h, len, at, LIBNBD_CMD_FLAG_NO_HOLE),
                  0)
            << nbd_get_error();
        std::fill(model.begin() + at, model.begin() + at + len, '\0');
      } else if (kind < 9) {
        ASSERT_EQ(FirstDifference(Pread(h, len, at), model.substr(at, len)), len)
            << "read of " << len << " at " << at;
      } else {
        // What block status calls a hole must read as zeros.
        uint64_t pos = at;
        for (const Extent& e : BlockStatus(h, len, at)) {
          const uint64_t end = std::min(at + len, pos + e.length);
          if (e.flags & LIBNBD_STATE_ZERO) {
            EXPECT_TRUE(std::all_of(model.begin() + pos, model.begin() + end,
                                    [](char c) { return c == 0; }))
                << "the zero extent at " << pos << " holds data";
          }
          pos = end;
          if (pos >= at + len) break;
        }
      }
    }
    ASSERT_EQ(nbd_flush(conns[0].get(), 0), 0) << nbd_get_error();
    KillServer();
  }
  StartServer();
  Handle h = Connect("model");
  EXPECT_EQ(FirstDifference(Pread(h.get(), kSize, 0), model), kSize)
      << "the device differs from the model after a restart";
}

TEST_F(NbdServerTest, ResizeBetweenConnectionsAndShrinkWhileConnected) {
  MakeExport("r", kMiB);
  {
    Handle h = Connect("r");
    EXPECT_EQ(nbd_get_size(h.get()), int64_t(kMiB));
    Pwrite(h.get(), Pattern(kMiB, 3), 0);
    ASSERT_EQ(nbd_flush(h.get(), 0), 0);
    // Shrunk underneath: what the client was told still reads (as zeros
    // past the new end) and takes writes.
    MakeExport("r", 1000);
    EXPECT_EQ(Pread(h.get(), 10, kMiB - 10), std::string(10, '\0'));
    EXPECT_EQ(Pread(h.get(), 10, 990), Pattern(kMiB, 3).substr(990, 10));
    auto status = BlockStatus(h.get(), kMiB - 4096, 4096);
    ASSERT_FALSE(status.empty());
    EXPECT_EQ(status.back().flags, kHoleZero);
    Pwrite(h.get(), "tail", kMiB - 4);
    EXPECT_EQ(Pread(h.get(), 4, kMiB - 4), "tail");
  }
  MakeExport("r", 3 * kMiB);
  Handle h = Connect("r");
  EXPECT_EQ(nbd_get_size(h.get()), int64_t(3 * kMiB));
}

TEST_F(NbdServerTest, DeletingTheExportFailsItsClientCleanly) {
  MakeExport("gone", kMiB);
  Handle h = Connect("gone");
  Pwrite(h.get(), "abc", 0);
  RemoveExport("gone");
  int err = 0;
  Pread(h.get(), 3, 0, &err);
  EXPECT_NE(err, 0);
  // The server hung up; a new connection finds no such export.
  std::string buf(3, '\0');
  EXPECT_EQ(nbd_pread(h.get(), buf.data(), 3, 0, 0), -1);
  Handle again = NewHandle();
  nbd_set_export_name(again.get(), "gone");
  EXPECT_FALSE(ConnectTcp(again.get()));
}

}  // namespace
}  // namespace pail::nbd::test

namespace pail::nbd::test {
namespace {

std::string RunCommand(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

// The command-line tools of libnbd-bin, as users run them.
TEST_F(NbdServerTest, NbdinfoMapAndNbdcopyRoundTrip) {
  MakeExport("tools", 64 * kMiB);
  std::string data = Pattern(kMiB, 11);
  {
    Handle h = Connect("tools");
    Pwrite(h.get(), data, 8 * kMiB);
  }
  std::string uri = "nbd://127.0.0.1:" + std::to_string(nbd_port_) + "/tools";
  int status = -1;
  std::string map = RunCommand("nbdinfo --map '" + uri + "' 2>&1", &status);
  EXPECT_EQ(status, 0) << map;
  // Data only around the written MiB; holes elsewhere.
  EXPECT_NE(map.find("8388608     1048576    0  data"), std::string::npos) << map;
  EXPECT_NE(map.find("hole,zero"), std::string::npos) << map;
  std::string copy = server_->dir() + "/copy.img";
  std::string out = RunCommand("nbdcopy '" + uri + "' '" + copy + "' 2>&1", &status);
  ASSERT_EQ(status, 0) << out;
  std::ifstream in(copy, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 64 * kMiB);
  EXPECT_EQ(bytes.substr(8 * kMiB, kMiB), data);
  EXPECT_EQ(bytes.substr(0, 8 * kMiB), std::string(8 * kMiB, '\0'));
  // And back into a second export, through several connections.
  MakeExport("tools2", 64 * kMiB);
  std::string uri2 = "nbd://127.0.0.1:" + std::to_string(nbd_port_) + "/tools2";
  out = RunCommand("nbdcopy --connections=4 '" + copy + "' '" + uri2 + "' 2>&1", &status);
  ASSERT_EQ(status, 0) << out;
  Handle h2 = Connect("tools2");
  EXPECT_EQ(Pread(h2.get(), kMiB, 8 * kMiB), data);
  EXPECT_EQ(Pread(h2.get(), 4096, 0), std::string(4096, '\0'));
}

}  // namespace
}  // namespace pail::nbd::test
