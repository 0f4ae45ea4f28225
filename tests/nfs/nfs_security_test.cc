// The NFS server against hostile or careless clients, and across crashes:
// the access policy (squash, allowed clients, secure ports, EXPORT), handles
// nobody can forge and that never reach another file after a crash, bounded
// reply memory and connections, fairness between clients, durable directory
// changes, READDIR cookies, WRITE size, libnfs URLs, and secrets kept out of
// messages and world-readable files. Each runs `pailfs run` as a child
// process on a file:// bucket (ServerProcess).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "nfs/xdr.h"
#include "nfs_test_client.h"
#include "raw_rpc.h"
#include "server_process.h"

namespace pail::nfs::test {
namespace {

constexpr uint32_t kNfsProg = 100003, kMountProg = 100005;
constexpr uint32_t kAuthTooWeak = 5;
const Identity kRoot{0, 0, {}};
const Identity kAlice{1000, 1000, {}};
const Identity kMallory{2000, 2000, {}};

// Settings for tests that need the server to lose what it had not synced.
const char kLongFlushWindow[] = "[filesystem]\nflush_interval_ms = 600000\n";

// The reject details of a denied reply: (reject_stat, auth_stat).
std::pair<uint32_t, uint32_t> Denial(const std::string& reply) {
  XdrDecoder d(reply);
  d.U32();
  d.U32();
  if (d.U32() != 1) return {~0u, ~0u};
  uint32_t reject = d.U32();
  return {reject, d.U32()};
}

// The results of an accepted reply (after the accept_stat), or "" when denied.
std::string Results(const std::string& reply) {
  XdrDecoder d(reply);
  d.U32();
  d.U32();
  if (d.U32() != 0) return "";
  d.U32();
  d.Opaque(400);
  if (d.U32() != 0) return "";
  return std::string(d.FixedOpaque(d.remaining()));
}

// A well-formed handle (format 1, inode 1) with a made-up generation.
std::string RootLikeHandle() {
  std::string fh(17, '\0');
  fh[0] = 1;
  fh[8] = 1;
  fh[16] = 1;
  return fh;
}

std::string HandleArgs(const std::string& fh) {
  std::string out;
  XdrEncoder(&out).Opaque(fh);
  return out;
}

size_t RssBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::unique_ptr<NfsClient> Connect(ServerProcess& server, const Identity& who, std::string* root) {
  auto c = NfsClient::Connect(server.port(), who);
  if (c) {
    auto fh = c->Mount("/");
    if (!fh) return nullptr;
    *root = *fh;
  }
  return c;
}

// ---- Identities.

TEST(NfsAccessPolicyTest, RootIsSquashedByDefault) {
  ServerProcess server(/*durable_commit=*/false, /*nfs_options=*/"");
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root;
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  // The root directory is 0755 root:root: uid 0 acting as nobody may not
  // write there.
  EXPECT_EQ(c->Create(root, "by-root", UNCHECKED, 04755), NFS3ERR_ACCES);
  EXPECT_EQ(c->Mkdir(root, "by-root", 0755), NFS3ERR_ACCES);
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsAccessPolicyTest, SquashNoneTrustsRootAndSquashAllTrustsNobody) {
  {
    ServerProcess server(false, "squash = \"none\"\n");
    ASSERT_TRUE(server.Start()) << server.log();
    std::string root, fh;
    auto c = Connect(server, kRoot, &root);
    ASSERT_NE(c, nullptr);
    fattr3 attr;
    ASSERT_EQ(c->Create(root, "by-root", UNCHECKED, 0644, &fh, 0, &attr), NFS3_OK);
    EXPECT_EQ(attr.uid, 0u);
    ASSERT_TRUE(server.Stop()) << server.log();
  }
  {
    ServerProcess server(false, "squash = \"all\"\nanonuid = 4242\nanongid = 4343\n");
    ASSERT_TRUE(server.Start()) << server.log();
    std::string root, dir, fh;
    // Everyone is 4242: even "root" cannot write the 0755 root directory...
    auto c = Connect(server, kRoot, &root);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->Mkdir(root, "d", 0777), NFS3ERR_ACCES);
    ASSERT_TRUE(server.Stop()) << server.log();
  }
}

// ---- Client addresses and ports.

TEST(NfsAccessPolicyTest, ClientOutsideAllowedClientsIsRefused) {
  ServerProcess server(false, "allowed_clients = [\"10.0.0.0/8\", \"fd00::/8\"]\n");
  ASSERT_TRUE(server.Start()) << server.log();
  int mount_status = 0;
  auto c = NfsClient::Connect(server.port(), kAlice);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->Mount("/", &mount_status).has_value());
  EXPECT_EQ(mount_status, MNT3ERR_ACCES);

