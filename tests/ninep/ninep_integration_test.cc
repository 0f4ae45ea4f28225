// 9P2000.L through our own test client (p9_client.*) against `pailfs run`
// as its own process on a file:// bucket: every message and its main
// errors, many tags in flight, flush, locks between two connections,
// xattrs, hostile sizes, the Unix socket, and fsync durability across
// SIGKILL and restart.
#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "../nfs/server_process.h"
#include "p9_client.h"

namespace pail::ninep::test {
namespace {

using pail::nfs::test::ServerProcess;

constexpr uint32_t kServerMaxMsize = 256 * 1024;
constexpr uint32_t kRdwr = 2, kCreat = 0100, kExcl = 0200, kTrunc = 01000;
constexpr uint8_t kRdlck = 0, kWrlck = 1, kUnlck = 2;
constexpr uint8_t kLockOk = 0, kLockBlocked = 1;

std::string SocketPath() {
  return "/tmp/pail-9p-test-" + std::to_string(getpid()) + ".sock";
}

std::string NinepSection(const std::string& address) {
  return "[servers.ninep]\naddresses = [\"" + address + "\"]\nunix_socket = \"" + SocketPath() +
         "\"\nmax_msize = " + std::to_string(kServerMaxMsize) +
         // Tests act as root and as other users: trust the uids they send.
         "\nsquash = \"none\"\n";
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class NinepTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess(ServerProcess::ServersSection(NinepSection));
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  static void TearDownTestSuite() {
    EXPECT_TRUE(server_->Stop()) << server_->log();
    delete server_;
    server_ = nullptr;
  }

  // A connection attached as root, with fid 1 on this test's own directory.
  void SetUp() override {
    c_ = Connect();
    ASSERT_NE(c_, nullptr);
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(c_->Mkdir(0, name_, 0777), 0);
    ASSERT_EQ(c_->Walk(0, 1, {name_}), 0);
  }

  std::unique_ptr<P9Client> Connect(uint32_t uid = 0, const std::string& aname = "") {
    auto c = P9Client::ConnectTcp(server_->port());
    if (!c || c->Start(uid, aname) != 0) return nullptr;
    return c;
  }

  // Creates `name` in the test directory with `data`, as fid `fid` (open).
  void MakeFile(uint32_t fid, const std::string& name, const std::string& data) {
    ASSERT_EQ(c_->Walk(1, fid, {}), 0);
    ASSERT_EQ(c_->Lcreate(fid, name, kRdwr | kCreat, 0644), 0);
    if (!data.empty()) {
      ASSERT_EQ(c_->Write(fid, 0, data), 0);
    }
  }

  static ServerProcess* server_;
  std::unique_ptr<P9Client> c_;
  std::string name_;
};

ServerProcess* NinepTest::server_ = nullptr;

TEST_F(NinepTest, VersionNegotiatesMsize) {
  auto c = P9Client::ConnectTcp(server_->port());
  uint32_t msize = 0;
  std::string version;
  ASSERT_EQ(c->Version(1 << 20, "9P2000.L", &msize, &version), 0);
  EXPECT_EQ(msize, kServerMaxMsize);
  EXPECT_EQ(version, "9P2000.L");
  ASSERT_EQ(c->Version(8192, "9P2000.L", &msize, &version), 0);
  EXPECT_EQ(msize, 8192u);
  ASSERT_EQ(c->Version(65536, "9P2000.u", &msize, &version), 0);
  EXPECT_EQ(version, "unknown");
  ASSERT_EQ(c->Version(100, "9P2000.L", &msize, &version), 0);
  EXPECT_EQ(version, "unknown");
  // A message over the negotiated msize closes the connection.
  ASSERT_EQ(c->Version(8192, "9P2000.L", &msize, &version), 0);
  ASSERT_EQ(c->Attach(0, 0), 0);
  EXPECT_TRUE(c->Send(Twrite, 1, Fields().u32(0).u64(0).u32(9000).raw(std::string(9000, 'x')).bytes()));
  EXPECT_TRUE(c->WaitClosed());
}

TEST_F(NinepTest, AuthIsRefusedAndAttachWorksWithoutIt) {
  P9Reply r = c_->Call(Tauth, Fields().u32(7).str("root").str("").u32(0).bytes());
  EXPECT_EQ(r.type, Rlerror);
  // Attaching with an afid is refused too.
  r = c_->Call(Tattach, Fields().u32(8).u32(7).str("").str("").u32(0).bytes());
  EXPECT_EQ(r.type, Rlerror);
}

TEST_F(NinepTest, AttachAnameSelectsSubdirectoryAndDotDotStaysInside) {
  ASSERT_EQ(c_->Mkdir(1, "sub", 0755), 0);
  auto c = Connect(0, "/" + name_ + "/sub");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Mkdir(0, "inside", 0755), 0);
  std::vector<P9Qid> qids;
  P9Attr root, up;
  ASSERT_EQ(c->Walk(0, 2, {"..", ".."}, &qids), 0);
  ASSERT_EQ(c->Getattr(0, &root), 0);
  ASSERT_EQ(c->Getattr(2, &up), 0);
  EXPECT_EQ(root.qid.path, up.qid.path);
  // Errors: a missing aname, a file as aname, ".." in aname.
  MakeFile(2, "file", "x");
  auto bad = P9Client::ConnectTcp(server_->port());
  ASSERT_EQ(bad->Version(65536, "9P2000.L"), 0);
  EXPECT_EQ(bad->Attach(0, 0, "/" + name_ + "/missing"), ENOENT);
  EXPECT_EQ(bad->Attach(0, 0, "/" + name_ + "/file"), ENOTDIR);
  EXPECT_EQ(bad->Attach(0, 0, "/" + name_ + "/sub/../.."), EINVAL);
}

TEST_F(NinepTest, WalkReportsPartialWalksAndErrors) {
  ASSERT_EQ(c_->Mkdir(1, "a", 0755), 0);
  ASSERT_EQ(c_->Walk(1, 2, {"a"}), 0);
  ASSERT_EQ(c_->Mkdir(2, "b", 0755), 0);
  std::vector<P9Qid> qids;
  ASSERT_EQ(c_->Walk(1, 3, {"a", "b"}, &qids), 0);
  ASSERT_EQ(qids.size(), 2u);
  EXPECT_EQ(qids[1].type, 0x80);
  const P9Qid b = qids[1];
  EXPECT_EQ(c_->Walk(1, 4, {"missing"}), ENOENT);
  ASSERT_EQ(c_->Walk(1, 4, {"a", "missing"}, &qids), 0);
  EXPECT_EQ(qids.size(), 1u);
  EXPECT_EQ(c_->Clunk(4), EBADF);  // a partial walk leaves newfid unused
  EXPECT_EQ(c_->Walk(99, 5, {"a"}), EBADF);
  EXPECT_EQ(c_->Walk(1, 3, {"a"}), EBADF);  // newfid in use
  std::vector<std::string> many(17, "a");
  EXPECT_EQ(c_->Walk(1, 6, many), EINVAL);
  EXPECT_EQ(c_->Walk(1, 6, {"x/y"}), EINVAL);
  // nwname 0 clones; walking a fid onto itself replaces it.
  ASSERT_EQ(c_->Walk(2, 6, {}), 0);
  ASSERT_EQ(c_->Walk(6, 6, {"b"}), 0);
  P9Attr attr;
  ASSERT_EQ(c_->Getattr(6, &attr), 0);
  EXPECT_EQ(attr.qid.path, b.path);
  EXPECT_TRUE(S_ISDIR(attr.mode));
}

TEST_F(NinepTest, CreateOpenReadWriteClunk) {
  P9Qid qid;
  ASSERT_EQ(c_->Walk(1, 2, {}), 0);
  ASSERT_EQ(c_->Lcreate(2, "f", kRdwr | kCreat | kExcl, 0640, 0, &qid), 0);
  EXPECT_EQ(qid.type, 0);
  std::string data = RandomBytes(200000, 1);
  for (size_t off = 0; off < data.size(); off += 65536) {
    uint32_t written = 0;
    ASSERT_EQ(c_->Write(2, off, data.substr(off, 65536), &written), 0);
    EXPECT_EQ(written, std::min<size_t>(65536, data.size() - off));
  }
  std::string back, part;
  while (back.size() < data.size()) {
    ASSERT_EQ(c_->Read(2, back.size(), 100000, &part), 0);
    ASSERT_FALSE(part.empty());
    back += part;
  }
  EXPECT_EQ(back, data);
  ASSERT_EQ(c_->Read(2, data.size(), 100, &part), 0);
  EXPECT_TRUE(part.empty());
  ASSERT_EQ(c_->Clunk(2), 0);
  EXPECT_EQ(c_->Clunk(2), EBADF);
  // Open an existing file; reading an unopened fid is EBADF.
  ASSERT_EQ(c_->Walk(1, 3, {"f"}), 0);
  EXPECT_EQ(c_->Read(3, 0, 10, &part), EBADF);
  ASSERT_EQ(c_->Lopen(3, 0), 0);
  EXPECT_EQ(c_->Lopen(3, 0), EBADF);
  ASSERT_EQ(c_->Read(3, 10, 10, &part), 0);
  EXPECT_EQ(part, data.substr(10, 10));
  EXPECT_EQ(c_->Write(3, 0, "x"), EBADF);  // opened read-only
  // Exclusive create of an existing name; O_TRUNC through lopen.
  ASSERT_EQ(c_->Walk(1, 4, {}), 0);
  EXPECT_EQ(c_->Lcreate(4, "f", kRdwr | kCreat | kExcl, 0644), EEXIST);
  EXPECT_EQ(c_->Lcreate(4, "bad/name", kRdwr | kCreat, 0644), EINVAL);
  ASSERT_EQ(c_->Walk(1, 5, {"f"}), 0);
  ASSERT_EQ(c_->Lopen(5, kRdwr | kTrunc), 0);
  P9Attr attr;
  ASSERT_EQ(c_->Getattr(5, &attr), 0);
  EXPECT_EQ(attr.size, 0u);
  // Lopen of a directory for writing.
  ASSERT_EQ(c_->Walk(1, 6, {}), 0);
  EXPECT_EQ(c_->Lopen(6, kRdwr), EISDIR);
}

TEST_F(NinepTest, GetattrAndSetattr) {
  MakeFile(2, "f", "hello");
  P9Attr a;
  ASSERT_EQ(c_->Getattr(2, &a), 0);
  EXPECT_EQ(a.valid & 0x7ff, 0x7ffu);
  EXPECT_TRUE(S_ISREG(a.mode));
  EXPECT_EQ(a.mode & 07777, 0644u);
  EXPECT_EQ(a.size, 5u);
  EXPECT_EQ(a.nlink, 1u);
  ASSERT_EQ(c_->Setattr(2, 0x1 | 0x8, 0600, 0, 0, 2), 0);  // mode + size
  ASSERT_EQ(c_->Setattr(2, 0x10 | 0x20 | 0x80 | 0x100, 0, 0, 0, 0, 1000, 5, 2000, 7), 0);
  ASSERT_EQ(c_->Setattr(2, 0x2 | 0x4, 0, 1234, 5678, 0), 0);
  ASSERT_EQ(c_->Getattr(2, &a), 0);
  EXPECT_EQ(a.mode & 07777, 0600u);
  EXPECT_EQ(a.size, 2u);
  EXPECT_EQ(a.atime_sec, 1000u);
  EXPECT_EQ(a.atime_nsec, 5u);
  EXPECT_EQ(a.mtime_sec, 2000u);
  EXPECT_EQ(a.uid, 1234u);
  EXPECT_EQ(a.gid, 5678u);
  EXPECT_EQ(c_->Getattr(77, &a), EBADF);
}

TEST_F(NinepTest, ReaddirOffsetsAreStableWhileTheDirectoryChanges) {
  constexpr int kFiles = 300;
  for (int i = 0; i < kFiles; i++) {
    ASSERT_EQ(c_->Mkdir(1, "d" + std::to_string(i), 0755), 0);
  }
  ASSERT_EQ(c_->Walk(1, 2, {}), 0);
  ASSERT_EQ(c_->Lopen(2, 0), 0);
  std::set<std::string> seen;
  uint64_t offset = 0;
  bool removed = false;
  for (;;) {
    std::vector<P9Dirent> ents;
    ASSERT_EQ(c_->Readdir(2, offset, 512, &ents), 0);
    if (ents.empty()) break;
    for (auto& e : ents) {
      EXPECT_TRUE(seen.insert(e.name).second) << "duplicate " << e.name;
      offset = e.offset;
    }
    if (!removed) {
      // Removing an entry already returned must not disturb the rest.
      ASSERT_EQ(c_->Unlinkat(1, ents.back().name == ".." ? "d0" : ents.back().name, 0x200), 0);
      removed = true;
    }
  }
  EXPECT_EQ(seen.size(), kFiles + 2u);  // and "." and ".."
  EXPECT_TRUE(seen.count(".") && seen.count(".."));
  // A count too small for one entry is an error, not an empty (EOF) reply.
  std::vector<P9Dirent> ents;
  EXPECT_EQ(c_->Readdir(2, 0, 10, &ents), EINVAL);
  MakeFile(3, "f", "");
  EXPECT_EQ(c_->Readdir(3, 0, 4096, &ents), ENOTDIR);
}

// The server asks the core for at most 1,024 entries at a time and keeps
// filling the reply while the client's count has room.
TEST_F(NinepTest, ReaddirFillsLargeCountsAcrossCoreBatches) {
  constexpr int kFiles = 3000;
  for (int i = 0; i < kFiles; i++) {
    ASSERT_EQ(c_->Mkdir(1, "e" + std::to_string(10000 + i), 0755), 0);
  }
  ASSERT_EQ(c_->Walk(1, 2, {}), 0);
  ASSERT_EQ(c_->Lopen(2, 0), 0);
  auto wire_bytes = [](const P9Dirent& e) { return 13 + 8 + 1 + 2 + e.name.size(); };

  std::vector<P9Dirent> all;
  ASSERT_EQ(c_->Readdir(2, 0, 200000, &all), 0);
  EXPECT_EQ(all.size(), kFiles + 2u);  // one reply: every name and the dots

  // A count between batches: the reply holds exactly what fits.
  constexpr uint32_t kCount = 40000;
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (;;) {
    std::vector<P9Dirent> ents;
    ASSERT_EQ(c_->Readdir(2, offset, kCount, &ents), 0);
    if (ents.empty()) break;
    size_t used = 0;
    for (const P9Dirent& e : ents) {
      used += wire_bytes(e);
      EXPECT_TRUE(seen.insert(e.name).second) << "duplicate " << e.name;
      offset = e.offset;
    }
    EXPECT_LE(used, kCount);
    std::vector<P9Dirent> next;
    ASSERT_EQ(c_->Readdir(2, offset, kCount, &next), 0);
    if (!next.empty()) {
      EXPECT_GT(used + wire_bytes(next.front()), kCount) << "room left for " << next.front().name;
    }
  }
  EXPECT_EQ(seen.size(), kFiles + 2u);
}

TEST_F(NinepTest, NamespaceOperations) {
  MakeFile(2, "f", "data");
  ASSERT_EQ(c_->Mkdir(1, "dir", 0750), 0);
  EXPECT_EQ(c_->Mkdir(1, "dir", 0750), EEXIST);
  ASSERT_EQ(c_->Symlink(1, "sym", "f"), 0);
  ASSERT_EQ(c_->Walk(1, 3, {"sym"}), 0);
  std::string target;
  ASSERT_EQ(c_->Readlink(3, &target), 0);
  EXPECT_EQ(target, "f");
  EXPECT_EQ(c_->Readlink(2, &target), EINVAL);
  ASSERT_EQ(c_->Mknod(1, "fifo", S_IFIFO | 0644, 0, 0), 0);
  ASSERT_EQ(c_->Mknod(1, "chr", S_IFCHR | 0644, 1, 3), 0);
  ASSERT_EQ(c_->Walk(1, 4, {"chr"}), 0);
  P9Attr a;
  ASSERT_EQ(c_->Getattr(4, &a), 0);
  EXPECT_TRUE(S_ISCHR(a.mode));
  EXPECT_EQ(a.rdev, makedev(1, 3));
  ASSERT_EQ(c_->Link(1, 2, "hard"), 0);
  ASSERT_EQ(c_->Getattr(2, &a), 0);
  EXPECT_EQ(a.nlink, 2u);
  EXPECT_EQ(c_->Link(1, 2, "hard"), EEXIST);
  // Trename moves the fid's file; the fid follows it.
  ASSERT_EQ(c_->Walk(1, 5, {"dir"}), 0);
  ASSERT_EQ(c_->Rename(2, 5, "moved"), 0);
  EXPECT_EQ(c_->Walk(1, 6, {"f"}), ENOENT);
  ASSERT_EQ(c_->Walk(5, 6, {"moved"}), 0);
  ASSERT_EQ(c_->Rename(2, 1, "back"), 0);
  ASSERT_EQ(c_->Walk(1, 7, {"back"}), 0);
  // Trenameat.
  ASSERT_EQ(c_->Renameat(1, "hard", 5, "hard2"), 0);
  EXPECT_EQ(c_->Renameat(1, "hard", 5, "hard3"), ENOENT);
  // Tunlinkat: files, directories, a non-empty directory.
  EXPECT_EQ(c_->Unlinkat(1, "dir", 0x200), ENOTEMPTY);
  EXPECT_EQ(c_->Unlinkat(1, "dir", 0), EISDIR);
  ASSERT_EQ(c_->Unlinkat(5, "hard2", 0), 0);
  ASSERT_EQ(c_->Unlinkat(5, "moved", 0), ENOENT);
  ASSERT_EQ(c_->Unlinkat(1, "fifo", 0), 0);
  ASSERT_EQ(c_->Unlinkat(1, "dir", 0x200), 0);
  EXPECT_EQ(c_->Unlinkat(1, "missing", 0), ENOENT);
  // Tremove removes and clunks, even when the removal fails.
  ASSERT_EQ(c_->Remove(3), 0);
  EXPECT_EQ(c_->Walk(1, 3, {"sym"}), ENOENT);
  ASSERT_EQ(c_->Mkdir(1, "full", 0755), 0);
  ASSERT_EQ(c_->Walk(1, 8, {"full"}), 0);
  ASSERT_EQ(c_->Mkdir(8, "x", 0755), 0);
  ASSERT_EQ(c_->Walk(1, 9, {"full"}), 0);
  EXPECT_EQ(c_->Remove(9), ENOTEMPTY);
  EXPECT_EQ(c_->Clunk(9), EBADF);
  // The attach root cannot be removed or renamed through its fid.
  EXPECT_EQ(c_->Walk(0, 10, {}), 0);
  EXPECT_EQ(c_->Remove(10), EBUSY);
}

TEST_F(NinepTest, StatfsAndFsync) {
  uint32_t type = 0, namelen = 0;
  uint64_t blocks = 0, files = 0;
  ASSERT_EQ(c_->Statfs(1, &type, &blocks, &files, &namelen), 0);
  EXPECT_EQ(type, 0x01021997u);
  EXPECT_GT(blocks, 0u);
  EXPECT_EQ(namelen, 255u);
  MakeFile(2, "f", "durable");
  EXPECT_EQ(c_->Fsync(2), 0);
  EXPECT_EQ(c_->Fsync(1), 0);  // directories too
  EXPECT_EQ(c_->Fsync(55), EBADF);
}

TEST_F(NinepTest, PermissionsFollowTheAttachedUser) {
  ASSERT_EQ(c_->Mkdir(1, "private", 0700), 0);
  ASSERT_EQ(c_->Mkdir(1, "open", 0777), 0);
  auto user = Connect(4321, "/" + name_);
  ASSERT_NE(user, nullptr);
  ASSERT_EQ(user->Walk(0, 1, {"private"}), 0);  // walking to it needs only search on the parent
  EXPECT_EQ(user->Mkdir(1, "x", 0755), EACCES);
  ASSERT_EQ(user->Walk(0, 2, {"open"}), 0);
  ASSERT_EQ(user->Walk(2, 3, {}), 0);
  ASSERT_EQ(user->Lcreate(3, "mine", kRdwr | kCreat, 0600, 777), 0);
  P9Attr a;
  ASSERT_EQ(user->Getattr(3, &a), 0);
  EXPECT_EQ(a.uid, 4321u);
  EXPECT_EQ(a.gid, 777u);  // the gid the client asked for
  EXPECT_EQ(user->Setattr(1, 0x1, 0777, 0, 0, 0), EPERM);
  // A writer who is not the owner truncates a setuid file: the client's
  // accompanying "clear setuid" mode change is not an EPERM, and the bit goes.
  ASSERT_EQ(c_->Walk(1, 9, {"open"}), 0);
  ASSERT_EQ(c_->Lcreate(9, "suid", kRdwr | kCreat, 04766), 0);
  ASSERT_EQ(c_->Setattr(9, 0x1, 04766, 0, 0, 0), 0);
  ASSERT_EQ(user->Walk(2, 4, {"suid"}), 0);
  ASSERT_EQ(user->Lopen(4, kRdwr), 0);
  EXPECT_EQ(user->Setattr(4, 0x1 | 0x8, 0766, 0, 0, 1), 0);
  ASSERT_EQ(c_->Getattr(9, &a), 0);
  EXPECT_EQ(a.size, 1u);
  EXPECT_EQ(a.mode & 07777, 0766u);
  EXPECT_EQ(user->Setattr(4, 0x1, 0777, 0, 0, 0), EPERM);  // anything more is still refused
}

TEST_F(NinepTest, Xattrs) {
  MakeFile(2, "f", "");
  std::string big = RandomBytes(20000, 7);
  ASSERT_EQ(c_->XattrSet(2, 3, "user.small", "v1", 0), 0);
  ASSERT_EQ(c_->XattrSet(2, 3, "user.big", big, 0), 0);
  std::string value;
  ASSERT_EQ(c_->XattrGet(2, 3, "user.small", &value), 0);
  EXPECT_EQ(value, "v1");
  ASSERT_EQ(c_->XattrGet(2, 3, "user.big", &value), 0);
  EXPECT_EQ(value, big);
  ASSERT_EQ(c_->XattrGet(2, 3, "", &value), 0);
  EXPECT_NE(value.find(std::string("user.small\0", 11)), std::string::npos);
  EXPECT_NE(value.find(std::string("user.big\0", 9)), std::string::npos);
  EXPECT_EQ(c_->XattrSet(2, 3, "user.small", "again", 1), EEXIST);      // XATTR_CREATE
  EXPECT_EQ(c_->XattrSet(2, 3, "user.nothere", "v", 2), ENODATA);       // XATTR_REPLACE
  ASSERT_EQ(c_->XattrSet(2, 3, "user.small", "", 2), 0);                // remove
  uint64_t size;
  EXPECT_EQ(c_->Xattrwalk(2, 3, "user.small", &size), ENODATA);
  // An announced size is a limit: more is refused, less fails at clunk.
  ASSERT_EQ(c_->Walk(2, 4, {}), 0);
  ASSERT_EQ(c_->Xattrcreate(4, "user.x", 3, 0), 0);
  EXPECT_EQ(c_->Write(4, 0, "toolong"), ENOSPC);
  ASSERT_EQ(c_->Write(4, 0, "ab"), 0);
  EXPECT_EQ(c_->Clunk(4), EINVAL);
  ASSERT_EQ(c_->Walk(2, 4, {}), 0);
  EXPECT_EQ(c_->Xattrcreate(4, "user.huge", 1ull << 40, 0), E2BIG);
}

TEST_F(NinepTest, ManyTagsInFlightAreAllAnswered) {
  MakeFile(2, "f", RandomBytes(64 * 1024, 3));
  constexpr int kRequests = 200;
  std::map<uint16_t, uint8_t> expect;
  for (int i = 0; i < kRequests; i++) {
    uint16_t tag = static_cast<uint16_t>(1000 + i);
    if (i % 3 == 0) {
      ASSERT_TRUE(c_->Send(Twrite, tag, Fields().u32(2).u64(i * 100).u32(100).raw(std::string(100, 'a' + i % 26)).bytes()));
      expect[tag] = Twrite + 1;
    } else if (i % 3 == 1) {
      ASSERT_TRUE(c_->Send(Tread, tag, Fields().u32(2).u64(i * 64).u32(4096).bytes()));
      expect[tag] = Tread + 1;
    } else {
      ASSERT_TRUE(c_->Send(Tgetattr, tag, Fields().u32(2).u64(0x7ff).bytes()));
      expect[tag] = Tgetattr + 1;
    }
  }
  for (int i = 0; i < kRequests; i++) {
    P9Reply r;
    ASSERT_TRUE(c_->Receive(&r)) << "reply " << i;
    auto it = expect.find(r.tag);
    ASSERT_NE(it, expect.end()) << "unexpected or repeated tag " << r.tag;
    EXPECT_EQ(r.type, it->second);
    expect.erase(it);
  }
}

TEST_F(NinepTest, FlushAnswersAfterTheFlushedRequest) {
  MakeFile(2, "f", "x");
  // Flushing a tag nobody uses is answered at once.
  P9Reply r = c_->Call(Tflush, Fields().u16(4242).bytes());
  EXPECT_EQ(r.type, Rflush);
  // A burst of fsyncs, each flushed right after being sent: every Rflush
  // comes after any reply to the request it flushed, and each is answered.
  constexpr int kPairs = 30;
  for (int i = 0; i < kPairs; i++) {
    ASSERT_TRUE(c_->Send(Tfsync, static_cast<uint16_t>(100 + i), Fields().u32(2).u32(0).bytes()));
    ASSERT_TRUE(c_->Send(Tflush, static_cast<uint16_t>(200 + i), Fields().u16(static_cast<uint16_t>(100 + i)).bytes()));
  }
  std::set<uint16_t> flushed;
  int replies = 0;
  while (flushed.size() < kPairs) {
    ASSERT_TRUE(c_->Receive(&r)) << "waiting for Rflush";
    if (r.tag >= 200) {
      EXPECT_EQ(r.type, Rflush);
      flushed.insert(r.tag);
    } else {
      EXPECT_FALSE(flushed.count(r.tag + 100)) << "reply to " << r.tag << " after its Rflush";
      EXPECT_EQ(r.type, Tfsync + 1);
      replies++;
    }
  }
  // The connection still works.
  P9Attr a;
  EXPECT_EQ(c_->Getattr(2, &a), 0);
}

// Metadata requests arriving while nothing else of the connection runs are
// handled where they are read, one after another: a burst of walk, getattr,
// clunk triples, each naming the fid the one before made, sent in one
// write, is answered in order without an error (were they spread over the
// worker threads, a getattr could run before its walk). A Tflush of such a
// request comes after its reply, and what it did stays done.
TEST_F(NinepTest, LoneMetadataRequestsRunInArrivalOrder) {
  MakeFile(2, "f", "x");
  ASSERT_EQ(c_->Clunk(2), 0);
  constexpr int kTriples = 100;
  std::string burst;
  std::vector<uint8_t> expect;
  auto add = [&](uint8_t type, uint16_t tag, const std::string& body) {
    burst += Fields().u32(static_cast<uint32_t>(7 + body.size())).u8(type).u16(tag).raw(body).bytes();
    expect.push_back(static_cast<uint8_t>(type == Tflush ? Rflush : type + 1));
  };
  for (int i = 0; i < kTriples; i++) {
    uint32_t fid = 500 + static_cast<uint32_t>(i);
    uint16_t tag = static_cast<uint16_t>(3 * i + 10);
    add(Twalk, tag, Fields().u32(1).u32(fid).u16(1).str("f").bytes());
    add(Tgetattr, tag + 1, Fields().u32(fid).u64(0x7ff).bytes());
    add(Tclunk, tag + 2, Fields().u32(fid).bytes());
  }
  add(Twalk, 1000, Fields().u32(1).u32(900).u16(1).str("f").bytes());
  add(Tflush, 1001, Fields().u16(1000).bytes());
  ASSERT_TRUE(c_->SendBytes(burst));
  for (size_t i = 0; i < expect.size(); i++) {
    P9Reply r;
    ASSERT_TRUE(c_->Receive(&r)) << "reply " << i;
    ASSERT_EQ(r.type, expect[i]) << "reply " << i << " (tag " << r.tag << ")";
  }
  P9Attr a;
  EXPECT_EQ(c_->Getattr(900, &a), 0);  // the flushed walk had already made fid 900
  EXPECT_EQ(a.size, 1u);
}

// A lone read or write runs where it was read when it need not wait (its
// bytes in memory, room in the write-back buffer) and on a worker when it
// must (bytes only a segment holds, after an fsync). Either way every byte
// lands where a model says; and a burst of writes to distinct ranges, sent
// in one go (so most arrive while another runs), is answered in full.
TEST_F(NinepTest, ReadsAndWritesOnAndOffTheIoThreadKeepEveryByte) {
  std::string model = RandomBytes(1 << 20, 7);
  MakeFile(2, "f", "");
  auto read_all = [&](std::string* out) {
    out->clear();
    std::string part;
    while (out->size() < model.size()) {
      ASSERT_EQ(c_->Read(2, out->size(), 128 * 1024, &part), 0);
      ASSERT_FALSE(part.empty());
      *out += part;
    }
  };
  for (size_t off = 0; off < model.size(); off += 128 * 1024) {
    ASSERT_EQ(c_->Write(2, off, model.substr(off, 128 * 1024)), 0);
  }
  ASSERT_EQ(c_->Fsync(2), 0);
  std::mt19937 rng(11);
  for (int i = 0; i < 300; i++) {
    uint64_t off = rng() % (model.size() - 8192);
    size_t n = 1 + rng() % 8192;
    if (rng() % 2) {
      std::string d = RandomBytes(n, 100 + i);
      uint32_t written = 0;
      ASSERT_EQ(c_->Write(2, off, d, &written), 0) << "write " << i;
      EXPECT_EQ(written, n);
      model.replace(off, n, d);
    } else {
      std::string got;
      ASSERT_EQ(c_->Read(2, off, static_cast<uint32_t>(n), &got), 0) << "read " << i;
      ASSERT_EQ(got, model.substr(off, n)) << "read " << i << " at " << off;
    }
    if (i % 100 == 99) {
      ASSERT_EQ(c_->Fsync(2), 0);  // back into segments
    }
  }
  constexpr int kWrites = 64;
  std::string burst;
  for (int k = 0; k < kWrites; k++) {
    std::string d = RandomBytes(512, 1000 + k);
    uint64_t off = static_cast<uint64_t>(k) * 16384 + static_cast<uint64_t>(k) * 7;
    std::string body = Fields().u32(2).u64(off).u32(512).raw(d).bytes();
    burst += Fields().u32(static_cast<uint32_t>(7 + body.size())).u8(Twrite)
                 .u16(static_cast<uint16_t>(2000 + k)).raw(body).bytes();
    model.replace(off, d.size(), d);
  }
  ASSERT_TRUE(c_->SendBytes(burst));
  std::set<uint16_t> answered;
  for (int k = 0; k < kWrites; k++) {
    P9Reply r;
    ASSERT_TRUE(c_->Receive(&r)) << "reply " << k;
    ASSERT_EQ(r.type, Twrite + 1) << "tag " << r.tag;
    EXPECT_EQ(Parse(r.body).u32(), 512u);
    EXPECT_TRUE(answered.insert(r.tag).second) << "tag " << r.tag << " answered twice";
  }
  std::string back;
  read_all(&back);
  EXPECT_TRUE(back == model);
  ASSERT_EQ(c_->Fsync(2), 0);
  read_all(&back);
  EXPECT_TRUE(back == model);
}

TEST_F(NinepTest, LocksAreSharedBetweenConnections) {
  MakeFile(2, "f", "data");
  auto other = Connect(0, "/" + name_);
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(other->Walk(0, 2, {"f"}), 0);
  ASSERT_EQ(other->Lopen(2, kRdwr), 0);
  uint8_t status = 99, type = 99;
  ASSERT_EQ(c_->Lock(2, kWrlck, 0, 0, 100, 11, "hostA", &status), 0);
  EXPECT_EQ(status, kLockOk);
  ASSERT_EQ(other->Lock(2, kWrlck, 1, 50, 10, 22, "hostB", &status), 0);
  EXPECT_EQ(status, kLockBlocked);
  ASSERT_EQ(other->Lock(2, kRdlck, 0, 0, 1, 22, "hostB", &status), 0);
  EXPECT_EQ(status, kLockBlocked);
  uint64_t start = 0, length = 0;
  uint32_t pid = 0;
  std::string client;
  ASSERT_EQ(other->Getlock(2, kRdlck, 0, 0, 22, "hostB", &type, &start, &length, &pid, &client), 0);
  EXPECT_EQ(type, kWrlck);
  EXPECT_EQ(start, 0u);
  EXPECT_EQ(length, 100u);
  EXPECT_EQ(pid, 11u);
  EXPECT_EQ(client, "hostA");
  // Outside the locked range, and read locks shared.
  ASSERT_EQ(other->Lock(2, kRdlck, 0, 200, 0, 22, "hostB", &status), 0);
  EXPECT_EQ(status, kLockOk);
  ASSERT_EQ(c_->Lock(2, kRdlck, 0, 300, 10, 11, "hostA", &status), 0);
  EXPECT_EQ(status, kLockOk);
  ASSERT_EQ(c_->Getlock(2, kWrlck, 250, 1, 11, "hostA", &type), 0);
  EXPECT_EQ(type, kRdlck);
  // Unlocking part of the range frees just that part.
  ASSERT_EQ(c_->Lock(2, kUnlck, 0, 40, 20, 11, "hostA", &status), 0);
  ASSERT_EQ(other->Lock(2, kWrlck, 0, 50, 10, 22, "hostB", &status), 0);
  EXPECT_EQ(status, kLockOk);
  ASSERT_EQ(other->Lock(2, kWrlck, 0, 30, 1, 22, "hostB", &status), 0);
  EXPECT_EQ(status, kLockBlocked);
  // A closed connection's locks go away.
  c_.reset();
  for (int i = 0; i < 100 && status != kLockOk; i++) {
    ASSERT_EQ(other->Lock(2, kWrlck, 0, 0, 100, 22, "hostB", &status), 0);
    if (status != kLockOk) usleep(20000);
  }
  EXPECT_EQ(status, kLockOk);
}

TEST_F(NinepTest, HostileSizesAndCountsAreRefused) {
  MakeFile(2, "f", "abc");
  // nwname past the maximum, a walk with fewer names than announced.
  P9Reply r = c_->Call(Twalk, Fields().u32(1).u32(9).u16(65535).bytes());
  EXPECT_EQ(r.type, Rlerror);
  r = c_->Call(Twalk, Fields().u32(1).u32(9).u16(3).str("a").bytes());
  EXPECT_EQ(r.type, Rlerror);
  // A write announcing more data than it carries.
  r = c_->Call(Twrite, Fields().u32(2).u64(0).u32(1 << 30).raw("xyz").bytes());
  EXPECT_EQ(r.type, Rlerror);
  // A huge read count is capped at msize.
  std::string data;
  ASSERT_EQ(c_->Read(2, 0, 0xffffffff, &data), 0);
  EXPECT_EQ(data, "abc");
  // A string longer than the message, unknown message types.
  r = c_->Call(Tmkdir, Fields().u32(1).u16(60000).raw("short").bytes());
  EXPECT_EQ(r.type, Rlerror);
  r = c_->Call(200, "");
  EXPECT_EQ(r.type, Rlerror);
  // An offset at the end of the range.
  uint32_t n = 0;
  EXPECT_NE(c_->Write(2, ~0ull - 1, "zz", &n), 0);
  // A size field below the header closes the connection.
  auto c = Connect();
  ASSERT_TRUE(c->SendBytes(Fields().u32(3).bytes()));
  EXPECT_TRUE(c->WaitClosed());
  // A size field far above msize closes it before anything is buffered.
  c = Connect();
  ASSERT_TRUE(c->SendBytes(Fields().u32(0xfffffff0).u8(Twrite).u16(1).bytes()));
  EXPECT_TRUE(c->WaitClosed());
}

TEST_F(NinepTest, UnixSocketServesTheSameFilesystem) {
  MakeFile(2, "f", "over unix");
  auto u = P9Client::ConnectUnix(SocketPath());
  ASSERT_NE(u, nullptr);
  ASSERT_EQ(u->Start(0, "/" + name_), 0);
  ASSERT_EQ(u->Walk(0, 1, {"f"}), 0);
  ASSERT_EQ(u->Lopen(1, 0), 0);
  std::string data;
  ASSERT_EQ(u->Read(1, 0, 100, &data), 0);
  EXPECT_EQ(data, "over unix");
}

// Its own server with a 1 s attach timeout: connections that never attach
// (silent, or stopped after Tversion) are closed; an attached one is not,
// however long it stays idle.
TEST(NinepAttachTimeoutTest, ConnectionsThatNeverAttachAreClosed) {
  ServerProcess server(ServerProcess::ServersSection([](const std::string& address) {
    return "[servers.ninep]\naddresses = [\"" + address +
           "\"]\nsquash = \"none\"\nattach_timeout_seconds = 1\n";
  }));
  ASSERT_TRUE(server.Start()) << server.log();
  auto attached = P9Client::ConnectTcp(server.port());
  ASSERT_NE(attached, nullptr);
  ASSERT_EQ(attached->Start(), 0);
  auto silent = P9Client::ConnectTcp(server.port());
  ASSERT_NE(silent, nullptr);
  auto versioned = P9Client::ConnectTcp(server.port());
  ASSERT_NE(versioned, nullptr);
  ASSERT_EQ(versioned->Version(8192, "9P2000.L"), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent->WaitClosed(10000));
  EXPECT_TRUE(versioned->WaitClosed(10000));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  // Well past the timeout, the attached connection still answers.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  P9Attr a;
  EXPECT_EQ(attached->Getattr(0, &a), 0);
  EXPECT_NE(server.log().find("no attach within 1 s"), std::string::npos) << server.log();
  EXPECT_TRUE(server.Stop()) << server.log();
}

// Its own server: write, fsync, SIGKILL, restart, read back; a fid of the
// old server means nothing to the new one.
TEST(NinepDurabilityTest, FsyncedDataSurvivesSigkill) {
  ServerProcess server(ServerProcess::ServersSection([](const std::string& address) {
    return "[servers.ninep]\naddresses = [\"" + address + "\"]\nsquash = \"none\"\n";
  }));
  ASSERT_TRUE(server.Start()) << server.log();
  std::string data = RandomBytes(300000, 9);
  {
    auto c = P9Client::ConnectTcp(server.port());
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->Start(), 0);
    ASSERT_EQ(c->Mkdir(0, "open", 0777), 0);
    ASSERT_EQ(c->Walk(0, 1, {"open"}), 0);
    ASSERT_EQ(c->Lcreate(1, "synced", kRdwr | kCreat, 0644), 0);
    for (size_t off = 0; off < data.size(); off += 100000) {
      ASSERT_EQ(c->Write(1, off, data.substr(off, 100000)), 0);
    }
    ASSERT_EQ(c->XattrSet(1, 2, "user.k", "v", 0), 0);
    ASSERT_EQ(c->Fsync(1), 0);
    server.Kill();
    P9Attr a;
    EXPECT_NE(c->Getattr(1, &a), 0);  // the connection is gone
  }
  ASSERT_TRUE(server.Start()) << server.log();
  auto c = P9Client::ConnectTcp(server.port());
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Start(), 0);
  P9Attr a;
  EXPECT_EQ(c->Getattr(1, &a), EBADF);  // the old session's fid
  ASSERT_EQ(c->Walk(0, 1, {"open", "synced"}), 0);
  ASSERT_EQ(c->Lopen(1, 0), 0);
  std::string back, part;
  while (back.size() < data.size()) {
    ASSERT_EQ(c->Read(1, back.size(), 200000, &part), 0);
    ASSERT_FALSE(part.empty());
    back += part;
  }
  EXPECT_EQ(back, data);
  std::string value;
  ASSERT_EQ(c->XattrGet(1, 2, "user.k", &value), 0);
  EXPECT_EQ(value, "v");
  EXPECT_TRUE(server.Stop()) << server.log();
}

