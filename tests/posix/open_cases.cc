// open(2)/openat(2) flags, and read/write round trips through open files.
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

int OpenOk(const char* path, int flags, mode_t mode = 0644) {
  int fd = open(path, flags, mode);
  if (fd < 0) throw CaseFailure{std::string("open ") + path + ": " + std::strerror(errno)};
  return fd;
}

std::string ReadAt(int fd, size_t n, off_t off) {
  std::string buf(n, '\0');
  ssize_t got = pread(fd, buf.data(), n, off);
  if (got < 0) throw CaseFailure{std::string("pread: ") + std::strerror(errno)};
  buf.resize(static_cast<size_t>(got));
  return buf;
}

POSIX_CASE("open", "creat_sets_mode_owner_and_type") {
  int fd = EXPECT_OK(open("f", O_CREAT | O_WRONLY, 0640));
  close(fd);
  struct stat st = Lstat("f");
  EXPECT_EQ(st.st_mode & S_IFMT, (mode_t)S_IFREG);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_uid, c.self().uid);
  EXPECT_EQ(st.st_gid, c.self().gid);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_nlink, 1u);
}

POSIX_CASE("open", "creat_applies_umask") {
  umask(027);
  close(EXPECT_OK(open("f", O_CREAT | O_WRONLY, 0777)));
  EXPECT_EQ(PermBits("f"), 0750u);
}

POSIX_CASE("open", "creat_existing_keeps_mode_and_data") {
  WriteFile("f", "hello", 0600);
  int fd = EXPECT_OK(open("f", O_CREAT | O_RDWR, 0777));
  close(fd);
  EXPECT_EQ(PermBits("f"), 0600u);
  EXPECT_EQ(ReadFile("f"), std::string("hello"));
}