  // Every NFS call but NULL is denied too, whatever handle it carries.
  RawConnection raw(server.port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.SendRecord(CallAs(7, kNfsProg, 3, 0, 1000, 1000)));
  EXPECT_EQ(ReplyStat(raw.ReadRecord()), 0u);
  for (uint32_t proc : {1u, 3u, 6u, 7u, 16u, 17u, 21u}) {
    ASSERT_TRUE(raw.SendRecord(CallAs(8, kNfsProg, 3, proc, 1000, 1000, HandleArgs(RootLikeHandle()))));
    EXPECT_EQ(Denial(raw.ReadRecord()), std::make_pair(1u, kAuthTooWeak)) << proc;
  }
  EXPECT_NE(server.log().find("address not in allowed_clients"), std::string::npos);
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsAccessPolicyTest, ExportShowsThePolicy) {
  ServerProcess server(false, "");
  ASSERT_TRUE(server.Start()) << server.log();
  RawConnection raw(server.port());
  ASSERT_TRUE(raw.SendRecord(CallAs(1, kMountProg, 3, 5, 1000, 1000)));
  std::string results = Results(raw.ReadRecord());
  XdrDecoder d(results);
  ASSERT_TRUE(d.Bool());
  EXPECT_EQ(d.String(1024), "/");
  std::vector<std::string> groups;
  while (d.ok() && d.Bool()) groups.emplace_back(d.String(1024));
  EXPECT_EQ(groups, (std::vector<std::string>{"127.0.0.0/8", "::1/128"}));
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsAccessPolicyTest, SecurePortRefusesUnprivilegedPorts) {
  ServerProcess server(false, "secure_port = true\n");
  ASSERT_TRUE(server.Start()) << server.log();
  RawConnection high(server.port());
  ASSERT_TRUE(high.SendRecord(CallAs(1, kNfsProg, 3, 1, 1000, 1000, HandleArgs(RootLikeHandle()))));
  EXPECT_EQ(Denial(high.ReadRecord()), std::make_pair(1u, kAuthTooWeak));
  ASSERT_TRUE(high.SendRecord(CallAs(2, kMountProg, 3, 1, 1000, 1000, HandleArgs("/"))));
  std::string mnt = Results(high.ReadRecord());
  EXPECT_EQ(XdrDecoder(mnt).U32(), static_cast<uint32_t>(MNT3ERR_ACCES));
  if (geteuid() == 0) {
    // Only root can bind below 1024, which is the point of the option.
    for (uint16_t port = 700; port < 1000; port++) {
      RawConnection low(server.port(), port);
      if (!low.bound() || !low.connected()) continue;
      ASSERT_TRUE(low.SendRecord(CallAs(2, kNfsProg, 3, 1, 1000, 1000, HandleArgs(RootLikeHandle()))));
      EXPECT_EQ(ReplyStat(low.ReadRecord()), 0u);
      break;
    }
  }
  ASSERT_TRUE(server.Stop()) << server.log();
}

// ---- Handles.

