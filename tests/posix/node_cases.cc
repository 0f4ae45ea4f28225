// mkfifo(3)/mkfifoat, mknod(2), symlink(2) and readlink(2).
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

POSIX_CASE("mkfifo", "creates_fifo_with_mode_and_owner") {
  EXPECT_OK(mkfifo("p", 0640));
  struct stat st = Lstat("p");
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_uid, c.self().uid);
  EXPECT_EQ(st.st_size, 0);
}

POSIX_CASE("mkfifo", "applies_umask") {
  umask(077);
  EXPECT_OK(mkfifo("p", 0666));
  EXPECT_EQ(PermBits("p"), 0600u);
}

POSIX_CASE("mkfifo", "passes_data_between_reader_and_writer") {
  EXPECT_OK(mkfifo("p", 0600));
  int r = EXPECT_OK(open("p", O_RDONLY | O_NONBLOCK));
  int w = EXPECT_OK(open("p", O_WRONLY));
  EXPECT_EQ(write(w, "ping", 4), 4);
  char buf[8] = {};
  EXPECT_EQ(read(r, buf, sizeof buf), 4);
  EXPECT_EQ(std::string(buf), std::string("ping"));
  close(w);
  close(r);
}

POSIX_CASE("mkfifo", "existing_name_is_eexist") {
  WriteFile("f", "");
  EXPECT_ERRNO(mkfifo("f", 0644), EEXIST);
  EXPECT_OK(mkfifo("p", 0644));
  EXPECT_ERRNO(mkfifo("p", 0644), EEXIST);
}

POSIX_CASE("mkfifo", "missing_parent_is_enoent") { EXPECT_ERRNO(mkfifo("a/p", 0644), ENOENT); }

POSIX_CASE("mkfifo", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(mkfifo("f/p", 0644), ENOTDIR);
}

POSIX_CASE("mkfifo", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(mkfifo(TooLongName().c_str(), 0644), ENAMETOOLONG);
}

POSIX_CASE("mkfifo", "updates_parent_times") {
  MakeDir("d");
  Times before = TimesBeforeChange("d");
  EXPECT_OK(mkfifo("d/p", 0644));
  EXPECT_TRUE(Before(before.mtime, TimesOf("d").mtime));
  EXPECT_TRUE(Before(before.ctime, TimesOf("d").ctime));
}

POSIX_CASE("mkfifo", "no_write_permission_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("d", 0755); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(mkfifo("d/p", 0644), EACCES); });
}

POSIX_CASE("mkfifo", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("d", 0776); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(mkfifo("d/p", 0644), EACCES); });
}

POSIX_CASE("mknod", "regular_file") {
  EXPECT_OK(mknod("f", S_IFREG | 0604, 0));
  EXPECT_EQ(TypeBits("f"), (mode_t)S_IFREG);
  EXPECT_EQ(PermBits("f"), 0604u);
}

POSIX_CASE("mknod", "fifo") {
  EXPECT_OK(mknod("p", S_IFIFO | 0620, 0));
  EXPECT_EQ(TypeBits("p"), (mode_t)S_IFIFO);
  EXPECT_EQ(PermBits("p"), 0620u);
}

POSIX_CASE("mknod", "socket") {
  EXPECT_OK(mknod("s", S_IFSOCK | 0600, 0));
  EXPECT_EQ(TypeBits("s"), (mode_t)S_IFSOCK);
}

POSIX_CASES {
  for (mode_t type : {(mode_t)S_IFCHR, (mode_t)S_IFBLK}) {
    const char* label = type == S_IFCHR ? "chardev" : "blockdev";
    Register("mknod", std::string(label) + "_keeps_device_number_or_needs_privilege",
             [type](Context& c) {
               int rc = mknod("dev", type | 0640, makedev(12, 34));
               if (!c.privileged()) {
                 EXPECT_ERRNO(rc, EPERM);
                 return;
               }
               EXPECT_OK(rc);
               struct stat st = Lstat("dev");
               EXPECT_EQ(st.st_mode & S_IFMT, type);
               EXPECT_EQ(st.st_mode & 07777, 0640u);
               EXPECT_EQ(major(st.st_rdev), 12u);
               EXPECT_EQ(minor(st.st_rdev), 34u);
             });
  }
}

POSIX_CASE("mknod", "large_device_numbers_survive") {
  if (!c.privileged()) return;
  EXPECT_OK(mknod("dev", S_IFCHR | 0600, makedev(4000, 1000000)));
  struct stat st = Lstat("dev");
  EXPECT_EQ(major(st.st_rdev), 4000u);
  EXPECT_EQ(minor(st.st_rdev), 1000000u);
}

POSIX_CASE("mknod", "existing_name_is_eexist") {
  WriteFile("f", "");
  EXPECT_ERRNO(mknod("f", S_IFIFO | 0644, 0), EEXIST);
}

POSIX_CASE("mknod", "directory_type_is_rejected") {
  EXPECT_ERRNO(mknod("d", S_IFDIR | 0755, 0), EPERM, EINVAL);
}

