// Permission checks, sticky and setgid directories, set-id clearing, chmod,
// chown and utimes rules.
#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

using PermissionsTest = FsTest;

// A caller whose supplementary groups are loaded on demand, as FUSE's are
// (read from /proc): `loads` counts the reads.
Credentials LazyUser(uint32_t uid, uint32_t gid, std::vector<uint32_t> groups, int* loads) {
  Credentials c(uid, gid);
  c.load_groups = [groups, loads] {
    ++*loads;
    return groups;
  };
  return c;
}

TEST_F(PermissionsTest, SupplementaryGroupsAreLoadedOnlyWhenTheyDecide) {
  Ino f = MakeFile(kRootIno, "f", 0640);
  Chown(f, 1000, 100);
  int loads = 0;
  // The owner, and a caller whose gid is the file's: no load.
  EXPECT_TRUE(fs_->Access(LazyUser(1000, 1, {100}, &loads), f, R_OK | W_OK).ok());
  EXPECT_TRUE(fs_->Access(LazyUser(2000, 100, {}, &loads), f, R_OK).ok());
  EXPECT_EQ(loads, 0);
  // Group and others differ on read (r against -): the groups decide.
  EXPECT_TRUE(fs_->Access(LazyUser(2000, 7, {5, 100}, &loads), f, R_OK).ok());
  EXPECT_EQ(loads, 1);
  EXPECT_ERRNO(fs_->Access(LazyUser(2000, 7, {5}, &loads), f, R_OK), EACCES);
  EXPECT_EQ(loads, 2);
  // 0644: group and others both read, neither writes, so membership
  // changes nothing and is never asked.
  Chmod(f, 0644);
  EXPECT_TRUE(fs_->Access(LazyUser(2000, 7, {100}, &loads), f, R_OK).ok());
  EXPECT_ERRNO(fs_->Access(LazyUser(2000, 7, {100}, &loads), f, W_OK), EACCES);
  EXPECT_EQ(loads, 2);
  // One load per request, however many checks it makes.
  Credentials member = LazyUser(2000, 7, {100}, &loads);
  EXPECT_TRUE(member.InGroup(100));
  EXPECT_FALSE(member.InGroup(5));
  EXPECT_EQ(loads, 3);
  // A group-only grant still works through the lazily loaded groups.
  Chmod(f, 0070);
  EXPECT_TRUE(fs_->Access(LazyUser(2000, 7, {100}, &loads), f, R_OK | W_OK | X_OK).ok());
  EXPECT_ERRNO(fs_->Access(LazyUser(2000, 7, {}, &loads), f, R_OK), EACCES);
}

TEST_F(PermissionsTest, OwnerGroupOtherAndSupplementaryGroups) {
  Ino f = MakeFile(kRootIno, "f", 0640);
  Chown(f, 1000, 100);
  EXPECT_TRUE(fs_->Access(User(1000, 1), f, R_OK | W_OK).ok());
  EXPECT_ERRNO(fs_->Access(User(1000, 1), f, X_OK), EACCES);
  EXPECT_TRUE(fs_->Access(User(2000, 100), f, R_OK).ok());
  EXPECT_ERRNO(fs_->Access(User(2000, 100), f, W_OK), EACCES);
  EXPECT_TRUE(fs_->Access(User(2000, 7, {5, 100}), f, R_OK).ok());
  EXPECT_ERRNO(fs_->Access(User(2000, 7, {5}), f, R_OK), EACCES);
  // The owner class applies first even when it grants less.
  Chmod(f, 0070);
  EXPECT_ERRNO(fs_->Access(User(1000, 100), f, R_OK), EACCES);
  EXPECT_TRUE(fs_->Access(User(2000, 100), f, R_OK | W_OK | X_OK).ok());
  // Root reads and writes anything, executes only what has an x bit.
  Chmod(f, 0600);
  EXPECT_TRUE(fs_->Access(Root(), f, R_OK | W_OK).ok());
  EXPECT_ERRNO(fs_->Access(Root(), f, X_OK), EACCES);
  Chmod(f, 0001);
  EXPECT_TRUE(fs_->Access(Root(), f, X_OK).ok());
  EXPECT_TRUE(fs_->Access(User(5, 5), f, F_OK).ok());
  EXPECT_ERRNO(fs_->Access(User(5, 5), 99999, F_OK), ESTALE);

  Chmod(f, 0640);
  EXPECT_ERRNO(fs_->Open(User(3000, 300), f, O_RDONLY), EACCES);
  EXPECT_ERRNO(fs_->Open(User(2000, 100), f, O_RDWR), EACCES);
  auto h = fs_->Open(User(2000, 100), f, O_RDONLY);
  ASSERT_FS_OK(h);
  EXPECT_ERRNO(fs_->Write(User(2000, 100), f, 0, "x", *h), EBADF);
  ASSERT_FS_OK(fs_->Release(*h));
  EXPECT_ERRNO(fs_->Release(*h), EBADF);
}

