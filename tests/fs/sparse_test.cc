// PunchHole and MapExtents: holes read as zeros and cost nothing, and the
// map tells data from holes whether the data is buffered or stored.
#include "fs_test_util.h"

namespace pail::fs {
// For gtest's messages.
void PrintTo(const Extent& e, std::ostream* os) {
  *os << "{" << e.offset << "+" << e.length << (e.data ? " data}" : " hole}");
}
}  // namespace pail::fs

namespace pail::fs::testing {
namespace {

class SparseTest : public FsTest {
 protected:
  std::vector<Extent> Map(Ino ino, uint64_t offset, uint64_t length, size_t max = 1000) {
    auto r = fs_->MapExtents(Root(), ino, offset, length, max);
    EXPECT_TRUE(r.ok()) << "errno " << r.error();
    return r.ok() ? *r : std::vector<Extent>{};
  }
  void Truncate(Ino ino, uint64_t size) {
    SetAttrRequest req;
    req.size = size;
    ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  }
};


constexpr uint64_t C = kChunkSize;

TEST_F(SparseTest, MapOfAnEmptyTruncatedFileIsOneHole) {
  Ino ino = MakeFile(kRootIno, "f");
  Truncate(ino, 10 * C + 5);
  EXPECT_EQ(Map(ino, 0, UINT64_MAX), (std::vector<Extent>{{0, 10 * C + 5, false}}));
  EXPECT_TRUE(Map(ino, 10 * C + 5, 100).empty());
  EXPECT_TRUE(Map(ino, UINT64_MAX - 1, UINT64_MAX).empty());
}

TEST_F(SparseTest, MapSeesBufferedAndStoredDataAlike) {
  Ino ino = MakeFile(kRootIno, "f");
  Truncate(ino, 8 * C);
  WriteAt(ino, 2 * C + 7, "x");
  WriteAt(ino, 3 * C, std::string(C, 'y'));
  WriteAt(ino, 6 * C + 100, "z");
  std::vector<Extent> want{{0, 2 * C, false}, {2 * C, 2 * C, true}, {4 * C, 2 * C, false},
                           {6 * C, C, true},  {7 * C, C, false}};
  EXPECT_EQ(Map(ino, 0, 8 * C), want);  // buffered
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  EXPECT_EQ(Map(ino, 0, 8 * C), want);  // stored
  Remount();
  EXPECT_EQ(Map(ino, 0, 8 * C), want);
  // A window inside: clipped to the asked range.
  EXPECT_EQ(Map(ino, 2 * C + 10, 3 * C),
            (std::vector<Extent>{{2 * C + 10, 2 * C - 10, true}, {4 * C, C + 10, false}}));
  // The bound: whole runs only, continue from the end of the last.
  EXPECT_EQ(Map(ino, 0, 8 * C, 2), (std::vector<Extent>(want.begin(), want.begin() + 2)));
}

TEST_F(SparseTest, BufferedZerosOverStoredDataMapAsHole) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, std::string(2 * C, 'a'));
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  WriteAt(ino, C, std::string(C, '\0'));  // buffered, not yet flushed
  EXPECT_EQ(Map(ino, 0, 2 * C), (std::vector<Extent>{{0, C, true}, {C, C, false}}));
}

TEST_F(SparseTest, PunchHoleZerosAndFreesWholeChunks) {
  Ino ino = MakeFile(kRootIno, "f");
  std::string data(6 * C, 'd');
  WriteAt(ino, 0, data);
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  uint64_t used_before = Stat(ino).used;
  // From the middle of chunk 1 to the middle of chunk 4.
  auto r = fs_->PunchHole(Root(), ino, C + 100, 3 * C);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->size, 6 * C);
  std::fill(data.begin() + C + 100, data.begin() + 4 * C + 100, '\0');
  EXPECT_EQ(ReadAt(ino, 0, 6 * C), data);
  EXPECT_EQ(Stat(ino).used, used_before - 3 * C + 100);  // chunk 4 keeps its zeroed head
  EXPECT_EQ(Map(ino, 0, 6 * C),
            (std::vector<Extent>{{0, 2 * C, true}, {2 * C, 2 * C, false}, {4 * C, 2 * C, true}}));
  Remount();
  EXPECT_EQ(ReadAt(ino, 0, 6 * C), data);
  EXPECT_EQ(Stat(ino).used, used_before - 3 * C + 100);  // chunk 4 keeps its zeroed head
  ExpectFsckClean();
}