// SIGTERM with requests in flight on several connections, each holding open
// fids: the server answers or drops them, releases every connection's fids
// before the filesystem closes, and exits 0. (A connection's close, or a
// worker's reply, queued after the I/O threads had run out of work once
// stayed queued, the connection with it, until the filesystem was gone: a
// crash at exit in a few stops in a hundred.)
TEST(NinepShutdownTest, StopsCleanlyWithRequestsInFlight) {
  constexpr int kRounds = 20, kConnections = 3, kRequests = 48;
  for (int round = 0; round < kRounds; round++) {
    ServerProcess server(ServerProcess::ServersSection([](const std::string& address) {
      return "[servers.ninep]\naddresses = [\"" + address + "\"]\nsquash = \"none\"\n";
    }));
    ASSERT_TRUE(server.Start()) << server.log();
    std::vector<std::unique_ptr<P9Client>> clients;
    for (int i = 0; i < kConnections; i++) {
      auto c = P9Client::ConnectTcp(server.port());
      ASSERT_NE(c, nullptr);
      ASSERT_EQ(c->Start(), 0);
      ASSERT_EQ(c->Walk(0, 1, {}), 0);
      ASSERT_EQ(c->Lcreate(1, "f" + std::to_string(i), kRdwr | kCreat, 0644), 0);
      clients.push_back(std::move(c));
    }
    const std::string block = RandomBytes(32 * 1024, round);
    for (auto& c : clients) {
      for (int i = 0; i < kRequests; i++) {
        uint16_t tag = static_cast<uint16_t>(100 + i);
        if (i % 8 == 7) {
          ASSERT_TRUE(c->Send(Tfsync, tag, Fields().u32(1).u32(0).bytes()));
        } else {
          ASSERT_TRUE(c->Send(Twrite, tag, Fields().u32(1).u64(i * block.size()).u32(block.size()).raw(block).bytes()));
        }
      }
    }
    // Odd rounds: the clients hang up while the server is stopping, so that
    // a connection's own close races the server's.
    if (round % 2) {
      kill(server.pid(), SIGTERM);
      std::this_thread::sleep_for(std::chrono::microseconds(150 * round));
      clients.clear();
    }
    ASSERT_TRUE(server.Stop()) << "round " << round << "\n" << server.log();
  }
}

