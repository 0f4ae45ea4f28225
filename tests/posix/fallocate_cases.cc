// fallocate(2) (Linux; posix_fallocate is its mode 0): allocating, keeping
// the size, punching holes and zeroing ranges, and the errors of each.
// Ranges are multiples of 64 KiB so that every filesystem frees or maps
// them whole, whatever its block or chunk size.
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>

#include "posix_util.h"

namespace pail::posix {
namespace {

constexpr off_t K64 = 64 * 1024;

int OpenRw(const char* name) { return static_cast<int>(EXPECT_OK(open(name, O_RDWR))); }

std::string ReadAll(int fd) {
  struct stat st {};
  EXPECT_OK(fstat(fd, &st));
  std::string out(static_cast<size_t>(st.st_size), '\0');
  if (!out.empty()) EXPECT_EQ(pread(fd, out.data(), out.size(), 0), (ssize_t)out.size());
  return out;
}

off_t SizeOf(int fd) {
  struct stat st {};
  EXPECT_OK(fstat(fd, &st));
  return st.st_size;
}

blkcnt_t BlocksOf(int fd) {
  struct stat st {};
  EXPECT_OK(fstat(fd, &st));
  return st.st_blocks;
}

POSIX_CASE("fallocate", "allocate_extends_the_size_with_zeros") {
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, 0, 0, 4 * K64));
  EXPECT_EQ(SizeOf(fd), 4 * K64);
  std::string want = "abc";
  want.resize(4 * K64, '\0');
  EXPECT_EQ(ReadAll(fd), want);
  close(fd);
}

POSIX_CASE("fallocate", "allocate_inside_the_file_keeps_its_data") {
  std::string data = Pattern(3 * K64, 3);
  WriteFile("f", data);
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, 0, K64, K64));
  EXPECT_EQ(ReadAll(fd), data);
  close(fd);
}

POSIX_CASE("fallocate", "allocate_beyond_the_end_from_an_offset") {
  WriteFile("f", "x");
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, 0, 2 * K64, K64));
  EXPECT_EQ(SizeOf(fd), 3 * K64);
  close(fd);
}

POSIX_CASE("fallocate", "keep_size_leaves_the_size") {
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 16 * K64));
  EXPECT_EQ(SizeOf(fd), 3);
  EXPECT_EQ(ReadAll(fd), std::string("abc"));
  close(fd);
}

POSIX_CASE("fallocate", "allocate_that_grows_updates_mtime_and_ctime") {
  WriteFile("f", "abc");
  Times before = TimesBeforeChange("f");
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, 0, 0, K64));
  close(fd);
  Times after = TimesOf("f");
  EXPECT_TRUE(Before(before.mtime, after.mtime));
  EXPECT_TRUE(Before(before.ctime, after.ctime));
}

POSIX_CASE("fallocate", "punch_hole_zeros_the_range_and_frees_it") {
  std::string data = Pattern(4 * K64, 5);
  WriteFile("f", data);
  int fd = OpenRw("f");
  EXPECT_OK(fsync(fd));
  blkcnt_t before = BlocksOf(fd);
  EXPECT_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, K64, 2 * K64));
  EXPECT_EQ(SizeOf(fd), 4 * K64);
  std::fill(data.begin() + K64, data.begin() + 3 * K64, '\0');
  EXPECT_EQ(ReadAll(fd), data);
  // 128 KiB freed is 256 blocks of 512 bytes.
  EXPECT_TRUE(BlocksOf(fd) <= before - 256);
  close(fd);
}

POSIX_CASE("fallocate", "punch_hole_unaligned_zeros_exactly_the_range") {
  std::string data = Pattern(3 * K64, 9);
  WriteFile("f", data);
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, K64 + 123));
  std::fill(data.begin() + 1000, data.begin() + 1000 + K64 + 123, '\0');
  EXPECT_EQ(ReadAll(fd), data);
  close(fd);
}

POSIX_CASE("fallocate", "punch_hole_past_the_end_changes_nothing") {
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, K64, K64));
  EXPECT_EQ(SizeOf(fd), 3);
  EXPECT_EQ(ReadAll(fd), std::string("abc"));
  close(fd);
}

POSIX_CASE("fallocate", "punch_hole_updates_mtime_and_ctime") {
  WriteFile("f", Pattern(2 * K64));
  Times before = TimesBeforeChange("f");
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, K64));
  close(fd);
  Times after = TimesOf("f");
  EXPECT_TRUE(Before(before.mtime, after.mtime));
  EXPECT_TRUE(Before(before.ctime, after.ctime));
}

POSIX_CASE("fallocate", "punch_hole_without_keep_size_is_eopnotsupp") {
  WriteFile("f", Pattern(K64));
  int fd = OpenRw("f");
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 100), EOPNOTSUPP);
  EXPECT_EQ(ReadAll(fd), Pattern(K64));
  close(fd);
}

