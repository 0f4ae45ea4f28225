// Rename: plain, replacing, no-replace, exchange, and moving directories.
#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

using RenameTest = FsTest;

TEST_F(RenameTest, WithinOneDirectory) {
  Ino f = MakeFile(kRootIno, "a");
  WriteAt(f, 0, "content");
  Attr before = Stat(f);
  ASSERT_FS_OK(fs_->Rename(Root(), kRootIno, "a", kRootIno, "b"));
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, "a"), ENOENT);
  auto b = fs_->Lookup(Root(), kRootIno, "b");
  ASSERT_FS_OK(b);
  EXPECT_EQ(b->ino, f);
  EXPECT_TRUE(before.ctime < b->ctime);
  EXPECT_EQ(ReadAt(f, 0, 100), "content");
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "a", kRootIno, "c"), ENOENT);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, ".", kRootIno, "c"), EINVAL);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "b", kRootIno, ".."), EINVAL);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "b", kRootIno, "x/y"), EINVAL);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "b", f, "y"), ENOTDIR);
  ExpectFsckClean();
}

TEST_F(RenameTest, ReplacesFileAndFreesIt) {
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  WriteAt(a, 0, "new");
  WriteAt(b, 0, std::string(100000, 'o'));
  ASSERT_TRUE(fs_->SyncAll().ok());
  ASSERT_FS_OK(fs_->Rename(Root(), kRootIno, "a", kRootIno, "b"));
  auto found = fs_->Lookup(Root(), kRootIno, "b");
  ASSERT_FS_OK(found);
  EXPECT_EQ(found->ino, a);
  EXPECT_ERRNO(fs_->GetAttr(Root(), b), ESTALE);
  EXPECT_EQ(Stat(kRootIno).nlink, 2u);
  ExpectFsckClean();
}

TEST_F(RenameTest, ReplacingOneOfSeveralLinksKeepsTheInode) {
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  ASSERT_FS_OK(fs_->Link(Root(), b, kRootIno, "b2"));
  ASSERT_FS_OK(fs_->Rename(Root(), kRootIno, "a", kRootIno, "b"));
  EXPECT_EQ(Stat(b).nlink, 1u);
  // Two names of one inode: rename does nothing.
  ASSERT_FS_OK(fs_->Link(Root(), a, kRootIno, "a2"));
  ASSERT_FS_OK(fs_->Rename(Root(), kRootIno, "a2", kRootIno, "b"));
  ASSERT_FS_OK(fs_->Lookup(Root(), kRootIno, "a2"));
  EXPECT_EQ(Stat(a).nlink, 2u);
  ExpectFsckClean();
}

TEST_F(RenameTest, DirectoryRules) {
  Ino d1 = MakeDir(kRootIno, "d1");
  Ino d2 = MakeDir(kRootIno, "d2");
  Ino full = MakeDir(kRootIno, "full");
  MakeFile(full, "x");
  MakeFile(kRootIno, "file");
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "d1", kRootIno, "full"), ENOTEMPTY);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "d1", kRootIno, "file"), ENOTDIR);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "file", kRootIno, "d1"), EISDIR);
  EXPECT_EQ(Stat(kRootIno).nlink, 5u);
  ASSERT_FS_OK(fs_->Rename(Root(), kRootIno, "d1", kRootIno, "d2"));  // over an empty dir
  EXPECT_ERRNO(fs_->GetAttr(Root(), d2), ESTALE);
  EXPECT_EQ(Stat(kRootIno).nlink, 4u);
  auto moved = fs_->Lookup(Root(), kRootIno, "d2");
  ASSERT_FS_OK(moved);
  EXPECT_EQ(moved->ino, d1);
  ExpectFsckClean();
}

TEST_F(RenameTest, MovingDirectoryUpdatesLinksAndParent) {
  Ino a = MakeDir(kRootIno, "a");
  Ino b = MakeDir(kRootIno, "b");
  Ino c = MakeDir(a, "c");
  MakeFile(c, "inside");
  ASSERT_FS_OK(fs_->Rename(Root(), a, "c", b, "c2"));
  EXPECT_EQ(Stat(a).nlink, 2u);
  EXPECT_EQ(Stat(b).nlink, 3u);
  auto up = fs_->Lookup(Root(), c, "..");
  ASSERT_FS_OK(up);
  EXPECT_EQ(up->ino, b);
  ASSERT_FS_OK(fs_->Lookup(Root(), c, "inside"));
  // Moving a directory needs write permission on it (its ".." changes).
  Chmod(a, 0777);
  Chmod(b, 0777);
  Ino mine = MakeDir(a, "mine", 0555, User(1000, 100));
  EXPECT_ERRNO(fs_->Rename(User(1000, 100), a, "mine", b, "mine"), EACCES);
  ASSERT_FS_OK(fs_->Rename(User(1000, 100), a, "mine", a, "renamed"));  // same parent: fine
  EXPECT_NE(mine, 0u);
  ExpectFsckClean();
}

