// Fallocate, Seek (SEEK_DATA / SEEK_HOLE) and CopyFileRange: Linux's
// semantics and errors, over buffered and stored data alike.
#include <sys/sysmacros.h>

#include "fs/reserved_chunks.h"
#include "fs_test_util.h"

namespace pail::fs {
// For gtest's messages; defined in sparse_test.cc.
void PrintTo(const Extent& e, std::ostream* os);
}  // namespace pail::fs

namespace pail::fs::testing {
namespace {

constexpr uint64_t C = kChunkSize;

class RangeOpsTest : public FsTest {
 protected:
  std::vector<Extent> Map(Ino ino) {
    auto r = fs_->MapExtents(Root(), ino, 0, UINT64_MAX, 100000);
    EXPECT_TRUE(r.ok()) << "errno " << r.error();
    return r.ok() ? *r : std::vector<Extent>{};
  }
  uint64_t Handle(Ino ino, int flags, const Credentials& cred = Root()) {
    auto h = fs_->Open(cred, ino, flags);
    EXPECT_TRUE(h.ok()) << "open errno " << h.error();
    return h.ok() ? *h : 0;
  }
  void Truncate(Ino ino, uint64_t size) {
    SetAttrRequest req;
    req.size = size;
    ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  }
  FsResult<uint64_t> Copy(Ino in, uint64_t in_offset, Ino out, uint64_t out_offset,
                          uint64_t length, const Credentials& cred = Root(),
                          uint64_t in_handle = 0, uint64_t out_handle = 0) {
    CopyRangeRequest req;
    req.in = in;
    req.in_offset = in_offset;
    req.in_handle = in_handle;
    req.out = out;
    req.out_offset = out_offset;
    req.out_handle = out_handle;
    req.length = length;
    return fs_->CopyFileRange(cred, req);
  }
  // A file of 8 chunks: data in chunks 0-1 and 5, holes elsewhere.
  Ino SparseFile(const std::string& name) {
    Ino ino = MakeFile(kRootIno, name);
    Truncate(ino, 8 * C);
    WriteAt(ino, 0, std::string(2 * C, 'a'));
    WriteAt(ino, 5 * C, std::string(C, 'b'));
    return ino;
  }
};

// ---- fallocate

TEST_F(RangeOpsTest, AllocateExtendsTheSizeWithZerosAndStoresNothing) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, "head");
  Attr before = Stat(ino);
  auto r = fs_->Fallocate(Root(), ino, 0, 2, 3 * C);
  ASSERT_FS_OK(r);
  EXPECT_EQ(r->size, 3 * C + 2);
  EXPECT_EQ(Stat(ino).size, 3 * C + 2);
  // Chunks 0-3 are reserved, charged whole; only the head is stored.
  EXPECT_EQ(Stat(ino).used, 4 * C);
  EXPECT_EQ(CountChunks(ino), 1u);
  EXPECT_TRUE(before.mtime < Stat(ino).mtime);
  EXPECT_EQ(ReadAt(ino, 0, 4 * C), "head" + std::string(3 * C - 2, '\0'));
  // Inside the file nothing changes, not even the times.
  Attr grown = Stat(ino);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, 0, 0, C));
  EXPECT_EQ(Stat(ino).size, grown.size);
  EXPECT_TRUE(Stat(ino).mtime == grown.mtime);
  Remount();
  EXPECT_EQ(Stat(ino).size, 3 * C + 2);
  ExpectFsckClean();
}

TEST_F(RangeOpsTest, AllocateWithKeepSizeLeavesTheSize) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, "abc");
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocKeepSize, 0, 10 * C));
  EXPECT_EQ(Stat(ino).size, 3u);
  EXPECT_EQ(ReadAt(ino, 0, 10), "abc");
}

