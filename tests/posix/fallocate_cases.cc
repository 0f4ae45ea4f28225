// fallocate(2) (Linux; posix_fallocate is its mode 0): allocating, keeping
// the size, punching holes and zeroing ranges, and the errors of each.
// Ranges are multiples of 64 KiB so that every filesystem frees or maps
// them whole, whatever its block or chunk size.
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>
#include <optional>

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

// An allocation holds its space: it counts in st_blocks and in the free
// space, and goes with a punch or a truncate (ext4 and tmpfs alike).
POSIX_CASE("fallocate", "allocation_counts_in_blocks_and_free_space") {
  constexpr off_t kBig = 256 * K64;  // 16 MiB
  WriteFile("f", "");
  int fd = OpenRw("f");
  struct statfs before {};
  EXPECT_OK(fstatfs(fd, &before));
  EXPECT_OK(fallocate(fd, 0, 0, kBig));
  EXPECT_TRUE(BlocksOf(fd) >= kBig / 512);
  struct statfs after {};
  EXPECT_OK(fstatfs(fd, &after));
  const uint64_t taken = (static_cast<uint64_t>(before.f_bfree) - after.f_bfree) * after.f_bsize;
  EXPECT_TRUE(after.f_bfree < before.f_bfree && taken >= static_cast<uint64_t>(kBig) / 2);
  EXPECT_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, kBig));
  EXPECT_EQ(BlocksOf(fd), 0);
  EXPECT_OK(fallocate(fd, FALLOC_FL_KEEP_SIZE, kBig, 4 * K64));
  EXPECT_EQ(SizeOf(fd), kBig);
  EXPECT_TRUE(BlocksOf(fd) >= 4 * K64 / 512);
  EXPECT_OK(ftruncate(fd, K64));
  EXPECT_EQ(BlocksOf(fd), 0);
  close(fd);
}

// Copying a sparse file over an allocation leaves the allocation whole:
// ext4 writes the source's holes as zeros into it, pailfs punches them and
// keeps the reservation. Either way later writes there still have room.
POSIX_CASE("fallocate", "copying_holes_into_an_allocation_keeps_it") {
  int src = static_cast<int>(EXPECT_OK(open("src", O_RDWR | O_CREAT, 0644)));
  std::string head = Pattern(K64, 3);
  EXPECT_EQ(pwrite(src, head.data(), head.size(), 0), (ssize_t)head.size());
  EXPECT_OK(ftruncate(src, 8 * K64));
  WriteFile("dst", "");
  int dst = OpenRw("dst");
  EXPECT_OK(fallocate(dst, 0, 0, 8 * K64));
  std::string old = Pattern(8 * K64, 4);  // data where the holes go
  EXPECT_EQ(pwrite(dst, old.data(), old.size(), 0), (ssize_t)old.size());
  EXPECT_OK(fsync(dst));
  loff_t in = 0, out = 0;
  while (in < 8 * K64) {
    ssize_t n = copy_file_range(src, &in, dst, &out, static_cast<size_t>(8 * K64 - in), 0);
    EXPECT_OK(n);
    if (n <= 0) break;
  }
  EXPECT_EQ(ReadAll(dst), ReadAll(src));
  EXPECT_TRUE(BlocksOf(dst) >= 8 * K64 / 512);
  close(src);
  close(dst);
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

// The capacity of the filesystem under the case directory when it is a
// FUSE mount with a small one (pailfs's quota), else nothing: on a disk
// filesystem the cases below would allocate real blocks up to the moment
// the disk is full. Fills `sf`.
std::optional<uint64_t> SmallVirtualCapacity(struct statfs* sf) {
  constexpr long kFuseSuperMagic = 0x65735546;
  EXPECT_OK(statfs(".", sf));
  if (sf->f_type != kFuseSuperMagic) return std::nullopt;
  const uint64_t capacity = static_cast<uint64_t>(sf->f_blocks) * static_cast<uint64_t>(sf->f_bsize);
  if (capacity == 0 || capacity > (uint64_t{1} << 46)) return std::nullopt;
  return capacity;
}

POSIX_CASE("fallocate", "past_the_quota_is_enospc") {
  struct statfs sf {};
  std::optional<uint64_t> capacity = SmallVirtualCapacity(&sf);
  if (!capacity) return;
  WriteFile("f", "abc");
  int fd = OpenRw("f");
  EXPECT_ERRNO(fallocate(fd, 0, 0, static_cast<off_t>(2 * *capacity)), ENOSPC);
  EXPECT_ERRNO(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(2 * *capacity)), ENOSPC);
  EXPECT_EQ(SizeOf(fd), 3);
  close(fd);
}

// Writing into an allocation never meets a full filesystem: the space was
// set aside. Where capacity is small and virtual, as above.
POSIX_CASE("fallocate", "writes_into_an_allocation_find_room") {
  struct statfs sf {};
  if (!SmallVirtualCapacity(&sf)) return;
  const uint64_t free_bytes = static_cast<uint64_t>(sf.f_bavail) * static_cast<uint64_t>(sf.f_bsize);
  if (free_bytes < 64 * static_cast<uint64_t>(K64)) return;
  // All but 2 MiB of the free space, for a file that holds nothing yet.
  const off_t held = static_cast<off_t>(free_bytes) - 32 * K64;
  WriteFile("held", "");
  WriteFile("other", "");
  int fd = OpenRw("held");
  EXPECT_OK(fallocate(fd, 0, 0, held));
  int other = OpenRw("other");
  EXPECT_ERRNO(fallocate(other, 0, 0, 64 * K64), ENOSPC);
  std::string block = Pattern(64 * K64, 9);  // 4 MiB
  // Refused at the piece that finds no room (a short count), or at fsync.
  const bool refused = pwrite(other, block.data(), block.size(), 0) !=
                           static_cast<ssize_t>(block.size()) ||
                       fsync(other) != 0;
  EXPECT_TRUE(refused);
  // The same 4 MiB into the allocation, at its start and at its end.
  EXPECT_EQ(pwrite(fd, block.data(), block.size(), 0), static_cast<ssize_t>(block.size()));
  EXPECT_EQ(pwrite(fd, block.data(), block.size(), held - 64 * K64),
            static_cast<ssize_t>(block.size()));
  EXPECT_OK(fsync(fd));
  close(other);
  close(fd);
  EXPECT_OK(unlink("held"));
  // The space came back with the file.
  other = OpenRw("other");
  EXPECT_OK(fallocate(other, 0, 0, 64 * K64));
  close(other);
}

}  // namespace
}  // namespace pail::posix