TEST(NfsHandleTest, ForgedHandlesAreStaleAndReadDirPlusNeedsSearch) {
  ServerProcess server(false, "squash = \"none\"\n");
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, vault, secret, shelf, book;
  auto admin = Connect(server, kRoot, &root);
  ASSERT_NE(admin, nullptr);
  ASSERT_EQ(admin->Mkdir(root, "vault", 0700, &vault), NFS3_OK);
  fattr3 secret_attr;
  ASSERT_EQ(admin->Create(vault, "secret", UNCHECKED, 0644, &secret, 0, &secret_attr), NFS3_OK);
  ASSERT_EQ(admin->Write(secret, 0, "top secret", FILE_SYNC), NFS3_OK);
  // Readable but not searchable by others.
  ASSERT_EQ(admin->Mkdir(root, "shelf", 0755, &shelf), NFS3_OK);
  ASSERT_EQ(admin->Create(shelf, "book", UNCHECKED, 0644, &book), NFS3_OK);
  ASSERT_EQ(admin->SetMode(shelf, 0744), NFS3_OK);

  std::string mroot;
  auto mallory = Connect(server, kMallory, &mroot);
  ASSERT_NE(mallory, nullptr);
  EXPECT_EQ(mallory->Lookup(vault, "secret"), NFS3ERR_ACCES);
  // What main's handles were (format byte, inode, generation 1), and a few
  // other guesses: all stale, none reads the file.
  ASSERT_EQ(secret.size(), 17u);
  for (uint64_t generation : {uint64_t{0}, uint64_t{1}, uint64_t{2}, secret_attr.fileid}) {
    std::string forged = secret.substr(0, 9);
    for (int shift = 56; shift >= 0; shift -= 8) forged.push_back(static_cast<char>(generation >> shift));
    if (forged == secret) continue;
    std::string data;
    EXPECT_EQ(mallory->Read(forged, 0, 100, &data), NFS3ERR_STALE) << generation;
    EXPECT_EQ(mallory->GetAttr(forged), NFS3ERR_STALE);
  }

  // READDIRPLUS of the readable, unsearchable directory: names only.
  READDIRPLUS3args args;
  std::memset(&args, 0, sizeof(args));
  args.dir = Fh(shelf);
  args.dircount = args.maxcount = 8192;
  int status = -1, entries = 0, with_handle = 0, with_attr = 0;
  ASSERT_TRUE(mallory->nfs().Call<READDIRPLUS3res>(
      rpc_nfs3_readdirplus_async, &args, [&](READDIRPLUS3res* res) {
        status = res->status;
        if (res->status != NFS3_OK) return;
        for (entryplus3* e = res->READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
          entries++;
          if (e->name_handle.handle_follows) with_handle++;
          if (e->name_attributes.attributes_follow) with_attr++;
        }
      }));
  EXPECT_EQ(status, NFS3_OK);
  EXPECT_EQ(entries, 3);  // ., .., book
  EXPECT_EQ(with_handle, 0);
  EXPECT_EQ(with_attr, 0);
  // The owner may search it and gets everything.
  std::vector<std::pair<std::string, uint64_t>> listed;
  EXPECT_EQ(admin->ListDir(shelf, true, &listed), NFS3_OK);
  ASSERT_TRUE(server.Stop()) << server.log();
}