TEST_F(RangeOpsTest, ModesAndArgumentsAreCheckedAsLinuxDoes) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, "data");
  // Punching must keep the size; modes are exclusive; others unsupported.
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, kFallocPunchHole, 0, 1), EOPNOTSUPP);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocZeroRange | kFallocKeepSize,
                              0, 1),
               EOPNOTSUPP);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0x08 /* COLLAPSE_RANGE */, 0, C), EOPNOTSUPP);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0x20 /* INSERT_RANGE */, 0, C), EOPNOTSUPP);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0x04 /* NO_HIDE_STALE */, 0, C), EOPNOTSUPP);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, 0, 0), EINVAL);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, kMaxFileSize, 1), EFBIG);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, UINT64_MAX - 1, 10), EFBIG);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, kFallocKeepSize, 1, kMaxFileSize), EFBIG);
  EXPECT_EQ(Stat(ino).size, 4u);  // refusals change nothing
  Ino dir = MakeDir(kRootIno, "d");
  EXPECT_ERRNO(fs_->Fallocate(Root(), dir, 0, 0, 1), EISDIR);
  auto fifo = fs_->Mknod(Root(), kRootIno, "p", S_IFIFO | 0666, 0);
  ASSERT_FS_OK(fifo);
  EXPECT_ERRNO(fs_->Fallocate(Root(), fifo->ino, 0, 0, 1), ESPIPE);
  auto dev = fs_->Mknod(Root(), kRootIno, "c", S_IFCHR | 0666, makedev(1, 3));
  ASSERT_FS_OK(dev);
  EXPECT_ERRNO(fs_->Fallocate(Root(), dev->ino, 0, 0, 1), ENODEV);
  auto link = fs_->Symlink(Root(), kRootIno, "l", "f");
  ASSERT_FS_OK(link);
  EXPECT_ERRNO(fs_->Fallocate(Root(), link->ino, 0, 0, 1), ENODEV);
  EXPECT_ERRNO(fs_->Fallocate(Root(), 999999, 0, 0, 1), ESTALE);
}

TEST_F(RangeOpsTest, HandlesAndPermissions) {
  Ino ino = MakeFile(kRootIno, "f", 0644);
  Chown(ino, 1000, 1000);
  WriteAt(ino, 0, std::string(2 * C, 'x'));
  uint64_t ro = Handle(ino, O_RDONLY);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, 0, 3 * C, ro), EBADF);
  EXPECT_ERRNO(fs_->Fallocate(Root(), kRootIno, 0, 0, 1, ro), EBADF);  // another inode's
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, 0, 1, 123456), EBADF);
  // Without a handle: write permission, which the owner always has.
  EXPECT_ERRNO(fs_->Fallocate(User(2000, 2000), ino, 0, 0, 3 * C), EACCES);
  EXPECT_ERRNO(fs_->Fallocate(User(2000, 2000), ino, kFallocPunchHole | kFallocKeepSize, 0, C),
               EACCES);
  Chmod(ino, 0444);
  ASSERT_FS_OK(fs_->Fallocate(User(1000, 1000), ino, 0, 0, 3 * C));
  // A handle open for writing keeps its right after the mode changes.
  Chmod(ino, 0666);
  uint64_t rw = Handle(ino, O_RDWR, User(2000, 2000));
  Chmod(ino, 0600);
  ASSERT_FS_OK(fs_->Fallocate(User(2000, 2000), ino, kFallocPunchHole | kFallocKeepSize, 0, C, rw));
  EXPECT_EQ(ReadAt(ino, 0, 2 * C), std::string(C, '\0') + std::string(C, 'x'));
  ASSERT_FS_OK(fs_->Release(ro));
  ASSERT_FS_OK(fs_->Release(rw));
}

TEST_F(RangeOpsTest, PunchHoleFreesTheRangeAndKeepsTheSize) {
  Ino ino = MakeFile(kRootIno, "f");
  std::string data(6 * C, 'd');
  WriteAt(ino, 0, data);
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  Attr before = Stat(ino);
  auto r = fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocKeepSize, C, 3 * C);
  ASSERT_FS_OK(r);
  EXPECT_EQ(r->size, 6 * C);
  EXPECT_EQ(Stat(ino).used, 3 * C);
  EXPECT_TRUE(before.mtime < Stat(ino).mtime);
  std::fill(data.begin() + C, data.begin() + 4 * C, '\0');
  EXPECT_EQ(ReadAt(ino, 0, 6 * C), data);
  // Past the end: nothing at all changes.
  Attr punched = Stat(ino);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocKeepSize, 10 * C, C));
  EXPECT_EQ(Stat(ino).size, 6 * C);
  EXPECT_TRUE(Stat(ino).mtime == punched.mtime);
  ExpectFsckClean();
}

