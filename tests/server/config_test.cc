#include "server/config.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace pail::server {
namespace {

const char* kMinimal = R"(
[storage]
url = "file:///tmp/bucket"
encryption_password = "pw"
[cache]
dir = "/tmp/cache"
)";

TEST(Config, MinimalConfigGetsDefaults) {
  auto c = Config::Parse(kMinimal, "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->storage.url, "file:///tmp/bucket");
  EXPECT_EQ(c->filesystem.compression, "zstd-3");
  EXPECT_EQ(c->filesystem.flush_interval_ms, 1000u);
  EXPECT_FALSE(c->fuse.enabled);
  EXPECT_FALSE(c->nfs.enabled);
}

TEST(Config, AllSections) {
  auto c = Config::Parse(R"(
[storage]
url = "s3://b/p"
encryption_password = "pw"
[cache]
dir = "/c"
disk_size_gb = 2.5
memory_size_gb = 0.5
[filesystem]
compression = "lz4"
flush_interval_ms = 250
max_size_gb = 10
[aws]
access_key_id = "AK"
secret_access_key = "SK"
region = "eu-west-1"
endpoint = "http://127.0.0.1:7480"
allow_http = true
path_style = true
[azure]
storage_account_name = "acct"
storage_account_key = "key"
endpoint = "http://127.0.0.1:10000/acct"
[servers.fuse]
mountpoint = "/mnt/x"
allow_other = false
[servers.nfs]
addresses = ["127.0.0.1:2049", "[::1]:2049"]
commit = "durable"
anonuid = 1000
anongid = 1001
squash = "all"
allowed_clients = ["192.168.1.0/24", "fd00::/8", "10.1.2.3"]
secure_port = true
max_connections = 100
max_connections_per_client = 10
idle_timeout_seconds = 60
[servers.ninep]
addresses = ["127.0.0.1:5564", "[::1]:5564"]
unix_socket = "/run/p9.sock"
max_msize = 65536
anonuid = 7
squash = "none"
attach_timeout_seconds = 5
)", "all.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->cache.disk_size_gb, 2.5);
  EXPECT_EQ(c->filesystem.flush_interval_ms, 250u);
  EXPECT_EQ(c->aws.region, "eu-west-1");
  EXPECT_TRUE(c->aws.path_style);
  EXPECT_EQ(c->azure.storage_account_name, "acct");
  EXPECT_TRUE(c->fuse.enabled);
  EXPECT_FALSE(c->fuse.allow_other);
  ASSERT_EQ(c->nfs.addresses.size(), 2u);
  EXPECT_EQ(c->nfs.addresses[1], "[::1]:2049");
  EXPECT_EQ(c->nfs.commit, "durable");
  const AccessPolicy& access = c->nfs.access;
  EXPECT_EQ(access.anongid, 1001u);
  EXPECT_EQ(access.squash, Squash::kAll);
  EXPECT_TRUE(access.secure_port);
  EXPECT_EQ(access.AllowedClientStrings(),
            (std::vector<std::string>{"192.168.1.0/24", "fd00::/8", "10.1.2.3/32"}));
  EXPECT_EQ(access.limits.max_connections, 100u);
  EXPECT_EQ(access.limits.max_connections_per_client, 10u);
  EXPECT_EQ(access.limits.idle_timeout, std::chrono::seconds(60));
  EXPECT_TRUE(c->ninep.enabled);
  ASSERT_EQ(c->ninep.addresses.size(), 2u);
  EXPECT_EQ(c->ninep.addresses[1], "[::1]:5564");
  EXPECT_EQ(c->ninep.unix_socket, "/run/p9.sock");
  EXPECT_EQ(c->ninep.max_msize, 65536u);
  EXPECT_EQ(c->ninep.access.anonuid, 7u);
  EXPECT_EQ(c->ninep.access.anongid, 65534u);
  EXPECT_EQ(c->ninep.access.squash, Squash::kNone);
  EXPECT_EQ(c->ninep.attach_timeout, std::chrono::seconds(5));
}

TEST(Config, NinepDefaultsToLoopbackAndIsOffWithoutItsSection) {
  auto off = Config::Parse(kMinimal, "min.toml");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->ninep.enabled);
  auto on = Config::Parse(std::string(kMinimal) + "[servers.ninep]\n", "ninep.toml");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->ninep.enabled);
  ASSERT_EQ(on->ninep.addresses.size(), 1u);
  EXPECT_EQ(on->ninep.addresses[0], "127.0.0.1:5564");
  EXPECT_EQ(on->ninep.max_msize, 1u << 20);
  EXPECT_EQ(on->ninep.attach_timeout, std::chrono::seconds(60));
  // 9P has no idle timeout to set: the kernel client does not reconnect.
  EXPECT_FALSE(Config::Parse(std::string(kMinimal) + "[servers.ninep]\nidle_timeout_seconds = 60\n",
                             "idle.toml")
                   .ok());
  EXPECT_EQ(on->ninep.access.squash, Squash::kRoot);
  EXPECT_EQ(on->ninep.access.AllowedClientStrings(),
            (std::vector<std::string>{"127.0.0.0/8", "::1/128"}));
}