TEST_F(PermissionsTest, SearchPermissionOnEveryStep) {
  Ino d = MakeDir(kRootIno, "private", 0700);
  Chown(d, 1000, 100);
  Ino inner = MakeDir(d, "inner", 0777);
  MakeFile(inner, "f", 0666);
  EXPECT_ERRNO(fs_->Lookup(User(2000, 100), d, "inner"), EACCES);
  ASSERT_FS_OK(fs_->Lookup(User(1000, 100), d, "inner"));
  ASSERT_FS_OK(fs_->Lookup(User(2000, 100), inner, "f"));
  EXPECT_ERRNO(fs_->Create(User(2000, 100), d, "new", 0644, {}), EACCES);
  // Write without search is not enough either.
  Chmod(d, 0766);
  EXPECT_ERRNO(fs_->Create(User(2000, 100), d, "new", 0644, {}), EACCES);
  EXPECT_ERRNO(fs_->Unlink(User(2000, 100), d, "inner"), EACCES);
  Chmod(d, 0773);
  ASSERT_FS_OK(fs_->Create(User(2000, 100), d, "new", 0644, {}));
  EXPECT_ERRNO(fs_->ReadDir(User(3000, 300), d, 0, 0, false), EACCES);  // other: -wx
}

TEST_F(PermissionsTest, StickyDirectoryProtectsOthersFiles) {
  Ino tmp = MakeDir(kRootIno, "tmp", 01777);
  EXPECT_EQ(Stat(tmp).mode, S_IFDIR | 01777u);
  Credentials alice = User(1000, 100), bob = User(2000, 200);
  Ino a = MakeFile(tmp, "alice", 0666, alice);
  Ino ad = MakeDir(tmp, "alicedir", 0777, alice);
  EXPECT_ERRNO(fs_->Unlink(bob, tmp, "alice"), EPERM);
  EXPECT_ERRNO(fs_->Rmdir(bob, tmp, "alicedir"), EPERM);
  EXPECT_ERRNO(fs_->Rename(bob, tmp, "alice", tmp, "stolen"), EPERM);
  MakeFile(tmp, "bobs", 0644, bob);
  EXPECT_ERRNO(fs_->Rename(bob, tmp, "bobs", tmp, "alice"), EPERM);  // would replace alice's
  EXPECT_ERRNO(fs_->SetXattr(bob, tmp, "user.x", "v", 0), EPERM);
  // The file itself is writable by bob: stickiness is only about names.
  ASSERT_FS_OK(fs_->Write(bob, a, 0, "bob was here"));
  ASSERT_FS_OK(fs_->Rename(alice, tmp, "alice", tmp, "alice2"));
  ASSERT_FS_OK(fs_->Unlink(alice, tmp, "alice2"));
  ASSERT_FS_OK(fs_->Rmdir(Root(), tmp, "alicedir"));
  // The directory's owner may remove anything in it.
  Chown(tmp, 2000, 200);
  MakeFile(tmp, "alice3", 0644, alice);
  ASSERT_FS_OK(fs_->Unlink(bob, tmp, "alice3"));
  EXPECT_NE(ad, 0u);
}

TEST_F(PermissionsTest, SetgidDirectoryPassesGroupOn) {
  Ino shared = MakeDir(kRootIno, "shared", 02777);
  Chown(shared, 0, 500);
  Chmod(shared, 02777);
  Credentials user = User(1000, 100);
  auto f = fs_->Create(user, shared, "f", 0644, {});
  ASSERT_FS_OK(f);
  EXPECT_EQ(f->attr.gid, 500u);
  EXPECT_EQ(f->attr.mode & S_ISGID, 0u);
  auto sub = fs_->Mkdir(user, shared, "sub", 0755);
  ASSERT_FS_OK(sub);
  EXPECT_EQ(sub->gid, 500u);
  EXPECT_EQ(sub->mode, S_IFDIR | S_ISGID | 0755u);
  auto deeper = fs_->Create(user, sub->ino, "g", 0644, {});
  ASSERT_FS_OK(deeper);
  EXPECT_EQ(deeper->attr.gid, 500u);
  // A non-member cannot create a setgid executable in the inherited group.
  auto sg = fs_->Create(user, shared, "sg", 02755, {});
  ASSERT_FS_OK(sg);
  EXPECT_EQ(sg->attr.mode, S_IFREG | 0755u);
  auto member = fs_->Create(User(1000, 100, {500}), shared, "sg2", 02755, {});
  ASSERT_FS_OK(member);
  EXPECT_EQ(member->attr.mode, S_IFREG | 02755u);
  // Without setgid on the parent the creator's group is used.
  Ino plain = MakeDir(kRootIno, "plain", 0777);
  auto p = fs_->Create(user, plain, "f", 0644, {});
  ASSERT_FS_OK(p);
  EXPECT_EQ(p->attr.gid, 100u);
}