// Issue 8, defect 5: a crash inside the flush window rolls back the inode
// number reservation; the restarted server hands the same number to a new
// file. The old handle must be stale, not a way into the new file.
TEST(NfsHandleTest, HandleOfFileLostInCrashNeverReachesItsNumberReused) {
  ServerProcess server(/*durable_commit=*/false, "squash = \"none\"\n", kLongFlushWindow);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, lost;
  fattr3 lost_attr;
  {
    auto c = Connect(server, kRoot, &root);
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->Create(root, "lost", UNCHECKED, 0644, &lost, 0, &lost_attr), NFS3_OK);
    ASSERT_EQ(c->Write(lost, 0, "old", UNSTABLE), NFS3_OK);
  }
  server.Kill();  // inside the flush window: the create is not in the bucket
  ASSERT_TRUE(server.Start()) << server.log();
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Lookup(root, "lost"), NFS3ERR_NOENT) << "the crash did not roll back the create";
  std::string reused;
  fattr3 reused_attr;
  ASSERT_EQ(c->Create(root, "someone-else", UNCHECKED, 0600, &reused, 0, &reused_attr), NFS3_OK);
  ASSERT_EQ(c->Write(reused, 0, "private data of another user", FILE_SYNC), NFS3_OK);
  // The number does come back; the generation tells the files apart.
  EXPECT_EQ(reused_attr.fileid, lost_attr.fileid);
  EXPECT_NE(reused, lost);
  std::string data;
  EXPECT_EQ(c->Read(lost, 0, 100, &data), NFS3ERR_STALE);
  EXPECT_EQ(c->Write(lost, 0, "overwrite", FILE_SYNC), NFS3ERR_STALE);
  EXPECT_EQ(c->GetAttr(lost), NFS3ERR_STALE);
  ASSERT_EQ(c->Read(reused, 0, 100, &data), NFS3_OK);
  EXPECT_EQ(data, "private data of another user");
  ASSERT_TRUE(server.Stop()) << server.log();
}

// ---- Resources.

