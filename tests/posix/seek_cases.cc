// lseek(2) SEEK_DATA and SEEK_HOLE (POSIX.1-2024; Linux since 3.1). Data
// and holes are laid out in multiples of 64 KiB so that every filesystem
// that tracks holes at all reports them at the same offsets. A filesystem
// may also report a hole as data; these cases expect holes to be found.
#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

constexpr off_t K64 = 64 * 1024;
constexpr off_t M1 = 1024 * 1024;

// 2 MiB: 64 KiB of data at 0 and at 1 MiB, holes elsewhere.
int SparseFile(const char* name) {
  int fd = static_cast<int>(EXPECT_OK(open(name, O_RDWR | O_CREAT | O_TRUNC, 0644)));
  std::string data = Pattern(K64, 2);
  EXPECT_EQ(pwrite(fd, data.data(), data.size(), 0), (ssize_t)data.size());
  EXPECT_EQ(pwrite(fd, data.data(), data.size(), M1), (ssize_t)data.size());
  EXPECT_OK(ftruncate(fd, 2 * M1));
  return fd;
}

POSIX_CASE("seek", "data_and_holes_are_found") {
  int fd = SparseFile("f");
  EXPECT_EQ(lseek(fd, 0, SEEK_DATA), 0);
  EXPECT_EQ(lseek(fd, 100, SEEK_DATA), 100);
  EXPECT_EQ(lseek(fd, K64, SEEK_DATA), M1);
  EXPECT_EQ(lseek(fd, M1 - 1, SEEK_DATA), M1);
  EXPECT_EQ(lseek(fd, 0, SEEK_HOLE), K64);
  EXPECT_EQ(lseek(fd, K64 + 5, SEEK_HOLE), K64 + 5);
  EXPECT_EQ(lseek(fd, M1, SEEK_HOLE), M1 + K64);
  EXPECT_EQ(lseek(fd, 2 * M1 - 1, SEEK_HOLE), 2 * M1 - 1);
  close(fd);
}

POSIX_CASE("seek", "the_descriptor_moves_to_the_answer") {
  int fd = SparseFile("f");
  EXPECT_EQ(lseek(fd, K64, SEEK_DATA), M1);
  EXPECT_EQ(lseek(fd, 0, SEEK_CUR), M1);
  EXPECT_EQ(lseek(fd, 10, SEEK_HOLE), K64);
  EXPECT_EQ(lseek(fd, 0, SEEK_CUR), K64);
  close(fd);
}

POSIX_CASE("seek", "no_data_after_the_last_run_is_enxio") {
  int fd = SparseFile("f");
  EXPECT_ERRNO(lseek(fd, M1 + K64, SEEK_DATA), ENXIO);
  close(fd);
}

POSIX_CASE("seek", "at_or_past_the_end_is_enxio") {
  int fd = SparseFile("f");
  EXPECT_ERRNO(lseek(fd, 2 * M1, SEEK_DATA), ENXIO);
  EXPECT_ERRNO(lseek(fd, 2 * M1, SEEK_HOLE), ENXIO);
  EXPECT_ERRNO(lseek(fd, 3 * M1, SEEK_HOLE), ENXIO);
  EXPECT_ERRNO(lseek(fd, -1, SEEK_DATA), ENXIO);
  close(fd);
}

POSIX_CASE("seek", "the_end_of_a_full_file_is_a_hole") {
  WriteFile("f", Pattern(100000));
  int fd = static_cast<int>(EXPECT_OK(open("f", O_RDONLY)));
  EXPECT_EQ(lseek(fd, 0, SEEK_HOLE), 100000);
  EXPECT_EQ(lseek(fd, 99999, SEEK_DATA), 99999);
  close(fd);
}

POSIX_CASE("seek", "empty_file_is_enxio") {
  WriteFile("f", "");
  int fd = static_cast<int>(EXPECT_OK(open("f", O_RDONLY)));
  EXPECT_ERRNO(lseek(fd, 0, SEEK_DATA), ENXIO);
  EXPECT_ERRNO(lseek(fd, 0, SEEK_HOLE), ENXIO);
  close(fd);
}

POSIX_CASE("seek", "a_file_of_holes_has_no_data") {
  int fd = static_cast<int>(EXPECT_OK(open("f", O_RDWR | O_CREAT, 0644)));
  EXPECT_OK(ftruncate(fd, M1));
  EXPECT_ERRNO(lseek(fd, 0, SEEK_DATA), ENXIO);
  EXPECT_EQ(lseek(fd, 7, SEEK_HOLE), 7);
  close(fd);
}

POSIX_CASE("seek", "a_punched_hole_is_found") {
  WriteFile("f", Pattern(4 * K64));
  int fd = static_cast<int>(EXPECT_OK(open("f", O_RDWR)));
  EXPECT_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, K64, 2 * K64));
  EXPECT_EQ(lseek(fd, 0, SEEK_HOLE), K64);
  EXPECT_EQ(lseek(fd, K64, SEEK_DATA), 3 * K64);
  close(fd);
}

POSIX_CASE("seek", "works_on_a_write_only_descriptor") {
  int fd = SparseFile("f");
  close(fd);
  fd = static_cast<int>(EXPECT_OK(open("f", O_WRONLY)));
  EXPECT_EQ(lseek(fd, 0, SEEK_HOLE), K64);
  close(fd);
}

}  // namespace
}  // namespace pail::posix