TEST_F(PermissionsTest, WriteAndTruncateClearSetIdBitsForNonRoot) {
  Ino f = MakeFile(kRootIno, "f", 0666);
  Chown(f, 1000, 100);
  Chmod(f, 06777);
  WriteAt(f, 0, "root keeps the bits");
  EXPECT_EQ(Stat(f).mode, S_IFREG | 06777u);
  WriteAt(f, 0, "user clears", User(1000, 100));
  EXPECT_EQ(Stat(f).mode, S_IFREG | 0777u);
  // setgid without group execute is a locking mark, not a privilege: kept.
  Chmod(f, 06766);
  WriteAt(f, 0, "x", User(2000, 200));
  EXPECT_EQ(Stat(f).mode, S_IFREG | 02766u);
  Chmod(f, 06777);
  SetAttrRequest trunc;
  trunc.size = 1;
  ASSERT_FS_OK(fs_->SetAttr(User(1000, 100), f, trunc));
  EXPECT_EQ(Stat(f).mode, S_IFREG | 0777u);
}

TEST_F(PermissionsTest, ChownRules) {
  Ino f = MakeFile(kRootIno, "f", 0644);
  Chown(f, 1000, 100);
  Chmod(f, 06755);
  Credentials owner = User(1000, 100, {200});
  SetAttrRequest give_away;
  give_away.uid = 2000;
  EXPECT_ERRNO(fs_->SetAttr(owner, f, give_away), EPERM);
  SetAttrRequest to_other_group;
  to_other_group.gid = 300;
  EXPECT_ERRNO(fs_->SetAttr(owner, f, to_other_group), EPERM);
  SetAttrRequest to_member_group;
  to_member_group.gid = 200;
  EXPECT_ERRNO(fs_->SetAttr(User(2000, 200), f, to_member_group), EPERM);  // not the owner
  auto changed = fs_->SetAttr(owner, f, to_member_group);
  ASSERT_FS_OK(changed);
  EXPECT_EQ(changed->gid, 200u);
  EXPECT_EQ(changed->mode, S_IFREG | 0755u);  // set-id bits cleared
  SetAttrRequest same_uid;
  same_uid.uid = 1000;
  ASSERT_FS_OK(fs_->SetAttr(owner, f, same_uid));
  Chmod(f, 06755);
  auto by_root = fs_->SetAttr(Root(), f, give_away);
  ASSERT_FS_OK(by_root);
  EXPECT_EQ(by_root->uid, 2000u);
  EXPECT_EQ(by_root->mode, S_IFREG | 0755u);
  // Directories keep their setgid bit across chown.
  Ino d = MakeDir(kRootIno, "d", 02755);
  Chown(d, 1000, 100);
  EXPECT_EQ(Stat(d).mode, S_IFDIR | 02755u);
}

TEST_F(PermissionsTest, ChmodRules) {
  Ino f = MakeFile(kRootIno, "f", 0644);
  Chown(f, 1000, 100);
  SetAttrRequest req;
  req.mode = 0600;
  EXPECT_ERRNO(fs_->SetAttr(User(2000, 100), f, req), EPERM);
  Attr before = Stat(f);
  auto r = fs_->SetAttr(User(1000, 100), f, req);
  ASSERT_FS_OK(r);
  EXPECT_EQ(r->mode, S_IFREG | 0600u);
  EXPECT_TRUE(before.ctime < r->ctime);
  EXPECT_TRUE(before.mtime == r->mtime);
  req.mode = S_IFDIR | 02755;  // type bits are ignored; setgid needs group membership
  auto sg = fs_->SetAttr(User(1000, 7), f, req);
  ASSERT_FS_OK(sg);
  EXPECT_EQ(sg->mode, S_IFREG | 0755u);
  sg = fs_->SetAttr(User(1000, 100), f, req);
  ASSERT_FS_OK(sg);
  EXPECT_EQ(sg->mode, S_IFREG | 02755u);
  req.mode = 01644;
  ASSERT_FS_OK(fs_->SetAttr(User(1000, 100), f, req));
  EXPECT_EQ(Stat(f).mode, S_IFREG | 01644u);
}

