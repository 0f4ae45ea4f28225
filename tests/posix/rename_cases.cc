// rename(2), renameat(2) and Linux renameat2(2) flags.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

int Renameat2(const char* from, const char* to, unsigned flags) {
  return static_cast<int>(syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags));
}

POSIX_CASES {
  for (NodeType type : {NodeType::kRegular, NodeType::kDirectory, NodeType::kFifo,
                        NodeType::kSymlink, NodeType::kSocket}) {
    std::string t = NodeTypeName(type);
    Register("rename", t + "_within_directory", [type](Context&) {
      MakeNode(type, "a", 0640);
      ino_t ino = Lstat("a").st_ino;
      EXPECT_OK(rename("a", "b"));
      EXPECT_TRUE(!Exists("a"));
      EXPECT_EQ(Lstat("b").st_ino, ino);
      EXPECT_EQ(TypeBits("b"), NodeTypeBits(type));
    });
    Register("rename", t + "_across_directories", [type](Context&) {
      MakeDir("x");
      MakeDir("y");
      MakeNode(type, "x/a", 0640);
      ino_t ino = Lstat("x/a").st_ino;
      EXPECT_OK(rename("x/a", "y/b"));
      EXPECT_TRUE(ListDir("x").empty());
      EXPECT_EQ(Lstat("y/b").st_ino, ino);
    });
    if (type != NodeType::kDirectory) {
      Register("rename", t + "_replaces_existing_file", [type](Context&) {
        MakeNode(type, "a", 0640);
        WriteFile("b", "old");
        EXPECT_OK(link("b", "b2"));
        ino_t ino = Lstat("a").st_ino;
        EXPECT_OK(rename("a", "b"));
        EXPECT_EQ(Lstat("b").st_ino, ino);
        EXPECT_EQ(Lstat("b2").st_nlink, 1u);
        EXPECT_EQ(ReadFile("b2"), std::string("old"));
      });
    }
  }
}

POSIX_CASE("rename", "keeps_content") {
  WriteFile("a", Pattern(300000));
  EXPECT_OK(rename("a", "b"));
  EXPECT_EQ(ReadFile("b"), Pattern(300000));
}

POSIX_CASE("rename", "directory_replaces_empty_directory") {
  MakeDir("a");
  WriteFile("a/f", "");
  MakeDir("b");
  EXPECT_OK(rename("a", "b"));
  EXPECT_TRUE(!Exists("a"));
  EXPECT_TRUE(Exists("b/f"));
}

POSIX_CASE("rename", "directory_onto_non_empty_directory_fails") {
  MakeDir("a");
  MakeDir("b");
  WriteFile("b/f", "");
  EXPECT_ERRNO(rename("a", "b"), ENOTEMPTY, EEXIST);
  EXPECT_TRUE(Exists("a"));
}

POSIX_CASE("rename", "directory_onto_file_is_enotdir") {
  MakeDir("a");
  WriteFile("b", "");
  EXPECT_ERRNO(rename("a", "b"), ENOTDIR);
}

POSIX_CASE("rename", "file_onto_directory_is_eisdir") {
  WriteFile("a", "");
  MakeDir("b");
  EXPECT_ERRNO(rename("a", "b"), EISDIR);
}

POSIX_CASE("rename", "same_name_is_no_op") {
  WriteFile("a", "x");
  EXPECT_OK(rename("a", "a"));
  EXPECT_EQ(ReadFile("a"), std::string("x"));
}

POSIX_CASE("rename", "between_links_of_same_file_keeps_both") {
  WriteFile("a", "x");
  EXPECT_OK(link("a", "b"));
  EXPECT_OK(rename("a", "b"));
  EXPECT_TRUE(Exists("a"));
  EXPECT_TRUE(Exists("b"));
  EXPECT_EQ(Lstat("b").st_nlink, 2u);
}

POSIX_CASE("rename", "directory_into_own_subdirectory_is_einval") {
  MakeDir("a");
  MakeDir("a/b");
  EXPECT_ERRNO(rename("a", "a/b/c"), EINVAL);
  EXPECT_ERRNO(rename("a", "a/c"), EINVAL);
}

POSIX_CASE("rename", "missing_source_is_enoent") { EXPECT_ERRNO(rename("nope", "b"), ENOENT); }

POSIX_CASE("rename", "missing_target_directory_is_enoent") {
  WriteFile("a", "");
  EXPECT_ERRNO(rename("a", "nodir/b"), ENOENT);
}

POSIX_CASE("rename", "file_as_path_prefix_is_enotdir") {
  WriteFile("a", "");
  EXPECT_ERRNO(rename("a/x", "b"), ENOTDIR);
  EXPECT_ERRNO(rename("a", "a/b"), ENOTDIR);
}

POSIX_CASE("rename", "too_long_target_is_enametoolong") {
  WriteFile("a", "");
  EXPECT_ERRNO(rename("a", TooLongName().c_str()), ENAMETOOLONG);
}

POSIX_CASE("rename", "dot_and_dot_dot_fail") {
  MakeDir("d");
  EXPECT_ERRNO(rename("d/.", "e"), EINVAL, EBUSY);
  EXPECT_ERRNO(rename("d/..", "e"), EINVAL, EBUSY);
}

