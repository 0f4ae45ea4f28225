// fsck on clean and damaged filesystems, persistence across a remount on a
// fresh cache, crash leftovers, concurrency, and the record codecs.
#include <atomic>
#include <random>
#include <thread>

#include "fs/chunk_value.h"
#include "fs/inode_record.h"
#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

using FsckTest = FsTest;
using PersistTest = FsTest;
using ConcurrencyTest = FsTest;

bool HasProblem(const FsckReport& r, const std::string& needle) {
  for (const auto& p : r.problems) {
    if (p.find(needle) != std::string::npos) return true;
  }
  return false;
}

class FsckDamageTest : public FsTest {
 protected:
  // A small tree: /d/f (with data and an xattr), /d/sub, /g.
  void Populate() {
    d_ = MakeDir(kRootIno, "d");
    f_ = MakeFile(d_, "f");
    WriteAt(f_, 0, std::string(3 * kChunkSize, 'x'));
    ASSERT_FS_OK(fs_->SetXattr(Root(), f_, "user.k", "v", 0));
    sub_ = MakeDir(d_, "sub");
    g_ = MakeFile(kRootIno, "g");
    ASSERT_TRUE(fs_->Close().ok());
    fs_.reset();
  }
  rocksdb::ColumnFamilyHandle* meta() { return engine_->column_family(kMetaColumnFamily); }
  rocksdb::ColumnFamilyHandle* data() { return engine_->column_family(kDataColumnFamily); }
  void Apply(rocksdb::WriteBatch& batch) { ASSERT_TRUE(engine_->Write(&batch).ok()); }
  InodeRecord Record(Ino ino) {
    std::string v;
    EXPECT_TRUE(engine_->db()->Get(rocksdb::ReadOptions(), meta(), InodeKey(ino), &v).ok());
    InodeRecord r;
    EXPECT_TRUE(DecodeInode(v, &r));
    return r;
  }
  FsckReport Check() {
    auto r = Fsck(*engine_);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : FsckReport{};
  }
  Ino d_ = 0, f_ = 0, sub_ = 0, g_ = 0;
};

TEST_F(FsckTest, CleanTreeIsClean) {
  Ino a = MakeDir(kRootIno, "a");
  Ino b = MakeDir(a, "b");
  Ino f = MakeFile(b, "f");
  WriteAt(f, 0, std::string(100000, 'y'));
  WriteAt(f, 1ull << 40, "far");
  ASSERT_FS_OK(fs_->Link(Root(), f, a, "f2"));
  ASSERT_FS_OK(fs_->Symlink(Root(), a, "s", "b/f"));
  ASSERT_FS_OK(fs_->SetXattr(Root(), b, "user.x", "1", 0));
  FsckReport r = RunFsck();
  EXPECT_TRUE(r.clean());
  for (auto& p : r.problems) ADD_FAILURE() << p;
  EXPECT_EQ(r.inodes, 5u);
  EXPECT_EQ(r.directories, 3u);
  EXPECT_EQ(r.files, 1u);
  EXPECT_EQ(r.entries, 5u);
  EXPECT_EQ(r.chunks, 5u);
  EXPECT_EQ(r.data_bytes, 100003u);
}

TEST_F(FsckDamageTest, EntryPointingToMissingInode) {
  Populate();
  rocksdb::WriteBatch b;
  b.Delete(meta(), InodeKey(g_));
  Apply(b);
  FsckReport r = Check();
  EXPECT_FALSE(r.clean());
  EXPECT_TRUE(HasProblem(r, "points to missing inode")) << r.problems.front();
}

TEST_F(FsckDamageTest, WrongLinkCount) {
  Populate();
  InodeRecord rec = Record(g_);
  rec.nlink = 2;
  rocksdb::WriteBatch b;
  b.Put(meta(), InodeKey(g_), EncodeInode(rec));
  Apply(b);
  EXPECT_TRUE(HasProblem(Check(), "nlink 2 but 1 entries"));
}

TEST_F(FsckDamageTest, DirectoryCountersOff) {
  Populate();
  InodeRecord rec = Record(d_);
  rec.entries = 7;
  rec.nlink = 5;
  rocksdb::WriteBatch b;
  b.Put(meta(), InodeKey(d_), EncodeInode(rec));
  Apply(b);
  FsckReport r = Check();
  EXPECT_TRUE(HasProblem(r, "counts 7 entries but holds 2"));
  EXPECT_TRUE(HasProblem(r, "nlink 5 but has 1 subdirectories"));
}