// The access policy NFS has, with its defaults: root acts as anonuid, and
// TCP clients outside allowed_clients are refused.
TEST(NinepPolicyTest, RootIsSquashedByDefaultAndOutsidersAreRefused) {
  ServerProcess squashing(ServerProcess::ServersSection([](const std::string& address) {
    return "[servers.ninep]\naddresses = [\"" + address + "\"]\n";
  }));
  ASSERT_TRUE(squashing.Start()) << squashing.log();
  auto c = P9Client::ConnectTcp(squashing.port());
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Start(/*n_uname=*/0), 0);
  EXPECT_EQ(c->Mkdir(0, "x", 0755), EACCES);  // "/" is root's, 0755
  ASSERT_EQ(c->Walk(0, 1, {}), 0);
  EXPECT_EQ(c->Setattr(1, 0x1, 0777, 0, 0, 0), EPERM);
  c.reset();
  EXPECT_TRUE(squashing.Stop()) << squashing.log();

  ServerProcess closed(ServerProcess::ServersSection([](const std::string& address) {
    return "[servers.ninep]\naddresses = [\"" + address +
           "\"]\nallowed_clients = [\"192.0.2.0/24\"]\n";
  }));
  ASSERT_TRUE(closed.Start()) << closed.log();
  auto outsider = P9Client::ConnectTcp(closed.port());
  ASSERT_NE(outsider, nullptr);  // accepted by the kernel, then closed by the server
  EXPECT_TRUE(outsider->WaitClosed());
  EXPECT_TRUE(closed.Stop()) << closed.log();
}