TEST_F(SparseTest, PunchHoleCoversBufferedDataAndKeepsSize) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, std::string(3 * C + 10, 'q'));  // not flushed
  ASSERT_FS_OK(fs_->PunchHole(Root(), ino, 0, UINT64_MAX));
  EXPECT_EQ(Stat(ino).size, 3 * C + 10);
  EXPECT_EQ(Stat(ino).used, 0u);
  EXPECT_EQ(ReadAt(ino, 0, 4 * C), std::string(3 * C + 10, '\0'));
  EXPECT_EQ(Map(ino, 0, UINT64_MAX), (std::vector<Extent>{{0, 3 * C + 10, false}}));
  // Past the end: nothing happens.
  ASSERT_FS_OK(fs_->PunchHole(Root(), ino, 10 * C, C));
  EXPECT_EQ(Stat(ino).size, 3 * C + 10);
  // The file grows again over the hole: still zeros where it was punched.
  WriteAt(ino, 5 * C, "end");
  EXPECT_EQ(ReadAt(ino, 3 * C, 10), std::string(10, '\0'));
}

TEST_F(SparseTest, PunchHoleInsideOneChunkKeepsTheRest) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, std::string(100, 'x'));
  ASSERT_FS_OK(fs_->PunchHole(Root(), ino, 10, 20));
  std::string want(100, 'x');
  std::fill(want.begin() + 10, want.begin() + 30, '\0');
  EXPECT_EQ(ReadAt(ino, 0, 100), want);
  ASSERT_FS_OK(fs_->PunchHole(Root(), ino, 30, 70));  // the tail: stored bytes trimmed
  EXPECT_EQ(Stat(ino).used, 10u);
}

TEST_F(SparseTest, ManyChunksGoInOneRangeDelete) {
  Ino ino = MakeFile(kRootIno, "f");
  WriteAt(ino, 0, std::string(40 * C, 'm'));
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  ASSERT_FS_OK(fs_->PunchHole(Root(), ino, 0, 40 * C));
  EXPECT_EQ(Stat(ino).used, 0u);
  EXPECT_EQ(fs_->counters().used_bytes, 0u);
  EXPECT_EQ(Map(ino, 0, UINT64_MAX), (std::vector<Extent>{{0, 40 * C, false}}));
}

TEST_F(SparseTest, PermissionsAndTypes) {
  Ino ino = MakeFile(kRootIno, "f", 0600);
  WriteAt(ino, 0, "abc");
  EXPECT_ERRNO(fs_->PunchHole(User(1000, 1000), ino, 0, 1), EACCES);
  EXPECT_ERRNO(fs_->MapExtents(User(1000, 1000), ino, 0, 1, 10), EACCES);
  Ino dir = MakeDir(kRootIno, "d");
  EXPECT_ERRNO(fs_->PunchHole(Root(), dir, 0, 1), EISDIR);
  EXPECT_ERRNO(fs_->MapExtents(Root(), dir, 0, 1, 10), EISDIR);
  EXPECT_ERRNO(fs_->PunchHole(Root(), 999999, 0, 1), ESTALE);
}

// A read's buffer starts as whatever the heap held before (a reused buffer
// still holds an earlier read's bytes): everything a read does not copy from
// data must be zeroed, in every state a chunk can be in.
TEST_F(SparseTest, HolesReadAsZerosWhateverTheReadBufferHeldBefore) {
  const uint64_t size = 6 * C + 5000;
  Ino junk = MakeFile(kRootIno, "junk");
  WriteAt(junk, 0, std::string(size, '\xab'));
  Ino ino = MakeFile(kRootIno, "f");
  Truncate(ino, size);
  std::string want(size, '\0');
  auto put = [&](uint64_t at, std::string_view bytes) {
    WriteAt(ino, at, bytes);
    want.replace(at, bytes.size(), bytes);
  };
  put(C + 100, std::string(100, 'a'));  // inside a chunk
  put(2 * C, std::string(C, 'b'));      // a whole chunk
  put(3 * C, "0123456789");             // a chunk's head
  put(6 * C + 10, "tail");              // in the last, partial chunk
  auto check = [&](const char* state) {
    for (uint64_t offset : {uint64_t{0}, C + 50, 3 * C + 5}) {
      // Leaves a freed buffer of the next read's size full of 0xab.
      ASSERT_EQ(ReadAt(junk, offset, size).size(), size - offset);
      EXPECT_TRUE(ReadAt(ino, offset, size) == want.substr(offset)) << state << ", at " << offset;
    }
  };
  check("buffered");
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  check("stored");
  put(2 * C + 300, "xy");  // over stored chunks: overlays
  put(4 * C + 7, "z");
  check("overlaid");
  ASSERT_FS_OK(fs_->Fsync(Root(), ino));
  check("overlays stored");
  Remount();
  check("after a restart");
}

}  // namespace
}  // namespace pail::fs::testing