// Listings start at first_cookie, so an entry below it would be hidden.
TEST_F(FsckDamageTest, EntryBelowFirstCookie) {
  Populate();
  InodeRecord rec = Record(d_);
  rec.first_cookie = rec.next_cookie;
  rocksdb::WriteBatch b;
  b.Put(meta(), InodeKey(d_), EncodeInode(rec));
  Apply(b);
  EXPECT_TRUE(HasProblem(Check(), "has cookie 3 outside"));
}

TEST_F(FsckDamageTest, DataAndXattrsLeftForDeletedInode) {
  Populate();
  // Delete the file's record and name but not its data or xattr.
  rocksdb::WriteBatch b;
  b.Delete(meta(), InodeKey(f_));
  b.Delete(meta(), DirEntryKey(d_, "f"));
  Apply(b);
  FsckReport r = Check();
  EXPECT_TRUE(HasProblem(r, "data left for inode"));
  EXPECT_TRUE(HasProblem(r, "xattr 'user.k' left for missing inode"));
  EXPECT_TRUE(HasProblem(r, "no matching entry"));  // the scan row remains
}

TEST_F(FsckDamageTest, StrayChunkAndWrongUsage) {
  Populate();
  rocksdb::WriteBatch b;
  b.Put(data(), ChunkKey(g_, 5), EncodeInlineChunk("stray"));
  Apply(b);
  FsckReport r = Check();
  EXPECT_TRUE(HasProblem(r, "past the end of the file"));
  EXPECT_TRUE(HasProblem(r, "used bytes but stores"));
}

TEST_F(FsckDamageTest, DamagedRecordAndUnknownKey) {
  Populate();
  rocksdb::WriteBatch b;
  b.Put(meta(), InodeKey(sub_), "garbage");
  b.Put(meta(), std::string("\x7f junk"), "x");
  Apply(b);
  FsckReport r = Check();
  EXPECT_TRUE(HasProblem(r, "damaged record"));
  EXPECT_TRUE(HasProblem(r, "unknown metadata key kind"));
}

TEST_F(FsckDamageTest, DirectoryLoopIsFound) {
  Populate();
  // Make /d/sub hold /d (and take d out of the root): a cycle cut off the root.
  DirEntryValue e{d_, 1000, S_IFDIR};
  InodeRecord sub = Record(sub_);
  InodeRecord d = Record(d_);
  InodeRecord root = Record(kRootIno);
  rocksdb::WriteBatch b;
  std::string old;
  ASSERT_TRUE(engine_->db()->Get(rocksdb::ReadOptions(), meta(), DirEntryKey(kRootIno, "d"), &old).ok());
  DirEntryValue old_entry;
  ASSERT_TRUE(DecodeDirEntry(old, &old_entry));
  b.Delete(meta(), DirEntryKey(kRootIno, "d"));
  b.Delete(meta(), DirScanKey(kRootIno, old_entry.cookie));
  root.entries--;
  root.nlink--;
  b.Put(meta(), InodeKey(kRootIno), EncodeInode(root));
  b.Put(meta(), DirEntryKey(sub_, "loop"), EncodeDirEntry(e));
  b.Put(meta(), DirScanKey(sub_, 1000), EncodeDirScan(d_, S_IFDIR, "loop"));
  sub.entries = 1;
  sub.nlink = 3;
  sub.next_cookie = 1001;
  d.parent = sub_;
  b.Put(meta(), InodeKey(sub_), EncodeInode(sub));
  b.Put(meta(), InodeKey(d_), EncodeInode(d));
  Apply(b);
  EXPECT_TRUE(HasProblem(Check(), "not reachable from the root"));
}

TEST_F(PersistTest, TreeSurvivesRemountOnFreshCache) {
  Ino a = MakeDir(kRootIno, "a", 0750);
  Ino f = MakeFile(a, "f", 0640);
  std::string data(200000, 'q');
  data[123456] = 'Z';
  WriteAt(f, 0, data);
  ASSERT_FS_OK(fs_->Symlink(Root(), kRootIno, "s", "a/f"));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.tag", "kept", 0));
  ASSERT_FS_OK(fs_->Link(Root(), f, kRootIno, "hard"));
  Attr before = Stat(f);
  Remount();
  Attr after = Stat(f);
  EXPECT_EQ(after.size, before.size);
  EXPECT_EQ(after.nlink, 2u);
  EXPECT_EQ(after.mode, S_IFREG | 0640u);
  EXPECT_TRUE(after.mtime == before.mtime);
  EXPECT_EQ(ReadAt(f, 0, 300000), data);
  auto s = fs_->Lookup(Root(), kRootIno, "s");
  ASSERT_FS_OK(s);
  EXPECT_EQ(*fs_->Readlink(Root(), s->ino), "a/f");
  EXPECT_EQ(*fs_->GetXattr(Root(), f, "user.tag"), "kept");
  EXPECT_EQ(fs_->Lookup(Root(), a, "f")->ino, f);
  // New inode numbers never reuse old ones after a restart.
  Ino g = MakeFile(kRootIno, "g");
  EXPECT_GT(g, f);
  EXPECT_EQ(fs_->counters().used_inodes, 5u);
  EXPECT_EQ(fs_->counters().used_bytes, 200000u);
  ExpectFsckClean();
}

