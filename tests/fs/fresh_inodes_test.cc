// What the core knows of inodes it made itself (filesystem_impl.h,
// complete_dirs_ and xattr_free_): absent names of new directories answered
// from the dentry cache while it holds all their entries, and no xattr
// lookups for inodes that never had one.
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include "fs/inode_set.h"
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

class FreshInodesTest : public FsTest {
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

TEST_F(FreshInodesTest, AbsentNamesOfANewDirectoryCostNoEngineLookup) {
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
class SmallDentryCacheTest : public FreshInodesTest,
                             public ::testing::WithParamInterface<size_t> {
 protected:
  FsOptions Options() override {
    FsOptions o = FreshInodesTest::Options();
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

// A file made here is written, asked for its capabilities and xattrs, and
// removed without an engine lookup for xattrs that cannot exist; once it
// has one, the xattrs are read from the engine and removed with the file.
TEST_F(FreshInodesTest, XattrsOfNewInodesAreKnownAbsentUntilSet) {
  Ino d = MakeDir(kRootIno, "d");
  Ino f = MakeFile(d, "f");
  const uint64_t gets = EngineGets([&] {
    WriteAt(f, 0, "hello");
    EXPECT_ERRNO(fs_->GetXattr(Root(), f, "security.capability"), ENODATA);
    auto names = fs_->ListXattr(Root(), f);
    ASSERT_FS_OK(names);
    EXPECT_TRUE(names->empty());
    ASSERT_FS_OK(fs_->Unlink(Root(), d, "f"));
  });
  EXPECT_EQ(gets, 0u);

  Ino g = MakeFile(d, "g");
  Ino sub = MakeDir(d, "sub");
  ASSERT_FS_OK(fs_->SetXattr(Root(), g, "user.a", "1", 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), g, "security.capability", std::string(20, 'c'), 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), sub, "user.dir", "2", 0));
  EXPECT_EQ(*fs_->GetXattr(Root(), g, "user.a"), "1");
  auto names = fs_->ListXattr(Root(), g);
  ASSERT_FS_OK(names);
  EXPECT_EQ(names->size(), 2u);
  // A write drops the capability it now has.
  WriteAt(g, 0, "x", User(0, 0));
  EXPECT_ERRNO(fs_->GetXattr(Root(), g, "security.capability"), ENODATA);
  ASSERT_FS_OK(fs_->RemoveXattr(Root(), g, "user.a"));
  ASSERT_FS_OK(fs_->SetXattr(Root(), g, "user.b", "3", 0));
  // Removed with their inodes: fsck finds no xattr left behind.
  ASSERT_FS_OK(fs_->Unlink(Root(), d, "g"));
  ASSERT_FS_OK(fs_->Rmdir(Root(), d, "sub"));
  ExpectFsckClean();
}

// Bounded: past kMaxInodes the set starts over with the inode added.
TEST(InodeSet, StartsOverWhenFull) {
  InodeSet set;
  for (Ino i = 1; i <= InodeSet::kMaxInodes; ++i) set.Add(i);
  EXPECT_TRUE(set.Contains(1));
  EXPECT_TRUE(set.Contains(InodeSet::kMaxInodes));
  set.Add(InodeSet::kMaxInodes + 1);
  EXPECT_FALSE(set.Contains(1));
  EXPECT_FALSE(set.Contains(InodeSet::kMaxInodes));
  EXPECT_TRUE(set.Contains(InodeSet::kMaxInodes + 1));
  set.Remove(InodeSet::kMaxInodes + 1);
  EXPECT_FALSE(set.Contains(InodeSet::kMaxInodes + 1));
}

}  // namespace
}  // namespace pail::fs::testing