// One client address holds at most max_connections_per_client
// connections; a closed one makes room again.
TEST(NinepPolicyTest, ConnectionsPerClientAreCapped) {
  ServerProcess server(ServerProcess::ServersSection([](const std::string& address) {
    return "[servers.ninep]\naddresses = [\"" + address +
           "\"]\nsquash = \"none\"\nmax_connections_per_client = 2\n";
  }));
  ASSERT_TRUE(server.Start()) << server.log();
  // The server notices a close asynchronously, so a connection may still
  // find the place of one just closed taken (Start()'s own readiness probe,
  // or `second` below): retry for a while.
  auto connect_served = [&] {
    for (int i = 0; i < 50; ++i) {
      auto c = P9Client::ConnectTcp(server.port());
      if (c != nullptr && c->Start(0) == 0) return c;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return std::unique_ptr<P9Client>();
  };
  auto first = connect_served();
  auto second = connect_served();
  ASSERT_NE(first, nullptr) << server.log();
  ASSERT_NE(second, nullptr) << server.log();
  auto third = P9Client::ConnectTcp(server.port());
  ASSERT_NE(third, nullptr);  // accepted by the kernel, then closed by the server
  EXPECT_TRUE(third->WaitClosed());
  EXPECT_NE(server.log().find("max_connections_per_client"), std::string::npos) << server.log();
  EXPECT_EQ(first->Walk(0, 1, {}), 0);  // the first two are still served
  second.reset();
  EXPECT_NE(connect_served(), nullptr) << "no room after a connection closed";
  first.reset();
  EXPECT_TRUE(server.Stop()) << server.log();
}

}  // namespace
}  // namespace pail::ninep::test
