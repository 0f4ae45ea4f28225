// The per-inode bounds on extended attributes (kXattrNamesMax,
// kXattrSpaceMax), the totals that enforce them, the upgrade that adds
// those totals to a bucket of format 2, and the count added to totals
// written without one.
#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

using XattrBoundTest = FsTest;

// "user." and `fill` characters then a 3-digit number: 255 bytes (with its
// NUL, 256 in a listxattr buffer).
std::string LongName(int i) {
  std::string digits = std::to_string(1000 + i).substr(1);
  return "user." + std::string(kXattrNameMax - 5 - 3, 'n') + digits;
}

std::string Names(FileSystem& fs, Ino ino) {
  auto names = fs.ListXattr(Root(), ino);
  EXPECT_TRUE(names.ok());
  std::string list;
  if (names.ok()) {
    for (const std::string& n : *names) list += n + '\0';
  }
  return list;
}

TEST_F(XattrBoundTest, NamesFillAListxattrBufferAtMost) {
  Ino f = MakeFile(kRootIno, "f");
  const int fit = static_cast<int>(kXattrNamesMax / (kXattrNameMax + 1));  // 256
  for (int i = 0; i < fit; ++i) {
    ASSERT_FS_OK(fs_->SetXattr(Root(), f, LongName(i), "v", 0));
  }
  EXPECT_EQ(Names(*fs_, f).size(), kXattrNamesMax);
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, LongName(fit), "v", 0), ENOSPC);
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.x", "", 0), ENOSPC);
  // Replacing a value needs no room for its name.
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, LongName(7), "new value", 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, LongName(7), "newer", kXattrReplace));
  // Removing one makes room for another of its size, not more.
  ASSERT_FS_OK(fs_->RemoveXattr(Root(), f, LongName(3)));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, LongName(fit), "v", 0));
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.x", "", 0), ENOSPC);
  EXPECT_EQ(Names(*fs_, f).size(), kXattrNamesMax);
  // Bounded per inode: another file has its own room.
  Ino g = MakeFile(kRootIno, "g");
  ASSERT_FS_OK(fs_->SetXattr(Root(), g, "user.x", "", 0));
  ExpectFsckClean();
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.x", "", 0), ENOSPC);  // kept across a remount
}

// What an attribute takes of its inode's space.
size_t Cost(std::string_view name, size_t value_size) {
  return name.size() + 1 + value_size + kXattrEntryCost;
}

TEST_F(XattrBoundTest, SpaceHoldsTheLargestValueBesideSmallOnes) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string big(kXattrValueMax, 'v');
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.big", big, 0));
  // Exactly the rest of the space, then nothing more.
  const size_t room = kXattrSpaceMax - Cost("user.big", big.size());
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.fill",
                             std::string(room - Cost("user.fill", 0), 'f'), 0));
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.x", "", 0), ENOSPC);
  // A single value over its own limit is E2BIG, whatever the room.
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.x", std::string(kXattrValueMax + 1, 'x'), 0),
               E2BIG);
  // Shrinking a value frees room; growing it back takes it again.
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.big", std::string(kXattrValueMax - 100, 'w'), 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.x", "", 0));
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.big", big, 0), ENOSPC);
  // Removing one frees its entry's cost too.
  ASSERT_FS_OK(fs_->RemoveXattr(Root(), f, "user.x"));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.y", std::string(100 - kXattrEntryCost - 7, 'y'), 0));
  ExpectFsckClean();
  // Unlinking the file takes its totals along (fsck would see a leftover).
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
  ExpectFsckClean();
}

// Small attributes are bounded by what each costs beside its bytes: a file
// takes them until the space is spent, not until the names fill a list.
TEST_F(XattrBoundTest, EachAttributeCostsItsEntry) {
  Ino f = MakeFile(kRootIno, "f");
  size_t used = 0;
  int set = 0;
  for (;; ++set) {
    std::string name = "user.var_" + std::to_string(set);
    std::string value = "orig-value-" + std::to_string(set);
    FsStatus s = fs_->SetXattr(Root(), f, name, value, kXattrCreate);
    if (!s.ok()) {
      EXPECT_ERRNO(s, ENOSPC);
      EXPECT_GT(used + Cost(name, value.size()), kXattrSpaceMax);
      break;
    }
    used += Cost(name, value.size());
    ASSERT_LE(used, kXattrSpaceMax);
  }
  EXPECT_GT(set, 1000);
  EXPECT_LT(set, 2000);  // the names alone (15 bytes each) would allow 4,000
  ExpectFsckClean();
}