TEST_F(RangeOpsTest, ChangesByNonRootClearSetId) {
  Ino ino = MakeFile(kRootIno, "f", 0644);
  Chown(ino, 1000, 1000);
  WriteAt(ino, 0, std::string(C, 'x'));
  Chmod(ino, 06755);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocKeepSize, 0, 10));
  EXPECT_EQ(Stat(ino).mode & 07777, 06755u);  // root keeps them
  ASSERT_FS_OK(fs_->Fallocate(User(1000, 1000), ino, kFallocPunchHole | kFallocKeepSize, 0, 10));
  EXPECT_EQ(Stat(ino).mode & 07777, 0755u);
  Chmod(ino, 06755);
  ASSERT_FS_OK(fs_->Fallocate(User(1000, 1000), ino, 0, 0, 2 * C));
  EXPECT_EQ(Stat(ino).mode & 07777, 0755u);
  Chmod(ino, 06755);
  ASSERT_FS_OK(fs_->Fallocate(User(1000, 1000), ino, kFallocZeroRange, 0, 10));
  EXPECT_EQ(Stat(ino).mode & 07777, 0755u);
}

TEST_F(RangeOpsTest, ZeroRangeZerosFreesAndExtends) {
  Ino ino = MakeFile(kRootIno, "f");
  std::string data(4 * C, 'z');
  WriteAt(ino, 0, data);
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  WriteAt(ino, 3 * C, std::string(C, 'w'));  // buffered over stored data
  std::fill(data.begin() + 3 * C, data.end(), 'w');
  // Into the middle, within the size.
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocZeroRange, 100, 2 * C));
  std::fill(data.begin() + 100, data.begin() + 100 + 2 * C, '\0');
  EXPECT_EQ(ReadAt(ino, 0, 4 * C), data);
  EXPECT_EQ(Stat(ino).size, 4 * C);
  // Chunk 1 freed, chunk 0 keeps its head; both reserved with chunk 2.
  EXPECT_EQ(CountChunks(ino), 3u);
  EXPECT_EQ(Stat(ino).used, 4 * C);
  // Across the end: zeros and a larger size.
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocZeroRange, 3 * C + 5, 2 * C));
  data.resize(3 * C + 5);
  data.resize(5 * C + 5, '\0');
  EXPECT_EQ(Stat(ino).size, 5 * C + 5);
  EXPECT_EQ(ReadAt(ino, 0, 6 * C), data);
  // KEEP_SIZE: the part past the end is ignored.
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocZeroRange | kFallocKeepSize, 0, 100 * C));
  EXPECT_EQ(Stat(ino).size, 5 * C + 5);
  EXPECT_EQ(CountChunks(ino), 0u);
  EXPECT_EQ(Stat(ino).used, 100 * C);  // reserved past the end too, as ext4 does
  EXPECT_EQ(ReadAt(ino, 0, 6 * C), std::string(5 * C + 5, '\0'));
  // Wholly past the end: only the size and the times change.
  Attr before = Stat(ino);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocZeroRange, 10 * C, C));
  EXPECT_EQ(Stat(ino).size, 11 * C);
  EXPECT_TRUE(before.mtime < Stat(ino).mtime);
  Remount();
  EXPECT_EQ(Stat(ino).size, 11 * C);
  ExpectFsckClean();
}

class FallocateQuotaTest : public RangeOpsTest {
 protected:
  FsOptions Options() override {
    FsOptions o = RangeOpsTest::Options();
    o.max_size_bytes = 1 << 20;
    return o;
  }
};

TEST_F(FallocateQuotaTest, AllocationNeedsRoomForTheChunksItReserves) {
  Ino ino = MakeFile(kRootIno, "f");
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, 0, 2 << 20), ENOSPC);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, kFallocKeepSize, 0, (1 << 20) + 1), ENOSPC);
  EXPECT_EQ(Stat(ino).size, 0u);  // a refusal changes nothing
  EXPECT_EQ(Stat(ino).used, 0u);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, 0, 0, 1 << 20));
  EXPECT_EQ(Stat(ino).size, 1u << 20);
  EXPECT_EQ(Stat(ino).used, 1u << 20);
  // The quota is full, and writing into the reservation needs no room.
  WriteAt(ino, 0, std::string(768 << 10, 'q'));
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, 0, 0, 1 << 20));
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocKeepSize, 512 << 10, 512 << 10));
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocZeroRange, 0, 1 << 20));
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, 0, (1 << 20) + 1), ENOSPC);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, 0, 2 << 20, 300 << 10), ENOSPC);
  EXPECT_ERRNO(fs_->Fallocate(Root(), ino, kFallocZeroRange, 0, 8 << 20), ENOSPC);
  EXPECT_EQ(Stat(ino).size, 1u << 20);
  // Punching gives the room back.
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocKeepSize, 0, 1 << 20));
  EXPECT_EQ(Stat(ino).used, 0u);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocZeroRange, 0, 1 << 20));
  ExpectFsckClean();
}