TEST(Config, NfsDefaultsAreCareful) {
  auto c = Config::Parse(std::string(kMinimal) + "[servers.nfs]\n", "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const AccessPolicy& access = c->nfs.access;
  EXPECT_EQ(access.squash, Squash::kRoot);
  EXPECT_EQ(access.AllowedClientStrings(), (std::vector<std::string>{"127.0.0.0/8", "::1/128"}));
  EXPECT_EQ(c->nfs.addresses, (std::vector<std::string>{"127.0.0.1:2049"}));
}

TEST(Config, BadPolicyValuesAreErrors) {
  for (const char* bad : {"squash = \"some\"", "allowed_clients = [\"10.0.0.1/8\"]",
                          "allowed_clients = [\"not-an-address\"]", "allowed_clients = [\"::1/129\"]",
                          "max_connections = 0"}) {
    auto c = Config::Parse(std::string(kMinimal) + "[servers.nfs]\n" + bad + "\n", "t.toml");
    EXPECT_FALSE(c.ok()) << bad;
  }
}

TEST(Config, NoSecretInAnyErrorText) {
  const std::string password = "Pa55${word-in-error";
  for (const std::string& text : {
           "[storage]\nurl = \"file:///b\"\nencryption_password = \"" + password + "\"\n[cache]\ndir = \"/c\"\n",
           "[storage]\nurl = \"file:///b\"\nencryption_password = \"" + password + "\n",
           "[aws]\nsecret_access_key = \"$" + password + "\"\n"}) {
    auto c = Config::Parse(text, "t.toml");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().ToString().find("Pa55"), std::string::npos) << c.status().ToString();
  }
}

TEST(Config, LiteralSecretsAreRecognised) {
  EXPECT_TRUE(HoldsLiteralSecret("[storage]\nencryption_password = \"hunter2\"\n"));
  EXPECT_TRUE(HoldsLiteralSecret("[aws]\nsecret_access_key = \"x${Y}\"\n"));
  EXPECT_FALSE(HoldsLiteralSecret("[storage]\nencryption_password = \"${PAILFS_PASSWORD}\"\n"));
  EXPECT_FALSE(HoldsLiteralSecret("[azure]\nstorage_account_key = \"$AZ_KEY\"\n"));
  EXPECT_FALSE(HoldsLiteralSecret(StarterConfig()));
}

TEST(Config, NbdServer) {
  auto absent = Config::Parse(kMinimal, "test.toml");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->nbd.enabled);
  auto defaults = Config::Parse(std::string(kMinimal) + "[servers.nbd]\n", "test.toml");
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_TRUE(defaults->nbd.enabled);
  EXPECT_EQ(defaults->nbd.addresses, std::vector<std::string>{"127.0.0.1:10809"});
  EXPECT_EQ(defaults->nbd.unix_socket, "");
  EXPECT_EQ(defaults->nbd.handshake_timeout, std::chrono::seconds(60));
  auto both = Config::Parse(std::string(kMinimal) +
                                "[servers.nbd]\naddresses = [\"127.0.0.1:1\", \"[::1]:2\"]\n"
                                "unix_socket = \"/run/nbd.sock\"\n",
                            "test.toml");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->nbd.addresses, (std::vector<std::string>{"127.0.0.1:1", "[::1]:2"}));
  EXPECT_EQ(both->nbd.unix_socket, "/run/nbd.sock");
  auto quick = Config::Parse(std::string(kMinimal) + "[servers.nbd]\nhandshake_timeout_seconds = 5\n",
                             "test.toml");
  ASSERT_TRUE(quick.ok()) << quick.status().ToString();
  EXPECT_EQ(quick->nbd.handshake_timeout, std::chrono::seconds(5));
  auto socket_only = Config::Parse(std::string(kMinimal) + "[servers.nbd]\nunix_socket = \"/s\"\n",
                                   "test.toml");
  ASSERT_TRUE(socket_only.ok());
  EXPECT_TRUE(socket_only->nbd.addresses.empty());
  EXPECT_TRUE(defaults->nbd.access.AllowsAddress("127.0.0.1"));
  EXPECT_FALSE(defaults->nbd.access.AllowsAddress("10.1.1.1"));
  auto acl = Config::Parse(std::string(kMinimal) +
                               "[servers.nbd]\nallowed_clients = [\"10.0.0.0/8\"]\nsecure_port = true\n",
                           "test.toml");
  ASSERT_TRUE(acl.ok()) << acl.status().ToString();
  EXPECT_TRUE(acl->nbd.access.AllowsAddress("10.1.1.1"));
  EXPECT_FALSE(acl->nbd.access.AllowsAddress("127.0.0.1"));
  EXPECT_TRUE(acl->nbd.access.secure_port);
  // NBD carries no identities: squashing is not an NBD setting.
  auto squash = Config::Parse(std::string(kMinimal) + "[servers.nbd]\nsquash = \"all\"\n", "t");
  ASSERT_FALSE(squash.ok());
  EXPECT_NE(squash.status().message().find("unknown key 'squash'"), std::string::npos);
  auto typo = Config::Parse(std::string(kMinimal) + "[servers.nbd]\naddress = []\n", "test.toml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("unknown key 'address'"), std::string::npos);
}

