// Changes made through NFS are seen at once through the FUSE mount of the
// same server, although the mount lets the kernel cache names and
// attributes for a minute (fuse/fuse_convert.h): the server invalidates
// what they made stale (fs/change_notifier.h, fuse/kernel_invalidator.h).
// Each check first makes the kernel cache the old state through the mount.
// Needs root and /dev/fuse; skipped without them.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "nfs_test_client.h"
#include "server_process.h"

namespace pail::nfs::test {
namespace {

bool Mounted(const std::string& mountpoint) {
  std::ifstream in("/proc/self/mounts");
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(" " + mountpoint + " fuse.pailfs ") != std::string::npos) return true;
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The names in a directory of the mount, listed through the kernel (which
// caches listings: OPENDIR is declined, see docs/fuse.md).
std::set<std::string> List(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) names.insert(e->d_name);
  closedir(d);
  return names;
}

class FuseCoherenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
      GTEST_SKIP() << "needs root and /dev/fuse";
    }
    char templ[] = "/tmp/pail-fuse-coherence-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    mnt_ = templ;
    server_ = std::make_unique<ServerProcess>(ServerProcess::ServersSection(
        [mnt = mnt_](const std::string& address) {
          return "[servers.nfs]\naddresses = [\"" + address +
                 "\"]\nsquash = \"none\"\n[servers.fuse]\nmountpoint = \"" + mnt + "\"\n";
        }));
    ASSERT_TRUE(server_->Start()) << server_->log();
    for (int i = 0; i < 300 && !Mounted(mnt_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(Mounted(mnt_)) << server_->log();
    client_ = NfsClient::Connect(server_->port());
    ASSERT_NE(client_, nullptr);
    auto root = client_->Mount("/");
    ASSERT_TRUE(root.has_value());
    root_ = *root;
  }
  void TearDown() override {
    client_.reset();
    if (server_) EXPECT_TRUE(server_->Stop()) << server_->log();
    server_.reset();
    if (!mnt_.empty()) rmdir(mnt_.c_str());
  }

  std::string Path(const std::string& name) { return mnt_ + "/" + name; }

  // Reads the file and stats it through the mount, so its pages and all of
  // its attributes are cached (a read alone marks atime stale, which makes
  // the next stat ask the server anyway).
  std::string CacheFile(const std::string& name) {
    std::string bytes = ReadFile(Path(name));
    struct stat st;
    EXPECT_EQ(stat(Path(name).c_str(), &st), 0);
    return bytes;
  }

  std::string mnt_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<NfsClient> client_;
  std::string root_;
};

TEST_F(FuseCoherenceTest, NfsChangesShowThroughTheMountAtOnce) {
  // A file written and read through the mount: its name, attributes and
  // pages are in the kernel's caches.
  {
    std::ofstream out(Path("f"), std::ios::binary);
    out << "one";
  }
  EXPECT_EQ(CacheFile("f"), "one");
  struct stat st;

  std::string fh;
  ASSERT_EQ(client_->Lookup(root_, "f", &fh), NFS3_OK);
  ASSERT_EQ(client_->Write(fh, 0, "two!", FILE_SYNC), NFS3_OK);
  ASSERT_EQ(stat(Path("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 4);
  EXPECT_EQ(ReadFile(Path("f")), "two!");

  EXPECT_EQ(CacheFile("f"), "two!");
  ASSERT_EQ(client_->SetMode(fh, 0600), NFS3_OK);
  ASSERT_EQ(stat(Path("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // A name the kernel remembers as absent, then created elsewhere; and a
  // listing the kernel cached before.
  ASSERT_NE(stat(Path("g").c_str(), &st), 0);
  EXPECT_EQ(List(mnt_).count("g"), 0u);
  ASSERT_EQ(client_->Create(root_, "g", UNCHECKED, 0644), NFS3_OK);
  EXPECT_EQ(List(mnt_).count("g"), 1u);
  EXPECT_EQ(stat(Path("g").c_str(), &st), 0);
  ASSERT_EQ(client_->Mkdir(root_, "d", 0755), NFS3_OK);
  ASSERT_EQ(stat(Path("d").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));

  // Names removed elsewhere are gone from the mount too.
  CacheFile("f");
  ASSERT_EQ(client_->Remove(root_, "f"), NFS3_OK);
  EXPECT_NE(stat(Path("f").c_str(), &st), 0);
  ASSERT_EQ(client_->Rmdir(root_, "d"), NFS3_OK);
  EXPECT_NE(stat(Path("d").c_str(), &st), 0);
  // And the directory's own attributes follow (nlink after the rmdir).
  struct stat root_st;
  ASSERT_EQ(stat(mnt_.c_str(), &root_st), 0);
  EXPECT_EQ(root_st.st_nlink, 2u);
}

}  // namespace
}  // namespace pail::nfs::test