POSIX_CASE("mknod", "missing_parent_is_enoent") {
  EXPECT_ERRNO(mknod("a/f", S_IFIFO | 0644, 0), ENOENT);
}

POSIX_CASE("mknod", "no_write_permission_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("d", 0755); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(mknod("d/p", S_IFIFO | 0644, 0), EACCES); });
}

POSIX_CASE("symlink", "creates_link_with_target") {
  EXPECT_OK(symlink("some/target", "l"));
  struct stat st = Lstat("l");
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(st.st_size, 11);
  EXPECT_EQ(st.st_uid, c.self().uid);
  char buf[64] = {};
  EXPECT_EQ(readlink("l", buf, sizeof buf), 11);
  EXPECT_EQ(std::string(buf), std::string("some/target"));
}

POSIX_CASES {
  for (size_t length : {1ul, 100ul, 1000ul, 4095ul}) {
    Register("symlink", "target_of_" + std::to_string(length) + "_bytes", [length](Context&) {
      std::string target(length, 'x');
      for (size_t i = 7; i < length; i += 8) target[i] = '/';
      EXPECT_OK(symlink(target.c_str(), "l"));
      std::string buf(5000, '\0');
      EXPECT_EQ(readlink("l", buf.data(), buf.size()), (ssize_t)length);
      EXPECT_EQ(buf.substr(0, length), target);
      EXPECT_EQ(Lstat("l").st_size, (off_t)length);
    });
  }
}

POSIX_CASE("symlink", "target_longer_than_path_max_is_enametoolong") {
  std::string target(4096, 'x');
  EXPECT_ERRNO(symlink(target.c_str(), "l"), ENAMETOOLONG);
}

POSIX_CASE("symlink", "dangling_link_is_allowed") {
  EXPECT_OK(symlink("does/not/exist", "l"));
  EXPECT_ERRNO(open("l", O_RDONLY), ENOENT);
}

POSIX_CASE("symlink", "followed_by_stat_and_open") {
  MakeDir("d");
  WriteFile("d/f", "through");
  EXPECT_OK(symlink("d", "ld"));
  EXPECT_EQ(ReadFile("ld/f"), std::string("through"));
  EXPECT_EQ(Stat("ld").st_ino, Lstat("d").st_ino);
}

POSIX_CASE("symlink", "absolute_target") {
  WriteFile("f", "abs");
  EXPECT_OK(symlink((c.dir() + "/f").c_str(), "l"));
  EXPECT_EQ(ReadFile("l"), std::string("abs"));
}

POSIX_CASE("symlink", "existing_name_is_eexist") {
  WriteFile("f", "");
  MakeDir("d");
  EXPECT_ERRNO(symlink("x", "f"), EEXIST);
  EXPECT_ERRNO(symlink("x", "d"), EEXIST);
  EXPECT_OK(symlink("x", "l"));
  EXPECT_ERRNO(symlink("y", "l"), EEXIST);
}

POSIX_CASE("symlink", "missing_parent_is_enoent") { EXPECT_ERRNO(symlink("x", "a/l"), ENOENT); }

POSIX_CASE("symlink", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(symlink("x", "f/l"), ENOTDIR);
}

POSIX_CASE("symlink", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(symlink("x", TooLongName().c_str()), ENAMETOOLONG);
}

POSIX_CASE("symlink", "updates_parent_times") {
  MakeDir("d");
  Times before = TimesBeforeChange("d");
  EXPECT_OK(symlink("x", "d/l"));
  EXPECT_TRUE(Before(before.mtime, TimesOf("d").mtime));
  EXPECT_TRUE(Before(before.ctime, TimesOf("d").ctime));
}

POSIX_CASE("symlink", "no_write_permission_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("d", 0755); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(symlink("x", "d/l"), EACCES); });
}

POSIX_CASE("symlink", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("d", 0776); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(symlink("x", "d/l"), EACCES); });
}

POSIX_CASE("symlink", "readlink_on_non_symlink_is_einval") {
  WriteFile("f", "");
  char buf[16];
  EXPECT_ERRNO(readlink("f", buf, sizeof buf), EINVAL);
}

POSIX_CASE("symlink", "readlink_truncates_to_buffer") {
  EXPECT_OK(symlink("abcdefgh", "l"));
  char buf[4];
  EXPECT_EQ(readlink("l", buf, sizeof buf), 4);
  EXPECT_EQ(std::string(buf, 4), std::string("abcd"));
}

POSIX_CASE("symlink", "chain_of_links_resolves") {
  WriteFile("f", "end");
  EXPECT_OK(symlink("f", "l0"));
  for (int i = 1; i < 10; ++i)
    EXPECT_OK(symlink(("l" + std::to_string(i - 1)).c_str(), ("l" + std::to_string(i)).c_str()));
  EXPECT_EQ(ReadFile("l9"), std::string("end"));
}

}  // namespace
}  // namespace pail::posix