TEST_F(FallocateQuotaTest, ReservedRoomIsHeldForTheFileThatReservedIt) {
  Ino held = MakeFile(kRootIno, "held");
  Ino other = MakeFile(kRootIno, "other");
  ASSERT_FS_OK(fs_->Fallocate(Root(), held, kFallocKeepSize, 0, 768 << 10));
  EXPECT_EQ(Stat(held).size, 0u);
  EXPECT_EQ(Stat(held).used, 768u << 10);
  auto fs_stats = fs_->StatFs(Root(), kRootIno);
  ASSERT_FS_OK(fs_stats);
  EXPECT_EQ(fs_stats->free_blocks * kBlockSize, 256u << 10);
  EXPECT_ERRNO(fs_->Fallocate(Root(), other, 0, 0, 512 << 10), ENOSPC);
  EXPECT_ERRNO(fs_->Write(Root(), other, 0, std::string(512 << 10, 'o'), 0), ENOSPC);
  WriteAt(other, 0, std::string(256 << 10, 'o'));  // what is left
  EXPECT_ERRNO(fs_->Write(Root(), other, 256 << 10, "o", 0), ENOSPC);
  // Every byte of the reservation can be written, buffered or flushed.
  WriteAt(held, 0, std::string(512 << 10, 'h'));
  ASSERT_FS_OK(fs_->Fsync(Root(), held));
  WriteAt(held, 512 << 10, std::string(256 << 10, 'h'));
  EXPECT_EQ(ReadAt(held, 0, 1 << 20), std::string(768 << 10, 'h'));
  EXPECT_EQ(Stat(held).used, 768u << 10);
  EXPECT_ERRNO(fs_->Write(Root(), held, 768 << 10, "h", 0), ENOSPC);  // past it
  Remount();
  EXPECT_EQ(Stat(held).used, 768u << 10);
  EXPECT_ERRNO(fs_->Write(Root(), other, 256 << 10, "o", 0), ENOSPC);
  WriteAt(held, 100, "again");
  ExpectFsckClean();
  // Deleting the file gives its reservation back.
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "held"));
  ASSERT_FS_OK(fs_->Fallocate(Root(), other, 0, 256 << 10, 512 << 10));
  ExpectFsckClean();
}

TEST_F(FallocateQuotaTest, CopiedHolesKeepTheDestinationsReservation) {
  Ino src = SparseFile("src");  // 3 chunks stored
  Ino dst = MakeFile(kRootIno, "dst");
  ASSERT_FS_OK(fs_->Fallocate(Root(), dst, 0, 0, 8 * C));
  WriteAt(dst, 0, std::string(8 * C, 'o'));
  ASSERT_FS_OK(fs_->Fsync(Root(), dst));
  // The source's holes are punched into the destination's data, and its
  // allocation still holds room for later writes there.
  auto n = Copy(src, 0, dst, 0, 8 * C);
  ASSERT_FS_OK(n);
  EXPECT_EQ(*n, 8 * C);
  EXPECT_EQ(ReadAt(dst, 0, 8 * C), ReadAt(src, 0, 8 * C));
  EXPECT_EQ(Stat(dst).used, 8 * C);
  Ino other = MakeFile(kRootIno, "other");
  WriteAt(other, 0, std::string((1 << 20) - 11 * C, 'x'));  // the quota is full now
  EXPECT_ERRNO(fs_->Write(Root(), other, (1 << 20) - 11 * C, "x", 0), ENOSPC);
  WriteAt(dst, 3 * C, std::string(C, 'z'));  // a copied hole
  ASSERT_FS_OK(fs_->Fsync(Root(), dst));
  EXPECT_EQ(ReadAt(dst, 3 * C, C), std::string(C, 'z'));
  ExpectFsckClean();
}