TEST(NfsResourceTest, UnreadReplyMemoryIsBoundedPerConnection) {
  ServerProcess server(false);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, f;
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Create(root, "big", UNCHECKED, 0644, &f), NFS3_OK);
  std::string mib(1 << 20, 'x');
  ASSERT_EQ(c->Write(f, 0, mib, FILE_SYNC), NFS3_OK);
  std::string data;
  ASSERT_EQ(c->Read(f, 0, 1 << 20, &data), NFS3_OK);  // warm caches
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  size_t before = RssBytes(server.pid());
  constexpr int kConnections = 4, kReads = 64;
  std::vector<std::unique_ptr<RawConnection>> hogs;
  for (int i = 0; i < kConnections; i++) {
    auto raw = std::make_unique<RawConnection>(server.port());
    ASSERT_TRUE(raw->connected());
    int small = 4096;
    setsockopt(raw->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    std::string batch;
    for (int r = 0; r < kReads; r++) {
      std::string args = HandleArgs(f);
      XdrEncoder e(&args);
      e.U64(0);
      e.U32(1 << 20);
      std::string call = CallAs(r, kNfsProg, 3, 6, 0, 0, args);
      std::string framed;
      XdrEncoder(&framed).U32(0x80000000u | static_cast<uint32_t>(call.size()));
      batch += framed + call;
    }
    ASSERT_TRUE(raw->Send(batch));
    hogs.push_back(std::move(raw));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  size_t after = RssBytes(server.pid());
  size_t growth = after > before ? after - before : 0;
  // Each connection may hold 16 MiB of replies (plus one call); the rest is
  // slack for allocator and socket buffers. main grew by ~250 MiB here.
  EXPECT_LE(growth, size_t{kConnections} * (16u << 20) + (48u << 20))
      << "RSS " << before / 1048576 << " -> " << after / 1048576 << " MiB";
  // Still serving others.
  EXPECT_EQ(c->GetAttr(f), NFS3_OK);
  hogs.clear();
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsResourceTest, IdleConnectionsCloseAndNewClientsAreStillServed) {
  ServerProcess server(false, "squash = \"none\"\nmax_connections = 8\nmax_connections_per_client = 8\n"
                              "idle_timeout_seconds = 2\n");
  ASSERT_TRUE(server.Start()) << server.log();
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 8; i++) {
    idle.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The table is full of idle sockets; a new client still gets an answer.
  RawConnection fresh(server.port());
  ASSERT_TRUE(fresh.SendRecord(CallAs(1, kNfsProg, 3, 0, 0, 0)));
  EXPECT_EQ(ReplyStat(fresh.ReadRecord()), 0u);
  // After the idle timeout the server has closed the idle sockets.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  int closed = 0;
  for (auto& raw : idle) {
    pollfd p{raw->fd(), POLLIN, 0};
    if (poll(&p, 1, 100) == 1 && raw->ClosedByPeer()) closed++;
  }
  EXPECT_EQ(closed, 8);
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsResourceTest, PerClientConnectionCap) {
  ServerProcess server(false, "max_connections_per_client = 3\n");
  ASSERT_TRUE(server.Start()) << server.log();
  std::vector<std::unique_ptr<RawConnection>> open;
  for (int i = 0; i < 3; i++) {
    open.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(open.back()->SendRecord(CallAs(i, kNfsProg, 3, 0, 0, 0)));
    EXPECT_EQ(ReplyStat(open.back()->ReadRecord()), 0u);
  }
  RawConnection fourth(server.port());
  fourth.SendRecord(CallAs(9, kNfsProg, 3, 0, 0, 0));
  EXPECT_EQ(fourth.ReadRecord(), "");  // closed without an answer
  EXPECT_NE(server.log().find("max_connections_per_client"), std::string::npos);
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsResourceTest, SecondClientIsServedWhileTheFirstFloodsWrites) {
  ServerProcess server(/*durable_commit=*/true);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, f;
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Create(root, "flooded", UNCHECKED, 0644, &f), NFS3_OK);
  constexpr int kWrites = 48;
  RawConnection flood(server.port());
  std::string batch;
  std::string chunk(256 << 10, 'w');
  for (int i = 0; i < kWrites; i++) {
    std::string args = HandleArgs(f);
    XdrEncoder e(&args);
    e.U64(uint64_t{static_cast<uint64_t>(i)} * chunk.size());
    e.U32(static_cast<uint32_t>(chunk.size()));
    e.U32(2);  // FILE_SYNC: each one waits for the bucket
    e.Opaque(chunk);
    std::string call = CallAs(i, kNfsProg, 3, 7, 0, 0, args);
    std::string framed;
    XdrEncoder(&framed).U32(0x80000000u | static_cast<uint32_t>(call.size()));
    batch += framed + call;
  }
  std::atomic<int> flood_replies{0};
  std::thread reader([&] {
    for (int i = 0; i < kWrites; i++) {
      if (flood.ReadRecord().empty()) break;
      flood_replies++;
    }
  });
  // Sent from a thread of its own: Send returns only once the server has
  // read nearly all of the batch, by when a fast bucket has answered most
  // of it.
  std::atomic<bool> sent{false};
  std::thread sender([&] { sent = flood.Send(batch); });
  // Once the first write is answered the flood is at the server.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (flood_replies.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  EXPECT_GT(flood_replies.load(), 0);  // not ASSERT: the threads are joined below
  // The other client's GETATTR does not queue behind the whole flood.
  RawConnection other(server.port());
  ASSERT_TRUE(other.SendRecord(CallAs(1, kNfsProg, 3, 1, 0, 0, HandleArgs(root))));
  EXPECT_EQ(ReplyStat(other.ReadRecord()), 0u);
  int answered_first = flood_replies.load();
  reader.join();
  sender.join();
  EXPECT_TRUE(sent.load());
  EXPECT_EQ(flood_replies.load(), kWrites);
  EXPECT_LT(answered_first, kWrites / 2) << "the second client waited for most of the flood";
  ASSERT_TRUE(server.Stop()) << server.log();
}

// ---- Durability of directory changes.

