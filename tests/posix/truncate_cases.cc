// truncate(2) and ftruncate(2).
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

POSIX_CASES {
  // Shrinks and growths across chunk-like boundaries: grown space must
  // read as zeros even where old data used to be.
  struct Step {
    off_t from, to;
  };
  for (Step s : {Step{0, 1}, Step{0, 5000}, Step{10000, 0}, Step{10000, 4096}, Step{10000, 4095},
                 Step{300000, 262144}, Step{300000, 100000}, Step{70000, 70000},
                 Step{1000, 10000000}}) {
    Register("truncate",
             "from_" + std::to_string(s.from) + "_to_" + std::to_string(s.to), [s](Context&) {
               std::string data = Pattern(static_cast<size_t>(s.from), 7);
               WriteFile("f", data);
               EXPECT_OK(truncate("f", s.to));
               EXPECT_EQ(Lstat("f").st_size, s.to);
               std::string want = data.substr(0, static_cast<size_t>(std::min(s.from, s.to)));
               want.resize(static_cast<size_t>(s.to), '\0');
               EXPECT_EQ(ReadFile("f"), want);
             });
  }
}

POSIX_CASE("truncate", "shrink_then_grow_reads_zeros") {
  WriteFile("f", Pattern(200000));
  EXPECT_OK(truncate("f", 1000));
  EXPECT_OK(truncate("f", 200000));
  std::string want = Pattern(200000).substr(0, 1000);
  want.resize(200000, '\0');
  EXPECT_EQ(ReadFile("f"), want);
}

POSIX_CASE("truncate", "updates_mtime_and_ctime_when_size_changes") {
  WriteFile("f", "abc");
  Times before = TimesBeforeChange("f");
  EXPECT_OK(truncate("f", 1));
  EXPECT_TRUE(Before(before.mtime, TimesOf("f").mtime));
  EXPECT_TRUE(Before(before.ctime, TimesOf("f").ctime));
}

POSIX_CASE("truncate", "directory_is_eisdir") {
  MakeDir("d");
  EXPECT_ERRNO(truncate("d", 0), EISDIR);
}

POSIX_CASE("truncate", "negative_length_is_einval") {
  WriteFile("f", "abc");
  EXPECT_ERRNO(truncate("f", -1), EINVAL);
  EXPECT_EQ(Lstat("f").st_size, 3);
}

POSIX_CASE("truncate", "missing_is_enoent") { EXPECT_ERRNO(truncate("nope", 0), ENOENT); }

POSIX_CASE("truncate", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(truncate("f/x", 0), ENOTDIR);
}

POSIX_CASE("truncate", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(truncate(TooLongName().c_str(), 0), ENAMETOOLONG);
}

POSIX_CASE("truncate", "follows_symlink") {
  WriteFile("f", "abcdef");
  EXPECT_OK(symlink("f", "l"));
  EXPECT_OK(truncate("l", 2));
  EXPECT_EQ(ReadFile("f"), std::string("ab"));
}

POSIX_CASE("truncate", "no_write_permission_is_eacces_unless_root") {
  WriteFile("f", "abc", 0444);
  int rc = truncate("f", 0);
  if (c.privileged()) {
    EXPECT_OK(rc);
  } else {
    EXPECT_ERRNO(rc, EACCES);
  }
  c.As(Context::Alice(), [] { EXPECT_ERRNO(truncate("f", 0), EACCES); });
}

POSIX_CASE("truncate", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0777);
    WriteFile("d/f", "abc", 0666);
    EXPECT_OK(chmod("d", 0776));
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(truncate("d/f", 0), EACCES); });
}

POSIX_CASE("truncate", "non_owner_write_clears_setuid") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "abc", 0777);
    EXPECT_OK(chmod("f", 04777));
  });
  c.As(Context::Bob(), [] { EXPECT_OK(truncate("f", 1)); });
  EXPECT_EQ(PermBits("f"), 0777u);
}

POSIX_CASE("ftruncate", "shrinks_and_grows_through_descriptor") {
  WriteFile("f", "abcdef");
  int fd = EXPECT_OK(open("f", O_RDWR));
  EXPECT_OK(ftruncate(fd, 3));
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  EXPECT_EQ(st.st_size, 3);
  EXPECT_OK(ftruncate(fd, 6));
  close(fd);
  EXPECT_EQ(ReadFile("f"), std::string("abc\0\0\0", 6));
}

POSIX_CASE("ftruncate", "read_only_descriptor_is_einval_or_ebadf") {
  WriteFile("f", "abc");
  int fd = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_ERRNO(ftruncate(fd, 0), EINVAL, EBADF);
  close(fd);
  EXPECT_EQ(Lstat("f").st_size, 3);
}

POSIX_CASE("ftruncate", "negative_length_is_einval") {
  WriteFile("f", "abc");
  int fd = EXPECT_OK(open("f", O_RDWR));
  EXPECT_ERRNO(ftruncate(fd, -1), EINVAL);
  close(fd);
}

POSIX_CASE("ftruncate", "works_on_file_created_with_mode_0") {
  int fd = EXPECT_OK(open("f", O_CREAT | O_RDWR, 0));
  EXPECT_OK(ftruncate(fd, 12345));
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  EXPECT_EQ(st.st_size, 12345);
  close(fd);
}

POSIX_CASE("ftruncate", "works_after_chmod_removed_write_permission") {
  WriteFile("f", "abc", 0644);
  int fd = EXPECT_OK(open("f", O_RDWR));
  EXPECT_OK(fchmod(fd, 0444));
  EXPECT_OK(ftruncate(fd, 1));
  close(fd);
  EXPECT_EQ(Lstat("f").st_size, 1);
}

POSIX_CASE("ftruncate", "updates_mtime_and_ctime") {
  WriteFile("f", "abc");
  Times before = TimesBeforeChange("f");
  int fd = EXPECT_OK(open("f", O_RDWR));
  EXPECT_OK(ftruncate(fd, 10));
  close(fd);
  EXPECT_TRUE(Before(before.mtime, TimesOf("f").mtime));
  EXPECT_TRUE(Before(before.ctime, TimesOf("f").ctime));
}

POSIX_CASE("ftruncate", "on_unlinked_open_file") {
  WriteFile("f", Pattern(50000));
  int fd = EXPECT_OK(open("f", O_RDWR));
  EXPECT_OK(unlink("f"));
  EXPECT_OK(ftruncate(fd, 100));
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  EXPECT_EQ(st.st_size, 100);
  close(fd);
}

POSIX_CASE("ftruncate", "then_write_past_end") {
  int fd = EXPECT_OK(open("f", O_CREAT | O_RDWR, 0644));
  EXPECT_EQ(write(fd, "abcdef", 6), 6);
  EXPECT_OK(ftruncate(fd, 2));
  EXPECT_EQ(pwrite(fd, "Z", 1, 4), 1);
  close(fd);
  EXPECT_EQ(ReadFile("f"), std::string("ab\0\0Z", 5));
}

}  // namespace
}  // namespace pail::posix