POSIX_CASE("open", "creat_excl_on_existing_file_is_eexist") {
  WriteFile("f", "");
  EXPECT_ERRNO(open("f", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
}

POSIX_CASE("open", "creat_excl_on_dangling_symlink_is_eexist") {
  EXPECT_OK(symlink("nowhere", "l"));
  EXPECT_ERRNO(open("l", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
  EXPECT_TRUE(!Exists("nowhere"));
}

POSIX_CASE("open", "creat_excl_on_directory_is_eexist") {
  MakeDir("d");
  EXPECT_ERRNO(open("d", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
}

POSIX_CASE("open", "creat_through_dangling_symlink_creates_target") {
  EXPECT_OK(symlink("target", "l"));
  close(EXPECT_OK(open("l", O_CREAT | O_WRONLY, 0600)));
  EXPECT_EQ(TypeBits("target"), (mode_t)S_IFREG);
  EXPECT_EQ(PermBits("target"), 0600u);
}

POSIX_CASE("open", "trunc_empties_file_and_updates_times") {
  WriteFile("f", Pattern(10000));
  Times before = TimesBeforeChange("f");
  close(EXPECT_OK(open("f", O_WRONLY | O_TRUNC)));
  struct stat st = Lstat("f");
  EXPECT_EQ(st.st_size, 0);
  EXPECT_TRUE(Before(before.mtime, st.st_mtim));
  EXPECT_TRUE(Before(before.ctime, st.st_ctim));
}

POSIX_CASE("open", "creat_updates_parent_times") {
  MakeDir("d");
  Times before = TimesBeforeChange("d");
  close(EXPECT_OK(open("d/f", O_CREAT | O_WRONLY, 0644)));
  Times after = TimesOf("d");
  EXPECT_TRUE(Before(before.mtime, after.mtime));
  EXPECT_TRUE(Before(before.ctime, after.ctime));
}

POSIX_CASE("open", "creat_sets_new_file_times_to_now") {
  timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  start.tv_sec -= 2;  // clocks of a remote server may lag a little
  close(EXPECT_OK(open("f", O_CREAT | O_WRONLY, 0644)));
  Times t = TimesOf("f");
  EXPECT_TRUE(Before(start, t.atime));
  EXPECT_TRUE(Before(start, t.mtime));
  EXPECT_TRUE(Before(start, t.ctime));
}

POSIX_CASE("open", "append_writes_at_end") {
  WriteFile("f", "abc");
  int fd = EXPECT_OK(open("f", O_WRONLY | O_APPEND));
  EXPECT_OK(lseek(fd, 0, SEEK_SET));
  EXPECT_EQ(write(fd, "de", 2), 2);
  EXPECT_EQ(lseek(fd, 0, SEEK_CUR), 5);
  close(fd);
  EXPECT_EQ(ReadFile("f"), std::string("abcde"));
}

POSIX_CASE("open", "append_from_two_descriptors_interleaves") {
  WriteFile("f", "");
  int a = EXPECT_OK(open("f", O_WRONLY | O_APPEND));
  int b = EXPECT_OK(open("f", O_WRONLY | O_APPEND));
  EXPECT_EQ(write(a, "1", 1), 1);
  EXPECT_EQ(write(b, "2", 1), 1);
  EXPECT_EQ(write(a, "3", 1), 1);
  close(a);
  close(b);
  EXPECT_EQ(ReadFile("f"), std::string("123"));
}

POSIX_CASE("open", "rdonly_descriptor_rejects_write") {
  WriteFile("f", "x");
  int fd = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_ERRNO(write(fd, "y", 1), EBADF);
  close(fd);
}

POSIX_CASE("open", "wronly_descriptor_rejects_read") {
  WriteFile("f", "x");
  int fd = EXPECT_OK(open("f", O_WRONLY));
  char ch;
  EXPECT_ERRNO(read(fd, &ch, 1), EBADF);
  close(fd);
}

POSIX_CASE("open", "missing_file_is_enoent") { EXPECT_ERRNO(open("nope", O_RDONLY), ENOENT); }

POSIX_CASE("open", "creat_in_missing_directory_is_enoent") {
  EXPECT_ERRNO(open("nodir/f", O_CREAT | O_WRONLY, 0644), ENOENT);
}

POSIX_CASE("open", "empty_path_is_enoent") { EXPECT_ERRNO(open("", O_RDONLY), ENOENT); }

POSIX_CASE("open", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(open("f/x", O_RDONLY), ENOTDIR);
  EXPECT_ERRNO(open("f/x", O_CREAT | O_WRONLY, 0644), ENOTDIR);
}

POSIX_CASE("open", "trailing_slash_on_file_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(open("f/", O_RDONLY), ENOTDIR);
}

POSIX_CASE("open", "directory_for_writing_is_eisdir") {
  MakeDir("d");
  EXPECT_ERRNO(open("d", O_WRONLY), EISDIR);
  EXPECT_ERRNO(open("d", O_RDWR), EISDIR);
}

POSIX_CASE("open", "creat_on_directory_is_eisdir") {
  MakeDir("d");
  EXPECT_ERRNO(open("d", O_CREAT | O_WRONLY, 0644), EISDIR);
}

POSIX_CASE("open", "directory_rdonly_succeeds") {
  MakeDir("d");
  int fd = EXPECT_OK(open("d", O_RDONLY));
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  close(fd);
}

POSIX_CASE("open", "o_directory_on_file_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(open("f", O_RDONLY | O_DIRECTORY), ENOTDIR);
}

POSIX_CASE("open", "o_nofollow_on_symlink_is_eloop") {
  WriteFile("f", "");
  EXPECT_OK(symlink("f", "l"));
  EXPECT_ERRNO(open("l", O_RDONLY | O_NOFOLLOW), ELOOP);
}

POSIX_CASE("open", "symlink_loop_is_eloop") {
  EXPECT_OK(symlink("b", "a"));
  EXPECT_OK(symlink("a", "b"));
  EXPECT_ERRNO(open("a", O_RDONLY), ELOOP);
}

POSIX_CASE("open", "open_follows_symlink") {
  WriteFile("f", "data");
  EXPECT_OK(symlink("f", "l"));
  EXPECT_EQ(ReadFile("l"), std::string("data"));
}

POSIX_CASE("open", "name_longer_than_name_max_is_enametoolong") {
  EXPECT_ERRNO(open(TooLongName().c_str(), O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
}

POSIX_CASE("open", "name_of_name_max_bytes_works") {
  std::string name = MaxName();
  close(EXPECT_OK(open(name.c_str(), O_CREAT | O_WRONLY, 0644)));
  EXPECT_TRUE(ListDir(".").count(name) == 1);
}

POSIX_CASE("open", "openat_relative_to_directory_descriptor") {
  MakeDir("d");
  int dfd = EXPECT_OK(open("d", O_RDONLY | O_DIRECTORY));
  close(EXPECT_OK(openat(dfd, "f", O_CREAT | O_WRONLY, 0600)));
  close(dfd);
  EXPECT_EQ(PermBits("d/f"), 0600u);
}

POSIX_CASE("open", "openat_on_file_descriptor_is_enotdir") {
  WriteFile("f", "");
  int fd = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_ERRNO(openat(fd, "x", O_RDONLY), ENOTDIR);
  close(fd);
}

POSIX_CASE("open", "o_cloexec_sets_fd_cloexec") {
  WriteFile("f", "");
  int fd = EXPECT_OK(open("f", O_RDONLY | O_CLOEXEC));
  EXPECT_TRUE((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  close(fd);
}

POSIX_CASE("open", "fifo_wronly_nonblock_without_reader_is_enxio") {
  EXPECT_OK(mkfifo("p", 0644));
  EXPECT_ERRNO(open("p", O_WRONLY | O_NONBLOCK), ENXIO);
}

POSIX_CASE("open", "creat_mode_0_still_gives_writable_descriptor") {
  int fd = EXPECT_OK(open("f", O_CREAT | O_RDWR, 0));
  EXPECT_EQ(write(fd, "abc", 3), 3);
  EXPECT_EQ(ReadAt(fd, 3, 0), std::string("abc"));
  close(fd);
  EXPECT_EQ(PermBits("f"), 0u);
}

POSIX_CASE("open", "rdwr_descriptor_reads_own_writes") {
  int fd = EXPECT_OK(open("f", O_CREAT | O_RDWR, 0644));
  std::string data = Pattern(10000);
  EXPECT_EQ(write(fd, data.data(), data.size()), (ssize_t)data.size());
  EXPECT_EQ(ReadAt(fd, 20000, 0), data);
  close(fd);
}

POSIX_CASE("open", "write_is_visible_to_other_descriptor_before_close") {
  int w = EXPECT_OK(open("f", O_CREAT | O_WRONLY, 0644));
  int r = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_EQ(write(w, "xyz", 3), 3);
  EXPECT_EQ(ReadAt(r, 10, 0), std::string("xyz"));
  close(w);
  close(r);
}

POSIX_CASE("open", "pwrite_past_end_leaves_zero_filled_hole") {
  int fd = EXPECT_OK(open("f", O_CREAT | O_RDWR, 0644));
  EXPECT_EQ(pwrite(fd, "end", 3, 300000), 3);
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  EXPECT_EQ(st.st_size, 300003);
  std::string all = ReadAt(fd, 400000, 0);
  close(fd);
  EXPECT_EQ(all.size(), 300003u);
  EXPECT_EQ(all.substr(0, 300000), std::string(300000, '\0'));
  EXPECT_EQ(all.substr(300000), std::string("end"));
}

POSIX_CASE("open", "read_at_end_of_file_returns_zero") {
  WriteFile("f", "abc");
  int fd = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_EQ(ReadAt(fd, 10, 3), std::string());
  EXPECT_EQ(ReadAt(fd, 10, 1000), std::string());
  close(fd);
}

POSIX_CASE("open", "write_updates_mtime_and_ctime") {
  WriteFile("f", "abc");
  Times before = TimesBeforeChange("f");
  int fd = EXPECT_OK(open("f", O_WRONLY));
  EXPECT_EQ(write(fd, "z", 1), 1);
  close(fd);
  Times after = TimesOf("f");
  EXPECT_TRUE(Before(before.mtime, after.mtime));
  EXPECT_TRUE(Before(before.ctime, after.ctime));
}

POSIX_CASE("open", "overwrite_in_middle_keeps_surroundings") {
  std::string data = Pattern(200000, 3);
  WriteFile("f", data);
  int fd = EXPECT_OK(open("f", O_WRONLY));
  std::string patch = Pattern(5000, 9);
  EXPECT_EQ(pwrite(fd, patch.data(), patch.size(), 131000), (ssize_t)patch.size());
  close(fd);
  data.replace(131000, patch.size(), patch);
  EXPECT_EQ(ReadFile("f"), data);
}

// Round trips of sizes around block and page boundaries, where a file
// system that stores data in fixed-size pieces is most likely to go wrong.
POSIX_CASES {
  for (size_t size : {0ul, 1ul, 511ul, 4095ul, 4096ul, 4097ul, 65536ul, 131079ul, 262144ul,
                      1048579ul, 4194304ul}) {
    Register("open", "write_read_round_trip_" + std::to_string(size) + "_bytes", [size](Context&) {
      std::string data = Pattern(size, static_cast<unsigned>(size));
      WriteFile("f", data);
      EXPECT_EQ(Lstat("f").st_size, (off_t)size);
      EXPECT_EQ(ReadFile("f"), data);
    });
  }
  // Unaligned reads at many offsets of one file.
  for (size_t offset : {0ul, 1ul, 4095ul, 4096ul, 65535ul, 262143ul, 262144ul, 500000ul}) {
    Register("open", "pread_at_offset_" + std::to_string(offset), [offset](Context&) {
      std::string data = Pattern(600000, 5);
      WriteFile("f", data);
      int fd = OpenOk("f", O_RDONLY);
      EXPECT_EQ(ReadAt(fd, 7000, static_cast<off_t>(offset)), data.substr(offset, 7000));
      close(fd);
    });
  }
}

}  // namespace
}  // namespace pail::posix
