// The per-inode bounds on extended attributes (kXattrNamesMax,
// kXattrValuesMax), the totals that enforce them, and the upgrade that adds
// those totals to a bucket of format 2.
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

TEST_F(XattrBoundTest, ValuesTogetherAreBounded) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string big(kXattrValueMax, 'v');
  const int fit = static_cast<int>(kXattrValuesMax / kXattrValueMax);  // 16
  for (int i = 0; i < fit; ++i) {
    ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.v" + std::to_string(i), big, 0));
  }
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.more", "x", 0), ENOSPC);
  // A single value over its own limit is E2BIG, whatever the room.
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.more", std::string(kXattrValueMax + 1, 'x'), 0),
               E2BIG);
  // Shrinking a value frees room; replacing one with a same-sized one fits.
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.v0", std::string(kXattrValueMax - 10, 'w'), 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.more", "0123456789", 0));
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.v0", big, 0), ENOSPC);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.v1", std::string(kXattrValueMax, 'u'), 0));
  EXPECT_EQ(fs_->GetXattr(Root(), f, "user.v1")->size(), kXattrValueMax);
  // Unlinking the file takes its totals along (fsck would see a leftover).
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
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
  EXPECT_TRUE(has("xattr totals record 7 name and 99 value bytes, the xattrs hold 7 and 5"));
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

}  // namespace
}  // namespace pail::fs::testing