TEST_F(PersistTest, UnflushedDataIsWrittenOnClose) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, "written just before close");
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 100), "written just before close");
}

TEST_F(ConcurrencyTest, ManyThreadsLeaveAConsistentTree) {
  Chmod(kRootIno, 0777);
  constexpr int kThreads = 6;
  constexpr int kOps = 400;
  std::vector<Ino> dirs;
  for (int i = 0; i < 4; ++i) dirs.push_back(MakeDir(kRootIno, "d" + std::to_string(i), 0777));
  std::atomic<int> unexpected{0};
  std::atomic<int> succeeded{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      Credentials cred = User(1000 + t, 100);
      auto pick = [&](int n) { return static_cast<int>(rng() % n); };
      for (int i = 0; i < kOps; ++i) {
        Ino dir = dirs[pick(4)];
        Ino other = dirs[pick(4)];
        std::string name = "n" + std::to_string(pick(20));
        std::string name2 = "n" + std::to_string(pick(20));
        int err = 0;
        int op = pick(9);
        switch (op) {
          case 0: err = fs_->Create(cred, dir, name, 0666, {}).error(); break;
          case 1: err = fs_->Mkdir(cred, dir, name, 0777).error(); break;
          case 2: err = fs_->Unlink(cred, dir, name).error(); break;
          case 3: err = fs_->Rmdir(cred, dir, name).error(); break;
          case 4: err = fs_->Rename(cred, dir, name, other, name2).error(); break;
          case 5: {
            auto e = fs_->Lookup(cred, dir, name);
            if (e.ok()) err = fs_->Link(cred, e->ino, other, name2).error();
            if (err == ESTALE) err = 0;  // the inode went away after the lookup
            break;
          }
          case 6: {
            auto e = fs_->Lookup(cred, dir, name);
            if (e.ok() && e->is_reg()) {
              err = fs_->Write(cred, e->ino, pick(4) * kChunkSize, std::string(5000, 'w')).error();
              if (err == ESTALE) err = 0;  // unlinked by another thread
            }
            break;
          }
          case 7: {
            // Move whole directories around: loops must be refused.
            auto e = fs_->Lookup(cred, dir, name);
            if (e.ok() && e->is_dir()) err = fs_->Rename(cred, dir, name, e->ino, name2).error();
            if (err == EINVAL || err == ESTALE) err = 0;
            break;
          }
          case 8: err = fs_->ReadDir(cred, dir, 0, 0, true).error(); break;
        }
        if (err == 0) succeeded++;
        switch (err) {
          case 0: case ENOENT: case EEXIST: case ENOTEMPTY: case ENOTDIR: case EISDIR:
          case EPERM: case EINVAL:
            break;
          default:
            unexpected++;
            ADD_FAILURE() << "op " << op << ": unexpected errno " << err;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GT(succeeded.load(), kThreads * kOps / 4);
  ExpectFsckClean();
}

TEST_F(PersistTest, DamagedRecordGivesEio) {
  Ino f = MakeFile(kRootIno, "f");
  rocksdb::WriteBatch b;
  b.Put(engine_->column_family(kMetaColumnFamily), InodeKey(f), "not an inode");
  ASSERT_TRUE(engine_->Write(&b).ok());
  // Written behind the filesystem's back, which caches the good record: what
  // a restart then reads from the bucket.
  Remount();
  EXPECT_ERRNO(fs_->GetAttr(Root(), f), EIO);
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, "f"), EIO);
  EXPECT_ERRNO(fs_->Read(Root(), f, 0, 1), EIO);
  EXPECT_ERRNO(fs_->Unlink(Root(), kRootIno, "f"), EIO);
}

TEST_F(PersistTest, FencedEngineRefusesChangesWithErofs) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, "before");
  ASSERT_TRUE(fs_->SyncAll().ok());
  // Another process takes the bucket over.
  // Declared engine first so the filesystem goes first on any early return.
  std::unique_ptr<engine::Engine> old_engine = std::move(engine_);
  std::unique_ptr<FileSystem> old_fs = std::move(fs_);
  Mount();
  EXPECT_EQ(ReadAt(f, 0, 100), "before");
  // The old writer learns it is fenced when it next tries to make
  // something durable; from then on every change is refused.
  // (Its background flusher may have found out already.)
  auto probe = old_fs->Create(Root(), kRootIno, "probe", 0644, {});
  if (probe.ok()) {
    EXPECT_FALSE(old_fs->SyncAll().ok());
  } else {
    EXPECT_EQ(probe.error(), EROFS);
  }
  EXPECT_TRUE(old_engine->fenced());
  EXPECT_ERRNO(old_fs->Create(Root(), kRootIno, "g", 0644, {}), EROFS);
  EXPECT_ERRNO(old_fs->Write(Root(), f, 0, "after"), EROFS);
  EXPECT_ERRNO(old_fs->Mkdir(Root(), kRootIno, "d", 0755), EROFS);
  EXPECT_ERRNO(old_fs->Fsync(Root(), f), EROFS);
  // Reads keep working from what the old engine has.
  auto r = old_fs->Read(Root(), f, 0, 100);
  ASSERT_FS_OK(r);
  EXPECT_EQ(r->data, "before");
  EXPECT_FALSE(old_fs->Close().ok());
  old_fs.reset();
  (void)old_engine->Close();
  old_engine.reset();
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, "g"), ENOENT);
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, "probe"), ENOENT);
}