TEST_F(RangeOpsTest, PunchAndTruncateGiveReservationsBack) {
  Ino ino = MakeFile(kRootIno, "f");
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, 0, 0, 10 * C));
  WriteAt(ino, C, std::string(100, 'x'));
  EXPECT_EQ(Stat(ino).used, 10 * C);
  // Chunks covered whole are given back, a chunk punched in part stays.
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocKeepSize, 0, 4 * C + 10));
  EXPECT_EQ(Stat(ino).used, 6 * C);
  EXPECT_EQ(CountChunks(ino), 0u);
  WriteAt(ino, 4 * C, std::string(C, 'y'));
  EXPECT_EQ(Stat(ino).used, 6 * C);
  Remount();
  EXPECT_EQ(Stat(ino).used, 6 * C);
  ExpectFsckClean();
  // A truncate gives back what lies past the new end; a larger size keeps
  // what is reserved past the old one.
  SetAttrRequest req;
  req.size = 6 * C + 1;
  ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  EXPECT_EQ(Stat(ino).used, 3 * C);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocKeepSize, 20 * C, 2 * C));
  EXPECT_EQ(Stat(ino).size, 6 * C + 1);
  EXPECT_EQ(Stat(ino).used, 5 * C);
  req.size = 30 * C;
  ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  EXPECT_EQ(Stat(ino).used, 5 * C);
  ExpectFsckClean();
  // The same size again drops what lies past the end, as on ext4.
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocKeepSize, 40 * C, C));
  EXPECT_EQ(Stat(ino).used, 6 * C);
  ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  EXPECT_EQ(Stat(ino).used, 5 * C);
  req.size = 4 * C + 5;
  ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  EXPECT_EQ(Stat(ino).used, C);  // chunk 4, holding five bytes of 'y'
  EXPECT_EQ(ReadAt(ino, 4 * C, C), "yyyyy");
  req.size = 0;
  ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  EXPECT_EQ(Stat(ino).used, 0u);
  ExpectFsckClean();
}

TEST_F(RangeOpsTest, ReservingChunksThatHoldDataChargesTheRest) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, std::string(C + 100, 'd'));  // buffered: flushed first
  EXPECT_EQ(Stat(ino).used, C + 100);
  ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocKeepSize, 0, 3 * C));
  EXPECT_EQ(Stat(ino).used, 3 * C);
  EXPECT_EQ(ReadAt(ino, 0, 3 * C), std::string(C + 100, 'd'));
  // Many small reservations apart: past the bound the record merges the
  // closest, which reserves more than asked, never less.
  for (uint64_t i = 0; i < 2 * ReservedChunks::kMaxRuns; ++i) {
    ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocKeepSize, (10 + 3 * i) * C, 1));
  }
  const uint64_t used = Stat(ino).used;
  EXPECT_GE(used, (3 + 2 * ReservedChunks::kMaxRuns) * C);
  EXPECT_LE(used, (3 + 3 * 2 * ReservedChunks::kMaxRuns) * C);
  ExpectFsckClean();
  Remount();
  EXPECT_EQ(Stat(ino).used, used);
  ExpectFsckClean();
}

// ---- SEEK_DATA / SEEK_HOLE

TEST_F(RangeOpsTest, SeekFindsDataAndHolesBufferedOrStored) {
  Ino ino = SparseFile("f");
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round == 0 ? "buffered" : round == 1 ? "stored" : "remounted");
    auto seek = [&](uint64_t offset, SeekFor what) { return fs_->Seek(Root(), ino, offset, what); };
    EXPECT_EQ(*seek(0, SeekFor::kData), 0u);
    EXPECT_EQ(*seek(C + 7, SeekFor::kData), C + 7);
    EXPECT_EQ(*seek(2 * C, SeekFor::kData), 5 * C);
    EXPECT_EQ(*seek(4 * C + 1, SeekFor::kData), 5 * C);
    EXPECT_ERRNO(seek(6 * C, SeekFor::kData), ENXIO);  // only a hole follows
    EXPECT_EQ(*seek(0, SeekFor::kHole), 2 * C);
    EXPECT_EQ(*seek(3 * C, SeekFor::kHole), 3 * C);
    EXPECT_EQ(*seek(5 * C, SeekFor::kHole), 6 * C);
    EXPECT_EQ(*seek(8 * C - 1, SeekFor::kHole), 8 * C - 1);
    EXPECT_ERRNO(seek(8 * C, SeekFor::kHole), ENXIO);
    EXPECT_ERRNO(seek(8 * C, SeekFor::kData), ENXIO);
    EXPECT_ERRNO(seek(UINT64_MAX, SeekFor::kHole), ENXIO);
    if (round == 0) ASSERT_FS_OK(fs_->Fsync(Root(), ino));
    if (round == 1) Remount();
  }
}