TEST_F(PermissionsTest, TimestampRules) {
  Ino f = MakeFile(kRootIno, "f", 0666);
  Chown(f, 1000, 100);
  struct timespec t{1234567890, 123456789};
  SetAttrRequest explicit_times;
  explicit_times.atime = TimeChange::At(t);
  explicit_times.mtime = TimeChange::At({1500000000, 999999999});
  EXPECT_ERRNO(fs_->SetAttr(User(2000, 200), f, explicit_times), EPERM);
  auto set = fs_->SetAttr(User(1000, 100), f, explicit_times);
  ASSERT_FS_OK(set);
  EXPECT_TRUE(set->atime == t);
  EXPECT_EQ(set->mtime.tv_nsec, 999999999);
  Attr after = Stat(f);
  EXPECT_TRUE(after.atime == t);  // nanoseconds survive the round trip
  // "now" needs ownership or write permission.
  SetAttrRequest now;
  now.atime = TimeChange::Now();
  now.mtime = TimeChange::Now();
  ASSERT_FS_OK(fs_->SetAttr(User(2000, 200), f, now));  // 0666: writable
  Chmod(f, 0644);
  EXPECT_ERRNO(fs_->SetAttr(User(2000, 200), f, now), EACCES);
  // Omitting one keeps it.
  SetAttrRequest only_mtime;
  only_mtime.mtime = TimeChange::At(t);
  Attr before = Stat(f);
  auto r = fs_->SetAttr(Root(), f, only_mtime);
  ASSERT_FS_OK(r);
  EXPECT_TRUE(r->atime == before.atime);
  EXPECT_TRUE(r->mtime == t);
  SetAttrRequest bad;
  bad.mtime = TimeChange::At({1, 1000000000});
  EXPECT_ERRNO(fs_->SetAttr(Root(), f, bad), EINVAL);
  // NFS guard.
  SetAttrRequest guarded;
  guarded.mode = 0600;
  guarded.guard_ctime = timespec{1, 2};
  EXPECT_ERRNO(fs_->SetAttr(Root(), f, guarded), kErrNotSync);
  guarded.guard_ctime = Stat(f).ctime;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, guarded));
}

TEST_F(PermissionsTest, TruncateNeedsWritePermissionUnlessHandleIsWritable) {
  Ino f = MakeFile(kRootIno, "f", 0644);
  Chown(f, 1000, 100);
  WriteAt(f, 0, "0123456789");
  SetAttrRequest trunc;
  trunc.size = 4;
  EXPECT_ERRNO(fs_->SetAttr(User(2000, 100), f, trunc), EACCES);
  auto h = fs_->Open(User(1000, 100), f, O_RDWR);
  ASSERT_FS_OK(h);
  Chmod(f, 0444);
  EXPECT_ERRNO(fs_->SetAttr(User(1000, 100), f, trunc), EACCES);
  trunc.handle = *h;
  ASSERT_FS_OK(fs_->SetAttr(User(1000, 100), f, trunc));
  EXPECT_EQ(Stat(f).size, 4u);
  ASSERT_FS_OK(fs_->Release(*h));
  Ino d = MakeDir(kRootIno, "d");
  SetAttrRequest dir_trunc;
  dir_trunc.size = 0;
  EXPECT_ERRNO(fs_->SetAttr(Root(), d, dir_trunc), EISDIR);
  auto fifo = fs_->Mknod(Root(), kRootIno, "fifo", S_IFIFO | 0666, 0);
  ASSERT_FS_OK(fifo);
  EXPECT_ERRNO(fs_->SetAttr(Root(), fifo->ino, dir_trunc), EINVAL);
}

TEST_F(PermissionsTest, StatelessAccessLetsTheOwnerThrough) {
  Ino f = MakeFile(kRootIno, "f", 0644);
  Chown(f, 1000, 100);
  Chmod(f, 0000);
  ASSERT_FS_OK(fs_->Write(User(1000, 100), f, 0, "owner"));
  ASSERT_FS_OK(fs_->Read(User(1000, 100), f, 0, 10));
  EXPECT_ERRNO(fs_->Read(User(2000, 100), f, 0, 10), EACCES);
  EXPECT_ERRNO(fs_->Write(User(2000, 100), f, 0, "x"), EACCES);
}

}  // namespace
}  // namespace pail::fs::testing