TEST(Config, EnvironmentSubstitution) {
  ::setenv("PAIL_TEST_PW", "s3cret", 1);
  ::setenv("PAIL_TEST_DIR", "/data", 1);
  auto c = Config::Parse(R"(
[storage]
url = "file://${PAIL_TEST_DIR}/bucket"
encryption_password = "$PAIL_TEST_PW"
[cache]
dir = "$PAIL_TEST_DIR/cache-$$x"
)", "env.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->storage.url, "file:///data/bucket");
  EXPECT_EQ(c->storage.encryption_password, "s3cret");
  EXPECT_EQ(c->cache.dir, "/data/cache-$x");
}

TEST(Config, UnsetVariableIsAnErrorNamingIt) {
  ::unsetenv("PAIL_TEST_UNSET_VAR");
  auto c = Config::Parse(R"(
[storage]
url = "file:///b"
encryption_password = "${PAIL_TEST_UNSET_VAR}"
[cache]
dir = "/c"
)", "unset.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("PAIL_TEST_UNSET_VAR"), std::string::npos);
  EXPECT_NE(c.status().message().find("encryption_password"), std::string::npos);
}

TEST(Config, MistakesAreReportedWithTheirPlace) {
  struct Case {
    std::string text, expect;
  };
  std::vector<Case> cases = {
      {std::string(kMinimal) + "[storag]\nx=1\n", "unknown section [storag]"},
      {std::string(kMinimal) + "[filesystem]\nflush_interval=5\n", "unknown key 'flush_interval'"},
      {std::string(kMinimal) + "[filesystem]\nflush_interval_ms=\"5\"\n", "flush_interval_ms must be a number"},
      {std::string(kMinimal) + "[filesystem]\nflush_interval_ms=0\n", "between"},
      {std::string(kMinimal) + "[servers.smb]\nx=1\n", "unknown server [servers.smb]"},
      {std::string(kMinimal) + "[servers.nfs]\ncommit=\"maybe\"\n", "commit must be"},
      {std::string(kMinimal) + "[servers.fuse]\nallow_other=true\n", "needs mountpoint"},
      {std::string(kMinimal) + "[servers.ninep]\nmax_msize=100\n", "max_msize must be between"},
      {std::string(kMinimal) + "[servers.ninep]\nport=5564\n", "unknown key 'port'"},
      {"[storage]\nencryption_password=\"x\"\n[cache]\ndir=\"/c\"\n", "url is required"},
      {"[storage]\nurl=\"file:///b\"\n[cache]\ndir=\"/c\"\n", "encryption_password is required"},
      {"[storage\nurl=1", "bad.toml:1"},
      {std::string(kMinimal) + "[filesystem]\ncompression=\"$\"\n", "literal $"},
  };
  for (const auto& c : cases) {
    auto r = Config::Parse(c.text, "bad.toml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << "wanted '" << c.expect << "' in: " << r.status().message();
  }
}

TEST(Config, StarterConfigParsesOnceItsVariableIsSet) {
  ::setenv("PAILFS_PASSWORD", "starter", 1);
  auto c = Config::Parse(StarterConfig(), "starter.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->storage.encryption_password, "starter");
  EXPECT_TRUE(c->nfs.enabled);
}

TEST(Config, MissingFileSaysHowToCreateOne) {
  auto c = Config::Load("/nonexistent/pailfs.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("pailfs init"), std::string::npos);
}

}  // namespace
}  // namespace pail::server

namespace pail::server {
namespace {

TEST(Config, AdminEndpointIsOffUnlessConfiguredAndLoopbackByDefault) {
  auto off = Config::Parse(kMinimal, "test.toml");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->admin.enabled);
  auto on = Config::Parse(std::string(kMinimal) + "[servers.admin]\n", "test.toml");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->admin.enabled);
  EXPECT_EQ(on->admin.addresses, std::vector<std::string>{"127.0.0.1:7390"});
  auto socket_only = Config::Parse(std::string(kMinimal) + "[servers.admin]\nunix_socket = \"/run/a.sock\"\n",
                                   "test.toml");
  ASSERT_TRUE(socket_only.ok());
  EXPECT_TRUE(socket_only->admin.addresses.empty());
  EXPECT_EQ(socket_only->admin.unix_socket, "/run/a.sock");
  EXPECT_FALSE(Config::Parse(std::string(kMinimal) + "[servers.admin]\nport = 1\n", "test.toml").ok());
  EXPECT_FALSE(Config::Parse(std::string(kMinimal) + "[servers.admin]\nmax_connections = 0\n", "test.toml").ok());
}

}  // namespace
}  // namespace pail::server