TEST_F(RangeOpsTest, SeekHoleOfAFileFullOfDataIsItsEnd) {
  Ino ino = MakeFile(kRootIno, "f");
  EXPECT_ERRNO(fs_->Seek(Root(), ino, 0, SeekFor::kData), ENXIO);  // empty
  EXPECT_ERRNO(fs_->Seek(Root(), ino, 0, SeekFor::kHole), ENXIO);
  WriteAt(ino, 0, std::string(3 * C + 17, 'f'));
  EXPECT_EQ(*fs_->Seek(Root(), ino, 0, SeekFor::kHole), 3 * C + 17);
  EXPECT_EQ(*fs_->Seek(Root(), ino, 3 * C + 16, SeekFor::kData), 3 * C + 16);
  // A punched middle is a hole; a file of only holes has no data.
  ASSERT_FS_OK(fs_->PunchHole(Root(), ino, C, C));
  EXPECT_EQ(*fs_->Seek(Root(), ino, 0, SeekFor::kHole), C);
  EXPECT_EQ(*fs_->Seek(Root(), ino, C, SeekFor::kData), 2 * C);
  ASSERT_FS_OK(fs_->PunchHole(Root(), ino, 0, UINT64_MAX));
  EXPECT_ERRNO(fs_->Seek(Root(), ino, 0, SeekFor::kData), ENXIO);
  EXPECT_EQ(*fs_->Seek(Root(), ino, 5, SeekFor::kHole), 5u);
}

TEST_F(RangeOpsTest, SeekPermissionsAndTypes) {
  Ino ino = MakeFile(kRootIno, "f", 0600);
  WriteAt(ino, 0, "secret");
  EXPECT_ERRNO(fs_->Seek(User(2000, 2000), ino, 0, SeekFor::kData), EACCES);
  Chmod(ino, 0622);
  uint64_t wo = Handle(ino, O_WRONLY, User(2000, 2000));
  Chmod(ino, 0600);
  EXPECT_EQ(*fs_->Seek(User(2000, 2000), ino, 0, SeekFor::kHole, wo), 6u);  // any open mode
  EXPECT_ERRNO(fs_->Seek(Root(), kRootIno, 0, SeekFor::kData, wo), EBADF);
  EXPECT_ERRNO(fs_->Seek(Root(), kRootIno, 0, SeekFor::kData), EISDIR);
  ASSERT_FS_OK(fs_->Release(wo));
}

// ---- copy_file_range

TEST_F(RangeOpsTest, CopyKeepsHolesAndGrowsTheDestination) {
  Ino src = SparseFile("src");
  Ino dst = MakeFile(kRootIno, "dst");
  Attr before = Stat(dst);
  auto n = Copy(src, 0, dst, 0, 1ull << 40);  // clipped to the source's end
  ASSERT_FS_OK(n);
  EXPECT_EQ(*n, 8 * C);
  EXPECT_EQ(Stat(dst).size, 8 * C);
  EXPECT_EQ(ReadAt(dst, 0, 8 * C), ReadAt(src, 0, 8 * C));
  EXPECT_EQ(Stat(dst).used, Stat(src).used);
  EXPECT_EQ(Map(dst), Map(src));
  EXPECT_TRUE(before.mtime < Stat(dst).mtime);
  EXPECT_TRUE(before.ctime < Stat(dst).ctime);
  Remount();
  EXPECT_EQ(ReadAt(dst, 0, 8 * C), ReadAt(src, 0, 8 * C));
  ExpectFsckClean();
}

TEST_F(RangeOpsTest, CopyOverDataPunchesTheSourceHoles) {
  Ino src = SparseFile("src");
  Ino dst = MakeFile(kRootIno, "dst");
  WriteAt(dst, 0, std::string(10 * C, 'o'));
  ASSERT_FS_OK(fs_->Fsync(Root(), dst));
  auto n = Copy(src, C, dst, C + 3, 6 * C);  // unaligned destination
  ASSERT_FS_OK(n);
  EXPECT_EQ(*n, 6 * C);
  std::string want(10 * C, 'o');
  std::string part = ReadAt(src, C, 6 * C);
  want.replace(C + 3, 6 * C, part);
  EXPECT_EQ(ReadAt(dst, 0, 10 * C), want);
  EXPECT_EQ(Stat(dst).size, 10 * C);
  // Stored, without trailing zeros: chunks 0, 1, 5, 7, 8 and 9 whole, the
  // 3 copied bytes heading chunks 2 and 6; 3 and 4 lay in a copied hole.
  EXPECT_EQ(Stat(dst).used, 6 * C + 6);
  ExpectFsckClean();
}