TEST(NfsDurableTest, RenameAfterCommitSurvivesCrash) {
  ServerProcess server(/*durable_commit=*/true, "squash = \"none\"\n", kLongFlushWindow);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, tmp, dir, sub;
  {
    auto c = Connect(server, kRoot, &root);
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->Create(root, "target.tmp", UNCHECKED, 0644, &tmp), NFS3_OK);
    ASSERT_EQ(c->Write(tmp, 0, "new contents", UNSTABLE), NFS3_OK);
    ASSERT_EQ(c->Commit(tmp), NFS3_OK);
    RENAME3args args;
    std::memset(&args, 0, sizeof(args));
    args.from.dir = Fh(root);
    args.from.name = const_cast<char*>("target.tmp");
    args.to.dir = Fh(root);
    args.to.name = const_cast<char*>("target");
    int status = -1;
    ASSERT_TRUE(c->nfs().Call<RENAME3res>(rpc_nfs3_rename_async, &args,
                                          [&](RENAME3res* res) { status = res->status; }));
    ASSERT_EQ(status, NFS3_OK);
    ASSERT_EQ(c->Mkdir(root, "made", 0755, &dir), NFS3_OK);
    ASSERT_EQ(c->Mkdir(dir, "inside", 0755, &sub), NFS3_OK);
    ASSERT_EQ(c->Remove(dir, "nothing"), NFS3ERR_NOENT);
  }
  server.Kill();
  ASSERT_TRUE(server.Start()) << server.log();
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  std::string target, data;
  ASSERT_EQ(c->Lookup(root, "target", &target), NFS3_OK);
  EXPECT_EQ(c->Lookup(root, "target.tmp"), NFS3ERR_NOENT);
  ASSERT_EQ(c->Read(target, 0, 100, &data), NFS3_OK);
  EXPECT_EQ(data, "new contents");
  EXPECT_EQ(c->Lookup(dir, "inside"), NFS3_OK);
  ASSERT_TRUE(server.Stop()) << server.log();
}

// ---- READDIR cookies, WRITE size.

int ReadDirStatus(NfsClient& c, const std::string& dir, uint64_t cookie, uint64_t verifier,
                  uint64_t* verifier_out = nullptr, int* entries = nullptr) {
  READDIR3args args;
  std::memset(&args, 0, sizeof(args));
  args.dir = Fh(dir);
  args.cookie = cookie;
  std::memcpy(args.cookieverf, &verifier, sizeof(verifier));
  args.count = 4096;
  int status = -1;
  if (!c.nfs().Call<READDIR3res>(rpc_nfs3_readdir_async, &args, [&](READDIR3res* res) {
        status = res->status;
        if (res->status != NFS3_OK) return;
        if (verifier_out) std::memcpy(verifier_out, res->READDIR3res_u.resok.cookieverf, 8);
        if (entries) {
          *entries = 0;
          for (entry3* e = res->READDIR3res_u.resok.reply.entries; e; e = e->nextentry) (*entries)++;
        }
      })) {
    return -1;
  }
  return status;
}