TEST(CodecTest, InodeRecordRoundTrip) {
  InodeRecord r;
  r.mode = S_IFLNK | 0777;
  r.uid = 4000000000u;
  r.gid = 7;
  r.nlink = 3;
  r.size = 1ull << 62;
  r.used = 12345;
  r.rdev = 0x1234;
  r.atime = {-5, 999999999};
  r.mtime = {1700000000, 1};
  r.ctime = {1700000001, 2};
  r.parent = 99;
  r.entries = 4;
  r.next_cookie = 17;
  r.symlink_target = std::string("t\0x", 3);
  InodeRecord back;
  ASSERT_TRUE(DecodeInode(EncodeInode(r), &back));
  EXPECT_EQ(back.mode, r.mode);
  EXPECT_EQ(back.uid, r.uid);
  EXPECT_EQ(back.size, r.size);
  EXPECT_EQ(back.atime.tv_sec, -5);
  EXPECT_EQ(back.atime.tv_nsec, 999999999);
  EXPECT_EQ(back.next_cookie, 17u);
  EXPECT_EQ(back.symlink_target, r.symlink_target);
  EXPECT_FALSE(DecodeInode("short", &back));
  std::string wrong_version = EncodeInode(r);
  wrong_version[0] = 9;
  EXPECT_FALSE(DecodeInode(wrong_version, &back));
}

// Devices keep rdev and directories first_cookie in one slot: each reads
// back as what it wrote, and neither shows up as the other.
TEST(CodecTest, RdevSlotHoldsADirectorysFirstCookie) {
  InodeRecord dir;
  dir.mode = S_IFDIR | 0755;
  dir.first_cookie = 40;
  dir.next_cookie = 41;
  InodeRecord back;
  ASSERT_TRUE(DecodeInode(EncodeInode(dir), &back));
  EXPECT_EQ(back.first_cookie, 40u);
  EXPECT_EQ(back.rdev, 0u);
  EXPECT_EQ(ToAttr(9, back).rdev, 0u);
  InodeRecord device;
  device.mode = S_IFCHR | 0600;
  device.rdev = 0x0501;
  ASSERT_TRUE(DecodeInode(EncodeInode(device), &back));
  EXPECT_EQ(back.rdev, 0x0501u);
  EXPECT_EQ(back.first_cookie, 0u);
}

TEST(CodecTest, KeysSortByNumber) {
  EXPECT_LT(InodeKey(255), InodeKey(256));
  EXPECT_LT(DirScanKey(1, 255), DirScanKey(1, 256));
  EXPECT_LT(DirScanKey(1, UINT64_MAX), DirScanPrefix(2));
  EXPECT_LT(ChunkKey(1, UINT64_MAX), ChunkKey(2, 0));
  EXPECT_EQ(ChunkKeyIno(ChunkKey(77, 88)), 77u);
  EXPECT_EQ(ChunkKeyIndex(ChunkKey(77, 88)), 88u);
  DirEntryValue v{123, 456, S_IFSOCK}, back;
  ASSERT_TRUE(DecodeDirEntry(EncodeDirEntry(v), &back));
  EXPECT_EQ(back.ino, 123u);
  EXPECT_EQ(back.cookie, 456u);
  EXPECT_EQ(back.type, static_cast<uint32_t>(S_IFSOCK));
}

}  // namespace
}  // namespace pail::fs::testing