TEST_F(RangeOpsTest, CopyOfATrailingHoleStillSetsTheSize) {
  Ino src = MakeFile(kRootIno, "src");
  WriteAt(src, 0, "start");
  Truncate(src, 100 * C);
  Ino dst = MakeFile(kRootIno, "dst");
  auto n = Copy(src, 0, dst, 7, UINT64_MAX - 8);
  ASSERT_FS_OK(n);
  EXPECT_EQ(*n, 100 * C);
  EXPECT_EQ(Stat(dst).size, 100 * C + 7);
  EXPECT_EQ(Stat(dst).used, 12u);  // the leading zeros of chunk 0 are stored
  EXPECT_EQ(ReadAt(dst, 0, 12), std::string(7, '\0') + "start");
  // At or past the source's end there is nothing to copy.
  EXPECT_EQ(*Copy(src, 100 * C, dst, 0, 10), 0u);
  EXPECT_EQ(*Copy(src, 1ull << 50, dst, 0, 10), 0u);
}

TEST_F(RangeOpsTest, CopyOfUnflushedDataAndWithinOneFile) {
  Ino f = MakeFile(kRootIno, "f");
  std::string data = std::string(C, '1') + std::string(C, '2');
  WriteAt(f, 0, data);  // buffered only
  auto n = Copy(f, 0, f, 4 * C, 2 * C);
  ASSERT_FS_OK(n);
  EXPECT_EQ(*n, 2 * C);
  EXPECT_EQ(ReadAt(f, 4 * C, 2 * C), data);
  EXPECT_EQ(ReadAt(f, 2 * C, 2 * C), std::string(2 * C, '\0'));
  // Overlapping ranges of one file are refused, adjacent ones are not.
  EXPECT_ERRNO(Copy(f, 0, f, C, 2 * C), EINVAL);
  EXPECT_ERRNO(Copy(f, C, f, 0, 2 * C), EINVAL);
  ASSERT_FS_OK(Copy(f, 0, f, 2 * C, 2 * C));
  EXPECT_EQ(ReadAt(f, 2 * C, 2 * C), data);
  ExpectFsckClean();
}

TEST_F(RangeOpsTest, CopyIsBoundedPerCall) {
  Ino src = MakeFile(kRootIno, "src");
  Truncate(src, 3 * kMaxCopyBytes);
  WriteAt(src, kMaxCopyBytes - 3, "abcdef");
  Ino dst = MakeFile(kRootIno, "dst");
  auto n = Copy(src, 0, dst, 0, 3 * kMaxCopyBytes);
  ASSERT_FS_OK(n);
  EXPECT_EQ(*n, kMaxCopyBytes);
  EXPECT_EQ(Stat(dst).size, kMaxCopyBytes);
  EXPECT_EQ(ReadAt(dst, kMaxCopyBytes - 3, 10), "abc");
  auto rest = Copy(src, *n, dst, *n, 3 * kMaxCopyBytes);
  ASSERT_FS_OK(rest);
  EXPECT_EQ(ReadAt(dst, kMaxCopyBytes - 3, 6), "abcdef");
}

