// Which READDIRPLUS pages get attributes (fuse/listing_hints.h): the table
// alone, then through the kernel with the filesystem mounted in this
// process (needs root and /dev/fuse).
#include "fuse/listing_hints.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mounted_fs_test.h"
#include "util/hash_slot.h"

namespace pail::fuse {
namespace {

using testing::FuseOpTotals;

TEST(ListingHints, OnlyLookupsThatAllMissedDropTheAttributes) {
  ListingHints hints;
  EXPECT_TRUE(hints.AttributesWanted(7));  // no lookup noted: the kernel's choice
  hints.NoteLookup(7, false);
  hints.NoteLookup(7, false);
  EXPECT_FALSE(hints.AttributesWanted(7));
  EXPECT_TRUE(hints.AttributesWanted(7));  // the page started a new record
  hints.NoteLookup(7, false);
  hints.NoteLookup(7, true);
  EXPECT_TRUE(hints.AttributesWanted(7));
  hints.NoteLookup(7, true);
  hints.NoteLookup(7, false);  // a found lookup since the last page stands
  EXPECT_TRUE(hints.AttributesWanted(7));
  // Another directory's misses say nothing of this one.
  hints.NoteLookup(8, false);
  EXPECT_TRUE(hints.AttributesWanted(7));
  EXPECT_FALSE(hints.AttributesWanted(8));
}

TEST(ListingHints, ADirectoryWhoseSlotWasTakenKeepsTheKernelsChoice) {
  ListingHints hints;
  // Find a directory sharing directory 5's slot.
  uint64_t other = 6;
  while (HashSlot(other, 12) != HashSlot(5, 12)) ++other;
  hints.NoteLookup(5, false);
  hints.NoteLookup(other, false);
  EXPECT_TRUE(hints.AttributesWanted(5));
  EXPECT_FALSE(hints.AttributesWanted(other));
}

TEST(ListingHints, ConcurrentNotesAndPages) {
  ListingHints hints;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&hints, t] {
      for (uint64_t i = 0; i < 20000; ++i) {
        const uint64_t dir = 1 + (i + t) % 64;
        if (i % 3 == 0) {
          (void)hints.AttributesWanted(dir);
        } else {
          hints.NoteLookup(dir, i % 5 == 0);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  hints.NoteLookup(3, true);
  EXPECT_TRUE(hints.AttributesWanted(3));
}

class ListingPagesTest : public testing::MountedFsTest {
 protected:
  // One getdents64 of at most a page: one READDIR(PLUS) request. Returns
  // the names and types read (none at the end).
  std::map<std::string, unsigned char> ReadPage(int fd) {
    alignas(8) char buf[4096];
    long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    EXPECT_GE(n, 0);
    std::map<std::string, unsigned char> page;
    for (long at = 0; at < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + at);
      page[d->d_name] = d->d_type;
      at += d->d_reclen;
    }
    return page;
  }
  // With one loop thread, a request's metrics are recorded once the server
  // has answered a later one (STATFS always reaches it).
  double Lookups() {
    struct statfs st;
    EXPECT_EQ(statfs(mountpoint_.c_str(), &st), 0);
    return FuseOpTotals("lookup").first;
  }
  // Whether stat() of dir/name had to ask the server (no dentry yet).
  bool StatLooksUp(const std::string& name) {
    const double before = Lookups();
    struct stat st;
    EXPECT_EQ(stat(Path("d/" + name).c_str(), &st), 0) << name;
    return Lookups() > before;
  }
};

// A page asked for only because a creator looked up a missing name comes
// without attributes (the kernel makes no dentries, so a stat of its
// entries looks them up); once a lookup finds a name, pages carry them
// again. Every entry is listed once, with its type, either way.
TEST_F(ListingPagesTest, PagesAskedOnlyByMissedLookupsComeWithoutAttributes) {
  fs::Ino d = MakeDir(fs::kRootIno, "d");
  std::map<std::string, unsigned char> expected = {{".", DT_DIR}, {"..", DT_DIR}};
  for (int i = 0; i < 300; ++i) {
    std::string name = "entry-with-a-name-of-some-length-" + std::to_string(i);
    if (i % 10 == 0) {
      MakeDir(d, name);
      expected[name] = DT_DIR;
    } else {
      MakeFile(d, name);
      expected[name] = DT_REG;
    }
  }
  int fd = open(Path("d").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  std::map<std::string, unsigned char> listed;
  auto take = [&](const std::map<std::string, unsigned char>& page) {
    for (const auto& [name, type] : page) EXPECT_TRUE(listed.emplace(name, type).second) << name;
  };
  auto first_regular = [](const std::map<std::string, unsigned char>& page) {
    for (const auto& [name, type] : page) {
      if (name != "." && name != "..") return name;
    }
    return std::string();
  };

  auto page1 = ReadPage(fd);  // the first page: attributes
  ASSERT_FALSE(page1.empty());
  take(page1);
  struct stat st;
  ASSERT_NE(stat(Path("d/not-there-yet").c_str(), &st), 0);  // a creator's lookup
  auto page2 = ReadPage(fd);
  ASSERT_FALSE(page2.empty());
  take(page2);
  EXPECT_FALSE(StatLooksUp(first_regular(page1)));
  EXPECT_TRUE(StatLooksUp(first_regular(page2)));  // a lookup that found its name
  auto page3 = ReadPage(fd);
  ASSERT_FALSE(page3.empty());
  take(page3);
  EXPECT_FALSE(StatLooksUp(first_regular(page3)));
  for (auto page = ReadPage(fd); !page.empty(); page = ReadPage(fd)) take(page);
  close(fd);
  EXPECT_EQ(listed, expected);
}

}  // namespace
}  // namespace pail::fuse
