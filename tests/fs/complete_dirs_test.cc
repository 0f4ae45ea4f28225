// Directories made by this process answer for absent names from the dentry
// cache (complete_dirs.h) for as long as the cache holds all their entries.
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include "fs/complete_dirs.h"
#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

// Engine point lookups made by `body`.
template <typename Body>
uint64_t EngineGets(Body body) {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  body();
  const uint64_t gets = rocksdb::get_perf_context()->get_from_memtable_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return gets;
}

class CompleteDirsTest : public FsTest {
 protected:
  // Every name of `names` is found in `dir` as the inode it was made as.
  void ExpectFound(Ino dir, const std::vector<std::pair<std::string, Ino>>& names) {
    for (const auto& [name, ino] : names) {
      auto found = fs_->Lookup(Root(), dir, name);
      ASSERT_TRUE(found.ok()) << name << ": errno " << found.error();
      EXPECT_EQ(found->ino, ino) << name;
    }
  }

  // A new directory with files, a symlink, a hard link and a name renamed
  // in from elsewhere.
  std::vector<std::pair<std::string, Ino>> Populate(Ino d, int files) {
    std::vector<std::pair<std::string, Ino>> names;
    for (int i = 0; i < files; ++i) {
      names.emplace_back("f" + std::to_string(i), MakeFile(d, "f" + std::to_string(i)));
    }
    auto link = fs_->Symlink(Root(), d, "sym", "f0");
    EXPECT_TRUE(link.ok());
    names.emplace_back("sym", link->ino);
    EXPECT_TRUE(fs_->Link(Root(), names[0].second, d, "hard").ok());
    names.emplace_back("hard", names[0].second);
    Ino outside = MakeFile(kRootIno, "outside");
    EXPECT_TRUE(fs_->Rename(Root(), kRootIno, "outside", d, "moved_in").ok());
    names.emplace_back("moved_in", outside);
    return names;
  }
};

TEST_F(CompleteDirsTest, AbsentNamesOfANewDirectoryCostNoEngineLookup) {
  Ino d = MakeDir(kRootIno, "d");
  auto names = Populate(d, 50);
  const uint64_t gets = EngineGets([&] {
    for (int i = 0; i < 100; ++i) {
      EXPECT_ERRNO(fs_->Lookup(Root(), d, "absent" + std::to_string(i)), ENOENT);
    }
  });
  EXPECT_EQ(gets, 0u);
  ExpectFound(d, names);
  // A subdirectory made later is complete too; one removed and made again
  // under the same name is a new, empty directory.
  Ino sub = MakeDir(d, "sub");
  MakeFile(sub, "x");
  ASSERT_FS_OK(fs_->Unlink(Root(), sub, "x"));
  ASSERT_FS_OK(fs_->Rmdir(Root(), d, "sub"));
  Ino again = MakeDir(d, "sub");
  EXPECT_ERRNO(fs_->Lookup(Root(), again, "x"), ENOENT);
  // After a restart nothing is complete: the engine answers, and finds all.
  Remount();
  EXPECT_ERRNO(fs_->Lookup(Root(), d, "absent0"), ENOENT);
  ExpectFound(d, names);
  ExpectFsckClean();
}

// A cache too small for the directory lets entries go (or, at 0, keeps
// none): from then on its names are looked up in the engine again, and all
// are found.
class SmallDentryCacheTest : public CompleteDirsTest,
                             public ::testing::WithParamInterface<size_t> {
 protected:
  FsOptions Options() override {
    FsOptions o = CompleteDirsTest::Options();
    o.dentry_cache_entries = GetParam();
    return o;
  }
};

TEST_P(SmallDentryCacheTest, EntriesTheCacheLetGoAreFoundInTheEngine) {
  Ino d = MakeDir(kRootIno, "d");
  auto names = Populate(d, 300);
  ExpectFound(d, names);
  EXPECT_ERRNO(fs_->Lookup(Root(), d, "absent"), ENOENT);
  ExpectFsckClean();
}

INSTANTIATE_TEST_SUITE_P(Capacities, SmallDentryCacheTest, ::testing::Values(64, 0));

// Bounded: past kMaxDirs the set starts over with the directory added.
TEST(CompleteDirs, StartsOverWhenFull) {
  CompleteDirs dirs;
  for (Ino d = 1; d <= CompleteDirs::kMaxDirs; ++d) dirs.Add(d);
  EXPECT_TRUE(dirs.Contains(1));
  EXPECT_TRUE(dirs.Contains(CompleteDirs::kMaxDirs));
  dirs.Add(CompleteDirs::kMaxDirs + 1);
  EXPECT_FALSE(dirs.Contains(1));
  EXPECT_FALSE(dirs.Contains(CompleteDirs::kMaxDirs));
  EXPECT_TRUE(dirs.Contains(CompleteDirs::kMaxDirs + 1));
  dirs.Remove(CompleteDirs::kMaxDirs + 1);
  EXPECT_FALSE(dirs.Contains(CompleteDirs::kMaxDirs + 1));
}

}  // namespace
}  // namespace pail::fs::testing