POSIX_CASE("rename", "directory_move_updates_dot_dot_and_link_counts") {
  MakeDir("x");
  MakeDir("y");
  MakeDir("x/d");
  EXPECT_OK(rename("x/d", "y/d"));
  EXPECT_EQ(Lstat("y/d/..").st_ino, Lstat("y").st_ino);
  EXPECT_EQ(Lstat("x").st_nlink, 2u);
  EXPECT_EQ(Lstat("y").st_nlink, 3u);
}

POSIX_CASE("rename", "directory_replace_keeps_link_counts") {
  MakeDir("x");
  MakeDir("y");
  MakeDir("x/d");
  MakeDir("y/d");
  EXPECT_OK(rename("x/d", "y/d"));
  EXPECT_EQ(Lstat("x").st_nlink, 2u);
  EXPECT_EQ(Lstat("y").st_nlink, 3u);
}

POSIX_CASE("rename", "updates_both_parents_times") {
  MakeDir("x");
  MakeDir("y");
  WriteFile("x/a", "");
  Times x_before = TimesBeforeChange("x");
  Times y_before = TimesBeforeChange("y");
  EXPECT_OK(rename("x/a", "y/a"));
  EXPECT_TRUE(Before(x_before.mtime, TimesOf("x").mtime));
  EXPECT_TRUE(Before(x_before.ctime, TimesOf("x").ctime));
  EXPECT_TRUE(Before(y_before.mtime, TimesOf("y").mtime));
  EXPECT_TRUE(Before(y_before.ctime, TimesOf("y").ctime));
}

POSIX_CASE("rename", "symlink_moves_link_not_target") {
  WriteFile("f", "x");
  EXPECT_OK(symlink("f", "l"));
  EXPECT_OK(rename("l", "m"));
  EXPECT_TRUE(Exists("f"));
  EXPECT_EQ(TypeBits("m"), (mode_t)S_IFLNK);
}

POSIX_CASE("rename", "open_descriptor_follows_file") {
  WriteFile("a", "abc");
  int fd = EXPECT_OK(open("a", O_RDWR));
  EXPECT_OK(rename("a", "b"));
  EXPECT_EQ(pwrite(fd, "Z", 1, 0), 1);
  close(fd);
  EXPECT_EQ(ReadFile("b"), std::string("Zbc"));
}

POSIX_CASE("rename", "replaced_open_file_stays_readable") {
  WriteFile("a", "new");
  WriteFile("b", "old");
  int fd = EXPECT_OK(open("b", O_RDONLY));
  EXPECT_OK(rename("a", "b"));
  char buf[8] = {};
  EXPECT_EQ(pread(fd, buf, sizeof buf, 0), 3);
  EXPECT_EQ(std::string(buf), std::string("old"));
  close(fd);
  EXPECT_EQ(ReadFile("b"), std::string("new"));
}

POSIX_CASE("rename", "noreplace_fails_on_existing_target") {
  WriteFile("a", "a");
  WriteFile("b", "b");
  EXPECT_ERRNO(Renameat2("a", "b", RENAME_NOREPLACE), EEXIST);
  EXPECT_EQ(ReadFile("b"), std::string("b"));
  EXPECT_OK(Renameat2("a", "c", RENAME_NOREPLACE));
  EXPECT_EQ(ReadFile("c"), std::string("a"));
}

POSIX_CASE("rename", "exchange_swaps_names") {
  WriteFile("a", "a");
  MakeDir("d");
  EXPECT_OK(Renameat2("a", "d", RENAME_EXCHANGE));
  EXPECT_EQ(TypeBits("a"), (mode_t)S_IFDIR);
  EXPECT_EQ(ReadFile("d"), std::string("a"));
}

POSIX_CASE("rename", "exchange_with_missing_target_is_enoent") {
  WriteFile("a", "a");
  EXPECT_ERRNO(Renameat2("a", "b", RENAME_EXCHANGE), ENOENT);
}

POSIX_CASE("rename", "no_write_permission_on_source_directory_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("src", 0755);
    WriteFile("src/f", "", 0666);
    MakeDir("dst", 0777);
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(rename("src/f", "dst/f"), EACCES); });
}

POSIX_CASE("rename", "no_write_permission_on_target_directory_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("src", 0777);
    WriteFile("src/f", "", 0666);
    MakeDir("dst", 0755);
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(rename("src/f", "dst/f"), EACCES); });
}

POSIX_CASE("rename", "moving_directory_needs_write_permission_on_it") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("src", 0777);
    MakeDir("dst", 0777);
    MakeDir("src/d", 0555);
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(rename("src/d", "dst/d"), EACCES); });
  c.As(Context::Alice(), [] { EXPECT_ERRNO(rename("src/d", "dst/d"), EACCES); });
}

POSIX_CASE("rename", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("src", 0777);
    WriteFile("src/f", "");
    EXPECT_OK(chmod("src", 0776));
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(rename("src/f", "g"), EACCES); });
}

}  // namespace
}  // namespace pail::posix