TEST_F(XattrBoundTest, FsckChecksTheTotals) {
  Ino f = MakeFile(kRootIno, "f");
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.a", "12345", 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.b", "", 0));
  ASSERT_FS_OK(fs_->RemoveXattr(Root(), f, "user.b"));
  ExpectFsckClean();
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  auto* meta = engine_->column_family(kMetaColumnFamily);
  rocksdb::WriteBatch batch;
  batch.Put(meta, XattrTotalsKey(f), EncodeXattrTotals({7, 99}));
  batch.Put(meta, XattrTotalsKey(kRootIno), EncodeXattrTotals({1, 1}));
  ASSERT_TRUE(engine_->Write(&batch).ok());
  auto report = Fsck(*engine_);
  ASSERT_TRUE(report.ok());
  auto has = [&](const std::string& text) {
    for (const auto& p : report->problems) {
      if (p.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("xattr totals record 7 name and 99 value bytes in 0 attributes, the xattrs "
                  "hold 7 and 5 in 1"));
  EXPECT_TRUE(has("xattr totals for inode 1 which has no xattrs"));
  auto reopened = FileSystem::Open(*engine_, Options());
  ASSERT_TRUE(reopened.ok());
  fs_ = std::move(reopened).value();
}

// An inode already over the bound (as a bucket written before the bound
// existed could hold): no new name, but replacing and removing still work.
TEST_F(XattrBoundTest, InodeOverTheBoundCanStillShrink) {
  Ino f = MakeFile(kRootIno, "f");
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  auto* meta = engine_->column_family(kMetaColumnFamily);
  const int over = static_cast<int>(kXattrNamesMax / (kXattrNameMax + 1)) + 4;
  {
    rocksdb::WriteBatch batch;
    XattrTotals totals;
    for (int i = 0; i < over; ++i) {
      batch.Put(meta, XattrKey(f, LongName(i)), "old");
      totals.name_bytes += LongName(i).size() + 1;
      totals.value_bytes += 3;
      totals.count++;
    }
    batch.Put(meta, XattrTotalsKey(f), EncodeXattrTotals(totals));
    ASSERT_TRUE(engine_->Write(&batch).ok());
  }
  auto reopened = FileSystem::Open(*engine_, Options());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  fs_ = std::move(reopened).value();
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.new", "", 0), ENOSPC);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, LongName(0), "replaced", 0));
  ASSERT_FS_OK(fs_->RemoveXattr(Root(), f, LongName(1)));
  ExpectFsckClean();
}

// Totals written before the count was kept (16 bytes): fsck accepts them,
// and the next change counts the attributes, stores all three totals and
// bounds the space with the count.
TEST_F(XattrBoundTest, TotalsWithoutACountAreCountedOnTheNextChange) {
  Ino f = MakeFile(kRootIno, "f");
  const int small = 100;
  for (int i = 0; i < small; ++i) {
    ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.s" + std::to_string(i), "", 0));
  }
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  auto* meta = engine_->column_family(kMetaColumnFamily);
  std::string stored;
  ASSERT_TRUE(engine_->db()->Get(rocksdb::ReadOptions(), meta, XattrTotalsKey(f), &stored).ok());
  ASSERT_EQ(stored.size(), 24u);
  {
    rocksdb::WriteBatch batch;
    batch.Put(meta, XattrTotalsKey(f), stored.substr(0, 16));
    ASSERT_TRUE(engine_->Write(&batch).ok());
  }
  XattrTotals legacy;
  ASSERT_TRUE(DecodeXattrTotals(stored.substr(0, 16), &legacy));
  EXPECT_EQ(legacy.count, kXattrCountUnknown);
  auto reopened = FileSystem::Open(*engine_, Options());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  fs_ = std::move(reopened).value();
  ExpectFsckClean();

  // The space left once the 100 attributes are counted, filled exactly.
  const std::string big(kXattrValueMax, 'b');
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.big", big, 0));
  const size_t used = static_cast<size_t>(legacy.name_bytes) + small * kXattrEntryCost +
                      Cost("user.big", big.size());
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.fill",
                             std::string(kXattrSpaceMax - used - Cost("user.fill", 0), 'f'), 0));
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.x", "", 0), ENOSPC);
  ASSERT_TRUE(engine_->db()->Get(rocksdb::ReadOptions(), meta, XattrTotalsKey(f), &stored).ok());
  XattrTotals counted;
  ASSERT_TRUE(DecodeXattrTotals(stored, &counted));
  EXPECT_EQ(stored.size(), 24u);
  EXPECT_EQ(counted.count, static_cast<uint64_t>(small + 2));
  ExpectFsckClean();
}

}  // namespace
}  // namespace pail::fs::testing