POSIX_CASE("fallocate", "zero_range_zeros_and_extends") {
  std::string data = Pattern(2 * K64, 4);
  WriteFile("f", data);
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, 100, K64));
  std::fill(data.begin() + 100, data.begin() + 100 + K64, '\0');
  EXPECT_EQ(ReadAll(fd), data);
  EXPECT_OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, K64 + K64 / 2, 2 * K64));
  data.resize(K64 + K64 / 2);
  data.resize(3 * K64 + K64 / 2, '\0');
  EXPECT_EQ(SizeOf(fd), 3 * K64 + K64 / 2);
  EXPECT_EQ(ReadAll(fd), data);
  close(fd);
}

POSIX_CASE("fallocate", "zero_range_with_keep_size_leaves_the_size") {
  std::string data = Pattern(2 * K64, 4);
  WriteFile("f", data);
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, K64, 8 * K64));
  EXPECT_EQ(SizeOf(fd), 2 * K64);
  std::fill(data.begin() + K64, data.end(), '\0');
  EXPECT_EQ(ReadAll(fd), data);
  close(fd);
}

POSIX_CASE("fallocate", "zero_range_updates_mtime_and_ctime") {
  WriteFile("f", Pattern(K64));
  Times before = TimesBeforeChange("f");
  int fd = OpenRw("f");
  EXPECT_OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 10));
  close(fd);
  Times after = TimesOf("f");
  EXPECT_TRUE(Before(before.mtime, after.mtime));
  EXPECT_TRUE(Before(before.ctime, after.ctime));
}

POSIX_CASE("fallocate", "read_only_descriptor_is_ebadf") {
  WriteFile("f", "abc");
  int fd = static_cast<int>(EXPECT_OK(open("f", O_RDONLY)));
  EXPECT_ERRNO(fallocate(fd, 0, 0, K64), EBADF);
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1), EBADF);
  close(fd);
  EXPECT_EQ(Lstat("f").st_size, 3);
}

POSIX_CASE("fallocate", "zero_or_negative_length_or_offset_is_einval") {
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_ERRNO(fallocate(fd, 0, 0, 0), EINVAL);
  EXPECT_ERRNO(fallocate(fd, 0, 0, -1), EINVAL);
  EXPECT_ERRNO(fallocate(fd, 0, -1, 10), EINVAL);
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 0), EINVAL);
  close(fd);
}

POSIX_CASE("fallocate", "range_past_the_largest_offset_is_efbig") {
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_ERRNO(fallocate(fd, 0, INT64_MAX - 10, 100), EFBIG);
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_KEEP_SIZE, 1, INT64_MAX), EFBIG);
  close(fd);
  EXPECT_EQ(Lstat("f").st_size, 3);
}

POSIX_CASE("fallocate", "unknown_or_combined_modes_are_eopnotsupp") {
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_NO_HIDE_STALE, 0, K64), EOPNOTSUPP);
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0,
                         K64),
               EOPNOTSUPP);
  EXPECT_ERRNO(fallocate(fd, 0x4000, 0, K64), EOPNOTSUPP);
  close(fd);
}

POSIX_CASE("fallocate", "fifo_is_espipe") {
  EXPECT_OK(mkfifo("p", 0666));
  int fd = static_cast<int>(EXPECT_OK(open("p", O_RDWR)));
  EXPECT_ERRNO(fallocate(fd, 0, 0, K64), ESPIPE);
  close(fd);
}

POSIX_CASE("fallocate", "posix_fallocate_allocates") {
  WriteFile("f", "");
  int fd = OpenRw("f");
  EXPECT_EQ(posix_fallocate(fd, 0, 3 * K64), 0);
  EXPECT_EQ(SizeOf(fd), 3 * K64);
  close(fd);
}

// Only where capacity is small and virtual: on a disk filesystem this would
// allocate real blocks up to the moment the disk is full.
POSIX_CASE("fallocate", "past_the_quota_is_enospc") {
  constexpr long kFuseSuperMagic = 0x65735546;
  struct statfs sf {};
  EXPECT_OK(statfs(".", &sf));
  if (sf.f_type != kFuseSuperMagic) return;
  const uint64_t capacity = static_cast<uint64_t>(sf.f_blocks) * static_cast<uint64_t>(sf.f_bsize);
  if (capacity == 0 || capacity > (uint64_t{1} << 46)) return;
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_ERRNO(fallocate(fd, 0, 0, static_cast<off_t>(2 * capacity)), ENOSPC);
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(2 * capacity)), ENOSPC);
  EXPECT_EQ(SizeOf(fd), 3);
  close(fd);
}

}  // namespace
}  // namespace pail::posix