TEST(NfsReadDirTest, CookiesNeverIssuedAreBadCookie) {
  ServerProcess server(false);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, dir, other;
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Mkdir(root, "listed", 0755, &dir), NFS3_OK);
  ASSERT_EQ(c->Mkdir(root, "other", 0755, &other), NFS3_OK);
  for (int i = 0; i < 5; i++) ASSERT_EQ(c->Create(dir, "f" + std::to_string(i), UNCHECKED, 0644), NFS3_OK);
  uint64_t verifier = 0;
  int entries = 0;
  ASSERT_EQ(ReadDirStatus(*c, dir, 0, 0, &verifier, &entries), NFS3_OK);
  EXPECT_EQ(entries, 7);
  EXPECT_NE(verifier, 0u);
  // 2^64 - 1 used to wrap around to a fresh listing.
  EXPECT_EQ(ReadDirStatus(*c, dir, ~uint64_t{0}, verifier), NFS3ERR_BAD_COOKIE);
  EXPECT_EQ(ReadDirStatus(*c, dir, 1000000, verifier), NFS3ERR_BAD_COOKIE);
  // A verifier of another directory.
  uint64_t other_verifier = 0;
  ASSERT_EQ(ReadDirStatus(*c, other, 0, 0, &other_verifier), NFS3_OK);
  EXPECT_EQ(ReadDirStatus(*c, dir, 4, other_verifier), NFS3ERR_BAD_COOKIE);
  // Issued cookies keep working, with the verifier or without.
  EXPECT_EQ(ReadDirStatus(*c, dir, 4, verifier, nullptr, &entries), NFS3_OK);
  EXPECT_EQ(entries, 3);
  EXPECT_EQ(ReadDirStatus(*c, dir, 4, 0), NFS3_OK);
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsWriteSizeTest, WritesBeyondWtmaxAreShort) {
  ServerProcess server(false);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, f;
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Create(root, "w", UNCHECKED, 0644, &f), NFS3_OK);
  uint32_t count = 0;
  std::string data((1 << 20) + 1000, 'a');
  ASSERT_EQ(c->Write(f, 0, data, FILE_SYNC, nullptr, nullptr, &count), NFS3_OK);
  EXPECT_EQ(count, 1u << 20);  // FSINFO's wtmax
  fattr3 attr;
  ASSERT_EQ(c->GetAttr(f, &attr), NFS3_OK);
  EXPECT_EQ(attr.size, 1u << 20);
  ASSERT_TRUE(server.Stop()) << server.log();
}

// ---- libnfs URLs.

TEST(NfsUrlTest, NfsCpToHostSlashFile) {
  ServerProcess server(false, "squash = \"none\"\n");
  ASSERT_TRUE(server.Start()) << server.log();
  std::string local = server.dir() + "/source.txt";
  std::ofstream(local) << "copied by nfs-cp\n";
  std::string query = "?version=3&nfsport=" + std::to_string(server.port()) +
                      "&mountport=" + std::to_string(server.port());
  // libnfs 4.0 itself refuses an empty export once it has listed the
  // exports to look for nested mounts ("Export is empty"), whatever the
  // server answers; without that traversal nfs://host/file mounts the
  // export root through MNT "".
  query += "&auto-traverse-mounts=0";
  std::string command = "nfs-cp " + local + " 'nfs://127.0.0.1/copied.txt" + query + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[256];
  while (fgets(buf, sizeof(buf), pipe)) output += buf;
  int rc = pclose(pipe);
  ASSERT_EQ(WEXITSTATUS(rc), 0) << output;
  std::string root, fh, data;
  auto c = Connect(server, kRoot, &root);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Lookup(root, "copied.txt", &fh), NFS3_OK);
  ASSERT_EQ(c->Read(fh, 0, 100, &data), NFS3_OK);
  EXPECT_EQ(data, "copied by nfs-cp\n");
  ASSERT_TRUE(server.Stop()) << server.log();
}

// ---- Secrets.

TEST(NfsSecretsTest, KeyFileIsPrivateAndExposedConfigIsReported) {
  ServerProcess server(false);
  ASSERT_TRUE(server.Start()) << server.log();
  // The test's config spells the password out and is 0644.
  chmod((server.dir() + "/pailfs.toml").c_str(), 0644);
  struct stat st;
  std::string key;
  for (const char* candidate : {"/bucket/pailfs.key", "/bucket/pailfs.key.o"}) {
    if (stat((server.dir() + candidate).c_str(), &st) == 0) key = candidate;
  }
  ASSERT_FALSE(key.empty()) << "no key file in the bucket";
  EXPECT_EQ(st.st_mode & 077, 0u) << std::oct << st.st_mode;
  ASSERT_TRUE(server.Stop()) << server.log();
  ASSERT_TRUE(server.Start()) << server.log();
  EXPECT_NE(server.log().find("readable by other users"), std::string::npos) << server.log();
  ASSERT_TRUE(server.Stop()) << server.log();
}

}  // namespace
}  // namespace pail::nfs::test