TEST_F(RenameTest, RefusesMovingDirectoryIntoItself) {
  Ino a = MakeDir(kRootIno, "a");
  Ino b = MakeDir(a, "b");
  Ino c = MakeDir(b, "c");
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "a", c, "a"), EINVAL);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "a", a, "self"), EINVAL);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "a", b, "x"), EINVAL);
  EXPECT_ERRNO(fs_->Rename(Root(), a, "b", c, "b", RenameFlags::kExchange), ENOENT);
  MakeDir(c, "leaf");
  EXPECT_ERRNO(fs_->Rename(Root(), b, "c", c, "leaf", RenameFlags::kExchange), EINVAL);
  // Replacing an ancestor: it is not empty.
  EXPECT_ERRNO(fs_->Rename(Root(), b, "c", kRootIno, "a"), ENOTEMPTY);
  ASSERT_FS_OK(fs_->Rename(Root(), b, "c", kRootIno, "c"));  // moving up is fine
  ExpectFsckClean();
}

TEST_F(RenameTest, NoReplace) {
  MakeFile(kRootIno, "a");
  MakeFile(kRootIno, "b");
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, "a", kRootIno, "b", RenameFlags::kNoReplace), EEXIST);
  ASSERT_FS_OK(fs_->Rename(Root(), kRootIno, "a", kRootIno, "c", RenameFlags::kNoReplace));
  ExpectFsckClean();
}

TEST_F(RenameTest, ExchangeSwapsFilesAndDirectories) {
  Ino d1 = MakeDir(kRootIno, "d1");
  Ino d2 = MakeDir(kRootIno, "d2");
  Ino f = MakeFile(d1, "f");
  Ino sub = MakeDir(d2, "sub");
  ASSERT_FS_OK(fs_->Rename(Root(), d1, "f", d2, "sub", RenameFlags::kExchange));
  auto now_dir = fs_->Lookup(Root(), d1, "f");
  ASSERT_FS_OK(now_dir);
  EXPECT_EQ(now_dir->ino, sub);
  auto now_file = fs_->Lookup(Root(), d2, "sub");
  ASSERT_FS_OK(now_file);
  EXPECT_EQ(now_file->ino, f);
  EXPECT_EQ(Stat(d1).nlink, 3u);
  EXPECT_EQ(Stat(d2).nlink, 2u);
  auto up = fs_->Lookup(Root(), sub, "..");
  ASSERT_FS_OK(up);
  EXPECT_EQ(up->ino, d1);
  EXPECT_ERRNO(fs_->Rename(Root(), d1, "f", d2, "missing", RenameFlags::kExchange), ENOENT);
  // Exchange within one directory.
  Ino x = MakeFile(kRootIno, "x");
  Ino y = MakeFile(kRootIno, "y");
  ASSERT_FS_OK(fs_->Rename(Root(), kRootIno, "x", kRootIno, "y", RenameFlags::kExchange));
  EXPECT_EQ(fs_->Lookup(Root(), kRootIno, "x")->ino, y);
  EXPECT_EQ(fs_->Lookup(Root(), kRootIno, "y")->ino, x);
  ExpectFsckClean();
}

TEST_F(RenameTest, NeedsWriteOnBothParents) {
  Ino src = MakeDir(kRootIno, "src", 0777);
  Ino dst = MakeDir(kRootIno, "dst", 0755);
  MakeFile(src, "f", 0644, User(1000, 100));
  EXPECT_ERRNO(fs_->Rename(User(1000, 100), src, "f", dst, "f"), EACCES);
  Chmod(dst, 0777);
  ASSERT_FS_OK(fs_->Rename(User(1000, 100), src, "f", dst, "f"));
}

}  // namespace
}  // namespace pail::fs::testing
