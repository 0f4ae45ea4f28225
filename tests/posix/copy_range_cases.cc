// copy_file_range(2) (Linux): copies between and within files, how the
// offsets move, and the errors. A copy may come back short; the helpers
// loop the way cp does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdint>

#include "posix_util.h"

namespace pail::posix {
namespace {

constexpr off_t K64 = 64 * 1024;

int Open(const char* name, int flags) { return static_cast<int>(EXPECT_OK(open(name, flags))); }

// Copies `length` bytes or up to the source's end, from the descriptors'
// offsets; returns the bytes copied.
off_t CopyAll(int in, int out, off_t length) {
  off_t done = 0;
  while (done < length) {
    ssize_t n = copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(length - done), 0);
    EXPECT_OK(n);
    if (n == 0) break;
    done += n;
  }
  return done;
}

POSIX_CASE("copy_range", "copies_and_moves_both_offsets") {
  std::string data = Pattern(300000, 6);
  WriteFile("src", data);
  WriteFile("dst", "");
  int in = Open("src", O_RDONLY);
  int out = Open("dst", O_WRONLY);
  EXPECT_EQ(CopyAll(in, out, 1 << 30), (off_t)data.size());
  EXPECT_EQ(lseek(in, 0, SEEK_CUR), (off_t)data.size());
  EXPECT_EQ(lseek(out, 0, SEEK_CUR), (off_t)data.size());
  close(in);
  close(out);
  EXPECT_EQ(ReadFile("dst"), data);
}

POSIX_CASE("copy_range", "explicit_offsets_move_only_themselves") {
  WriteFile("src", "0123456789");
  WriteFile("dst", "abcdefghij");
  int in = Open("src", O_RDONLY);
  int out = Open("dst", O_WRONLY);
  loff_t off_in = 2, off_out = 5;
  EXPECT_EQ(copy_file_range(in, &off_in, out, &off_out, 3, 0), 3);
  EXPECT_EQ(off_in, 5);
  EXPECT_EQ(off_out, 8);
  EXPECT_EQ(lseek(in, 0, SEEK_CUR), 0);
  EXPECT_EQ(lseek(out, 0, SEEK_CUR), 0);
  close(in);
  close(out);
  EXPECT_EQ(ReadFile("dst"), std::string("abcde234ij"));
}

POSIX_CASE("copy_range", "grows_the_destination_past_its_end") {
  WriteFile("src", Pattern(K64, 1));
  WriteFile("dst", "xyz");
  int in = Open("src", O_RDONLY);
  int out = Open("dst", O_WRONLY);
  loff_t off_in = 0, off_out = 2 * K64;
  EXPECT_EQ(copy_file_range(in, &off_in, out, &off_out, K64, 0), K64);
  close(in);
  close(out);
  std::string want = "xyz";
  want.resize(2 * K64, '\0');
  want += Pattern(K64, 1);
  EXPECT_EQ(ReadFile("dst"), want);
}

POSIX_CASE("copy_range", "stops_at_the_end_of_the_source") {
  WriteFile("src", "short");
  WriteFile("dst", "");
  int in = Open("src", O_RDONLY);
  int out = Open("dst", O_WRONLY);
  loff_t off_in = 2;
  EXPECT_EQ(copy_file_range(in, &off_in, out, nullptr, 1000, 0), 3);
  off_in = 5;
  EXPECT_EQ(copy_file_range(in, &off_in, out, nullptr, 1000, 0), 0);
  off_in = 1000;
  EXPECT_EQ(copy_file_range(in, &off_in, out, nullptr, 1000, 0), 0);
  close(in);
  close(out);
  EXPECT_EQ(ReadFile("dst"), std::string("ort"));
}

POSIX_CASE("copy_range", "sparse_source_copies_its_holes_as_zeros") {
  int fd = static_cast<int>(EXPECT_OK(open("src", O_RDWR | O_CREAT, 0644)));
  std::string a = Pattern(K64, 2);
  EXPECT_EQ(pwrite(fd, a.data(), a.size(), 0), (ssize_t)a.size());
  EXPECT_EQ(pwrite(fd, a.data(), a.size(), 16 * K64), (ssize_t)a.size());
  EXPECT_OK(ftruncate(fd, 32 * K64));
  close(fd);
  WriteFile("dst", Pattern(40 * K64, 8));  // old data where the holes go
  int in = Open("src", O_RDONLY);
  int out = Open("dst", O_WRONLY);
  EXPECT_EQ(CopyAll(in, out, 32 * K64), 32 * K64);
  close(in);
  close(out);
  std::string want = ReadFile("src") + Pattern(40 * K64, 8).substr(32 * K64);
  EXPECT_EQ(ReadFile("dst"), want);
}

POSIX_CASE("copy_range", "within_one_file_without_overlap") {
  WriteFile("f", "0123456789");
  int fd = Open("f", O_RDWR);
  loff_t off_in = 0, off_out = 5;
  EXPECT_EQ(copy_file_range(fd, &off_in, fd, &off_out, 5, 0), 5);
  off_in = 0;
  off_out = 10;
  EXPECT_EQ(copy_file_range(fd, &off_in, fd, &off_out, 10, 0), 10);
  close(fd);
  EXPECT_EQ(ReadFile("f"), std::string("01234012340123401234"));
}

POSIX_CASE("copy_range", "overlap_within_one_file_is_einval") {
  WriteFile("f", "0123456789");
  int fd = Open("f", O_RDWR);
  loff_t off_in = 0, off_out = 3;
  EXPECT_ERRNO(copy_file_range(fd, &off_in, fd, &off_out, 5, 0), EINVAL);
  off_in = 3;
  off_out = 0;
  EXPECT_ERRNO(copy_file_range(fd, &off_in, fd, &off_out, 5, 0), EINVAL);
  close(fd);
  EXPECT_EQ(ReadFile("f"), std::string("0123456789"));
}

POSIX_CASE("copy_range", "updates_mtime_and_ctime_of_the_destination") {
  WriteFile("src", "data");
  WriteFile("dst", "");
  Times before = TimesBeforeChange("dst");
  int in = Open("src", O_RDONLY);
  int out = Open("dst", O_WRONLY);
  EXPECT_EQ(copy_file_range(in, nullptr, out, nullptr, 4, 0), 4);
  close(in);
  close(out);
  Times after = TimesOf("dst");
  EXPECT_TRUE(Before(before.mtime, after.mtime));
  EXPECT_TRUE(Before(before.ctime, after.ctime));
}

POSIX_CASE("copy_range", "wrong_access_modes_are_ebadf") {
  WriteFile("src", "data");
  WriteFile("dst", "");
  int in_wo = Open("src", O_WRONLY);
  int in = Open("src", O_RDONLY);
  int out_ro = Open("dst", O_RDONLY);
  int out_append = Open("dst", O_WRONLY | O_APPEND);
  int out = Open("dst", O_WRONLY);
  EXPECT_ERRNO(copy_file_range(in_wo, nullptr, out, nullptr, 4, 0), EBADF);
  EXPECT_ERRNO(copy_file_range(in, nullptr, out_ro, nullptr, 4, 0), EBADF);
  EXPECT_ERRNO(copy_file_range(in, nullptr, out_append, nullptr, 4, 0), EBADF);
  EXPECT_ERRNO(copy_file_range(-1, nullptr, out, nullptr, 4, 0), EBADF);
  for (int fd : {in_wo, in, out_ro, out_append, out}) close(fd);
  EXPECT_EQ(ReadFile("dst"), std::string());
}

POSIX_CASE("copy_range", "directories_are_eisdir") {
  MakeDir("d");
  WriteFile("f", "data");
  int dir = Open("d", O_RDONLY | O_DIRECTORY);
  int in = Open("f", O_RDONLY);
  int out = Open("f", O_WRONLY);
  EXPECT_ERRNO(copy_file_range(dir, nullptr, out, nullptr, 4, 0), EISDIR);
  EXPECT_ERRNO(copy_file_range(in, nullptr, dir, nullptr, 4, 0), EISDIR);
  for (int fd : {dir, in, out}) close(fd);
}

POSIX_CASE("copy_range", "fifo_or_flags_are_einval") {
  EXPECT_OK(mkfifo("p", 0666));
  WriteFile("f", "data");
  int fifo = Open("p", O_RDWR);
  int in = Open("f", O_RDONLY);
  int out = Open("f", O_WRONLY);
  EXPECT_ERRNO(copy_file_range(fifo, nullptr, out, nullptr, 4, 0), EINVAL);
  EXPECT_ERRNO(copy_file_range(in, nullptr, fifo, nullptr, 4, 0), EINVAL);
  loff_t off_out = 10;
  EXPECT_ERRNO(copy_file_range(in, nullptr, out, &off_out, 4, 1), EINVAL);
  for (int fd : {fifo, in, out}) close(fd);
}

POSIX_CASE("copy_range", "wrapping_range_is_eoverflow") {
  WriteFile("src", "data");
  WriteFile("dst", "");
  int in = Open("src", O_RDONLY);
  int out = Open("dst", O_WRONLY);
  loff_t off_in = 1;
  EXPECT_ERRNO(copy_file_range(in, &off_in, out, nullptr, SIZE_MAX, 0), EOVERFLOW);
  for (int fd : {in, out}) close(fd);
}

// Another mounted filesystem that any user may write to, when there is one.
POSIX_CASE("copy_range", "across_filesystems_is_exdev") {
  struct stat here {}, shm {};
  EXPECT_OK(stat(".", &here));
  if (stat("/dev/shm", &shm) != 0 || shm.st_dev == here.st_dev) return;
  std::string other = "/dev/shm/pail-posix-copy-" + std::to_string(getpid());
  WriteFile("f", "data");
  int local = Open("f", O_RDWR);
  int away = static_cast<int>(EXPECT_OK(open(other.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600)));
  unlink(other.c_str());
  EXPECT_OK(write(away, "more", 4));
  loff_t off_in = 0, off_out = 0;
  EXPECT_ERRNO(copy_file_range(local, &off_in, away, &off_out, 4, 0), EXDEV);
  off_in = off_out = 0;
  EXPECT_ERRNO(copy_file_range(away, &off_in, local, &off_out, 4, 0), EXDEV);
  close(local);
  close(away);
}

POSIX_CASE("copy_range", "non_root_copy_clears_setuid") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("src", "data");
    WriteFile("dst", "", 0644);
    EXPECT_OK(chmod("dst", 04755));
    int in = Open("src", O_RDONLY);
    int out = Open("dst", O_WRONLY);
    EXPECT_EQ(copy_file_range(in, nullptr, out, nullptr, 4, 0), 4);
    close(in);
    close(out);
    EXPECT_EQ(PermBits("dst"), (mode_t)0755);
  });
}

}  // namespace
}  // namespace pail::posix
