#include "server/access_policy.h"

#include <gtest/gtest.h>

namespace pail::server {
namespace {

TEST(ClientNetwork, ParsesAndMatchesIpv4AndIpv6) {
  auto lan = ClientNetwork::Parse("192.168.1.0/24");
  ASSERT_TRUE(lan.ok());
  EXPECT_TRUE(lan->Contains("192.168.1.77"));
  EXPECT_FALSE(lan->Contains("192.168.2.1"));
  EXPECT_TRUE(lan->Contains("::ffff:192.168.1.9"));  // v4-mapped
  EXPECT_FALSE(lan->Contains("fe80::1"));
  EXPECT_FALSE(lan->Contains("garbage"));
  auto v6 = ClientNetwork::Parse("fd00::/8");
  ASSERT_TRUE(v6.ok());
  EXPECT_TRUE(v6->Contains("fd12:3456::1"));
  EXPECT_FALSE(v6->Contains("fe80::1%eth0"));
  EXPECT_FALSE(v6->Contains("10.0.0.1"));
  auto host = ClientNetwork::Parse("10.1.2.3");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->ToString(), "10.1.2.3/32");
  auto everyone = ClientNetwork::Parse("0.0.0.0/0");
  ASSERT_TRUE(everyone.ok());
  EXPECT_TRUE(everyone->Contains("203.0.113.5"));
  for (const char* bad : {"10.0.0.1/8", "1.2.3.4/33", "::1/129", "10.0.0.0/", "10.0.0.0/x",
                          "example.com", "", "fe80::1%eth0/128"}) {
    EXPECT_FALSE(ClientNetwork::Parse(bad).ok()) << bad;
  }
}

TEST(AccessPolicy, DefaultsAllowLoopbackOnly) {
  AccessPolicy policy;
  EXPECT_TRUE(policy.AllowsAddress("127.0.0.1"));
  EXPECT_TRUE(policy.AllowsAddress("127.9.9.9"));
  EXPECT_TRUE(policy.AllowsAddress("::1"));
  EXPECT_FALSE(policy.AllowsAddress("192.168.1.1"));
  EXPECT_FALSE(policy.AllowsAddress("::2"));
  EXPECT_FALSE(policy.RefusalReason("127.0.0.1", 40000).has_value());
  EXPECT_TRUE(policy.RefusalReason("10.0.0.1", 700).has_value());
  policy.secure_port = true;
  EXPECT_TRUE(policy.RefusalReason("127.0.0.1", 40000).has_value());
  EXPECT_FALSE(policy.RefusalReason("127.0.0.1", 1023).has_value());
}

TEST(AccessPolicy, Squash) {
  AccessPolicy policy;
  policy.anonuid = 99;
  policy.anongid = 98;
  ClientIdentity root{0, 0, {0, 5}};
  ClientIdentity alice{1000, 1000, {5}};
  ClientIdentity squashed = policy.Squashed(root, true);
  EXPECT_EQ(squashed.uid, 99u);
  EXPECT_EQ(squashed.gid, 98u);
  EXPECT_EQ(squashed.groups, (std::vector<uint32_t>{98, 5}));
  EXPECT_EQ(policy.Squashed(alice, true).uid, 1000u);
  EXPECT_EQ(policy.Squashed(alice, false).uid, 99u);  // AUTH_NONE
  policy.squash = Squash::kAll;
  EXPECT_EQ(policy.Squashed(alice, true).uid, 99u);
  EXPECT_TRUE(policy.Squashed(alice, true).groups.empty());
  policy.squash = Squash::kNone;
  EXPECT_EQ(policy.Squashed(root, true).uid, 0u);
  EXPECT_EQ(ParseSquash("root").value(), Squash::kRoot);
  EXPECT_FALSE(ParseSquash("yes").ok());
}

TEST(ConnectionCount, CapsTheTotalAndEachAddress) {
  ConnectionLimits limits;
  limits.max_connections = 3;
  limits.max_connections_per_client = 2;
  ConnectionCount count(limits);
  EXPECT_FALSE(count.Admit("10.0.0.1"));
  EXPECT_FALSE(count.Admit("10.0.0.1"));
  std::optional<std::string> refused = count.Admit("10.0.0.1");
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("max_connections_per_client"), std::string::npos) << *refused;
  EXPECT_FALSE(count.Admit(""));  // a Unix socket: only the total counts
  EXPECT_TRUE(count.Admit("10.0.0.2"));  // the total is reached
  count.Release("10.0.0.1");
  EXPECT_FALSE(count.Admit("10.0.0.2"));
  count.Release("");
  EXPECT_FALSE(count.Admit("10.0.0.1"));  // room again under both caps
  EXPECT_TRUE(count.Admit("10.0.0.1"));
}

// What NFS asks before it closes an idle connection to make room: a client
// at its own cap is refused whatever the total, and Full says the total is
// reached without counting anything.
TEST(ConnectionCount, TellsAClientAtItsCapFromAFullTable) {
  ConnectionLimits limits;
  limits.max_connections = 2;
  limits.max_connections_per_client = 1;
  ConnectionCount count(limits);
  EXPECT_FALSE(count.ClientRefusal("10.0.0.1"));
  EXPECT_FALSE(count.Admit("10.0.0.1"));
  EXPECT_TRUE(count.ClientRefusal("10.0.0.1"));
  EXPECT_FALSE(count.ClientRefusal("10.0.0.2"));
  EXPECT_FALSE(count.ClientRefusal(""));  // a Unix socket has no per-client cap
  EXPECT_FALSE(count.Full());
  EXPECT_FALSE(count.Admit("10.0.0.2"));
  EXPECT_TRUE(count.Full());
  EXPECT_FALSE(count.ClientRefusal("10.0.0.3"));  // full, but not this client's fault
  count.Release("10.0.0.1");
  EXPECT_FALSE(count.Full());
  EXPECT_FALSE(count.ClientRefusal("10.0.0.1"));
}

TEST(RefusalLog, CountsWhatItDoesNotLog) {
  RefusalLog log(std::chrono::hours(1));
  for (int i = 0; i < 1000; i++) log.Refused("refused");  // one line, not a thousand
  SUCCEED();
}

}  // namespace
}  // namespace pail::server
