// The INIT reply asks for FUSE_HANDLE_KILLPRIV_V2 (fuse/device_io.h): the
// kernel then stops asking for a file's capabilities before each write, and
// the core drops them itself. Mounts the filesystem in this process; needs
// root and /dev/fuse.
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "mounted_fs_test.h"

namespace pail::fuse {
namespace {

using testing::FuseOpTotals;

class DeviceIoTest : public testing::MountedFsTest {
 protected:
  // A request's metrics are recorded after its reply; with one loop thread,
  // once the server has answered another request (STATFS always reaches
  // it), those of every earlier one are.
  void AwaitMetrics() {
    struct statfs st;
    ASSERT_EQ(statfs(mountpoint_.c_str(), &st), 0);
  }
};

TEST_F(DeviceIoTest, WritesAfterTheFirstSendNoCapabilityLookups) {
  int fd = open(Path("f").c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "a", 1), 1);  // the first write may look
  AwaitMetrics();
  const double lookups_before = FuseOpTotals("getxattr").first;
  const double writes_before = FuseOpTotals("write").first;
  constexpr int kWrites = 50;
  for (int i = 0; i < kWrites; ++i) ASSERT_EQ(write(fd, "b", 1), 1);
  ASSERT_EQ(close(fd), 0);
  AwaitMetrics();
  EXPECT_EQ(FuseOpTotals("write").first - writes_before, kWrites);
  EXPECT_EQ(FuseOpTotals("getxattr").first - lookups_before, 0);
}

// Capabilities given where the kernel does not see it (over NFS or 9P, say)
// after it stopped looking still go with the next write: the core drops
// them.
TEST_F(DeviceIoTest, CapabilitiesGivenBehindTheKernelsBackGoWithTheNextWrite) {
  int fd = open(Path("f").c_str(), O_CREAT | O_WRONLY, 0755);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "abc", 3, 0), 3);
  ASSERT_EQ(pwrite(fd, "abc", 3, 0), 3);
  auto found = fs_->Lookup(fs::Credentials::Root(), fs::kRootIno, "f");
  ASSERT_TRUE(found.ok());
  // setcap's value: revision 2, CAP_NET_BIND_SERVICE permitted and effective.
  const uint32_t words[5] = {0x02000001u, 1u << 10, 0, 0, 0};
  const std::string capability(reinterpret_cast<const char*>(words), sizeof words);
  ASSERT_TRUE(
      fs_->SetXattr(fs::Credentials::Root(), found->ino, "security.capability", capability, 0).ok());
  AwaitMetrics();
  const double lookups_before = FuseOpTotals("getxattr").first;
  ASSERT_EQ(pwrite(fd, "x", 1, 1), 1);
  AwaitMetrics();
  EXPECT_EQ(FuseOpTotals("getxattr").first - lookups_before, 0) << "the kernel looked after all";
  auto after = fs_->GetXattr(fs::Credentials::Root(), found->ino, "security.capability");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error(), ENODATA);
  errno = 0;
  EXPECT_EQ(fgetxattr(fd, "security.capability", nullptr, 0), -1);
  EXPECT_EQ(errno, ENODATA);
  ASSERT_EQ(close(fd), 0);
}

}  // namespace
}  // namespace pail::fuse