TEST_F(RangeOpsTest, CopyErrorsAsLinux) {
  Ino src = MakeFile(kRootIno, "src");
  WriteAt(src, 0, "content");
  Ino dst = MakeFile(kRootIno, "dst");
  Ino dir = MakeDir(kRootIno, "d");
  auto fifo = fs_->Mknod(Root(), kRootIno, "p", S_IFIFO | 0666, 0);
  ASSERT_FS_OK(fifo);
  EXPECT_ERRNO(Copy(dir, 0, dst, 0, 1), EISDIR);
  EXPECT_ERRNO(Copy(src, 0, dir, 0, 1), EISDIR);
  EXPECT_ERRNO(Copy(fifo->ino, 0, dst, 0, 1), EINVAL);
  EXPECT_ERRNO(Copy(src, 0, fifo->ino, 0, 1), EINVAL);
  EXPECT_ERRNO(Copy(src, UINT64_MAX - 2, dst, 0, 10), EOVERFLOW);
  EXPECT_ERRNO(Copy(src, 0, dst, UINT64_MAX - 2, 10), EOVERFLOW);
  EXPECT_ERRNO(Copy(src, 0, dst, kMaxFileSize, 1), EFBIG);
  EXPECT_ERRNO(Copy(src, 0, 999999, 0, 1), ESTALE);
  // Handles: the input readable, the output writable and not appending.
  uint64_t src_wo = Handle(src, O_WRONLY);
  uint64_t dst_ro = Handle(dst, O_RDONLY);
  uint64_t dst_append = Handle(dst, O_WRONLY | O_APPEND);
  uint64_t dst_rw = Handle(dst, O_RDWR);
  uint64_t src_ro = Handle(src, O_RDONLY);
  EXPECT_ERRNO(Copy(src, 0, dst, 0, 1, Root(), src_wo, dst_rw), EBADF);
  EXPECT_ERRNO(Copy(src, 0, dst, 0, 1, Root(), src_ro, dst_ro), EBADF);
  EXPECT_ERRNO(Copy(src, 0, dst, 0, 1, Root(), src_ro, dst_append), EBADF);
  EXPECT_ERRNO(Copy(src, 0, dst, 0, 1, Root(), dst_rw, dst_rw), EBADF);  // not src's
  EXPECT_EQ(*Copy(src, 0, dst, 0, 100, Root(), src_ro, dst_rw), 7u);
  EXPECT_EQ(ReadAt(dst, 0, 100), "content");
  for (uint64_t h : {src_wo, dst_ro, dst_append, dst_rw, src_ro}) ASSERT_FS_OK(fs_->Release(h));
}

TEST_F(RangeOpsTest, CopyPermissionsAndSetIdBits) {
  Ino src = MakeFile(kRootIno, "src", 0600);
  WriteAt(src, 0, "private");
  Ino dst = MakeFile(kRootIno, "dst", 0644);
  Credentials user = User(1000, 1000);
  EXPECT_ERRNO(Copy(src, 0, dst, 0, 7, user), EACCES);  // cannot read
  Chmod(src, 0644);
  EXPECT_ERRNO(Copy(src, 0, dst, 0, 7, user), EACCES);  // cannot write
  Chown(dst, 1000, 1000);
  Chmod(dst, 06755);
  EXPECT_EQ(*Copy(src, 0, dst, 0, 7, user), 7u);
  EXPECT_EQ(Stat(dst).mode & 07777, 0755u);
  EXPECT_EQ(ReadAt(dst, 0, 7), "private");
  // Handles carry their rights past a later chmod.
  uint64_t in = Handle(src, O_RDONLY, user);
  uint64_t out = Handle(dst, O_WRONLY, user);
  Chmod(src, 0600);
  Chmod(dst, 0400);
  Chown(dst, 0, 0);
  EXPECT_EQ(*Copy(src, 0, dst, 10, 7, user, in, out), 7u);
  EXPECT_EQ(ReadAt(dst, 10, 7), "private");
  ASSERT_FS_OK(fs_->Release(in));
  ASSERT_FS_OK(fs_->Release(out));
}

class CopyQuotaTest : public RangeOpsTest {
 protected:
  FsOptions Options() override {
    FsOptions o = RangeOpsTest::Options();
    o.max_size_bytes = 1 << 20;
    return o;
  }
};

TEST_F(CopyQuotaTest, AFullQuotaGivesAShortCopyThenEnospc) {
  // 200 KiB of data, a hole, then 600 KiB: 224 KiB of room is left, which
  // takes the first run (and the hole) but not the second.
  Ino src = MakeFile(kRootIno, "src");
  WriteAt(src, 0, std::string(200 << 10, 's'));
  WriteAt(src, 1 << 20, std::string(600 << 10, 't'));
  Ino dst = MakeFile(kRootIno, "dst");
  auto n = Copy(src, 0, dst, 0, 2 << 20);
  ASSERT_FS_OK(n);
  EXPECT_EQ(*n, 1u << 20);
  EXPECT_EQ(Stat(dst).size, 1u << 20);
  EXPECT_EQ(ReadAt(dst, 0, 1 << 20), ReadAt(src, 0, 1 << 20));
  EXPECT_ERRNO(Copy(src, *n, dst, *n, 2 << 20), ENOSPC);
  EXPECT_EQ(Stat(dst).size, 1u << 20);
  ExpectFsckClean();
}

}  // namespace
}  // namespace pail::fs::testing
