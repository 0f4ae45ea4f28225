// link(2) and linkat(2).
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

POSIX_CASES {
  for (NodeType type : {NodeType::kRegular, NodeType::kFifo, NodeType::kSymlink, NodeType::kSocket}) {
    Register("link", std::string("second_name_for_") + NodeTypeName(type), [type](Context&) {
      MakeNode(type, "a", 0644);
      EXPECT_OK(link("a", "b"));
      struct stat a = Lstat("a"), b = Lstat("b");
      EXPECT_EQ(a.st_ino, b.st_ino);
      EXPECT_EQ(a.st_nlink, 2u);
      EXPECT_EQ(b.st_mode, a.st_mode);
      EXPECT_EQ(b.st_mode & S_IFMT, NodeTypeBits(type));
      EXPECT_OK(unlink("a"));
      EXPECT_EQ(Lstat("b").st_nlink, 1u);
    });
  }
}

POSIX_CASE("link", "names_share_data") {
  WriteFile("a", "one");
  EXPECT_OK(link("a", "b"));
  WriteFile("b", "two");
  EXPECT_EQ(ReadFile("a"), std::string("two"));
}

POSIX_CASE("link", "across_directories") {
  MakeDir("x");
  MakeDir("y");
  WriteFile("x/a", "data");
  EXPECT_OK(link("x/a", "y/b"));
  EXPECT_EQ(ReadFile("y/b"), std::string("data"));
  EXPECT_EQ(Lstat("x/a").st_ino, Lstat("y/b").st_ino);
}

POSIX_CASE("link", "many_links_count_up_and_down") {
  WriteFile("f", "");
  for (int i = 0; i < 20; ++i) EXPECT_OK(link("f", ("l" + std::to_string(i)).c_str()));
  EXPECT_EQ(Lstat("f").st_nlink, 21u);
  for (int i = 0; i < 20; i += 2) EXPECT_OK(unlink(("l" + std::to_string(i)).c_str()));
  EXPECT_EQ(Lstat("f").st_nlink, 11u);
  EXPECT_EQ(Lstat("l1").st_nlink, 11u);
}

POSIX_CASE("link", "updates_file_ctime_and_parent_times") {
  WriteFile("f", "");
  MakeDir("d");
  Times file_before = TimesBeforeChange("f");
  Times dir_before = TimesBeforeChange("d");
  EXPECT_OK(link("f", "d/g"));
  EXPECT_TRUE(Before(file_before.ctime, TimesOf("f").ctime));
  EXPECT_TRUE(Before(dir_before.mtime, TimesOf("d").mtime));
  EXPECT_TRUE(Before(dir_before.ctime, TimesOf("d").ctime));
}

POSIX_CASE("link", "existing_name_is_eexist") {
  WriteFile("a", "");
  WriteFile("b", "");
  EXPECT_ERRNO(link("a", "b"), EEXIST);
  MakeDir("d");
  EXPECT_ERRNO(link("a", "d"), EEXIST);
  EXPECT_OK(symlink("nowhere", "l"));
  EXPECT_ERRNO(link("a", "l"), EEXIST);
}

POSIX_CASE("link", "directory_is_eperm") {
  MakeDir("d");
  EXPECT_ERRNO(link("d", "e"), EPERM);
}

POSIX_CASE("link", "missing_source_is_enoent") { EXPECT_ERRNO(link("nope", "b"), ENOENT); }

POSIX_CASE("link", "missing_target_directory_is_enoent") {
  WriteFile("a", "");
  EXPECT_ERRNO(link("a", "nodir/b"), ENOENT);
}

POSIX_CASE("link", "file_as_path_prefix_is_enotdir") {
  WriteFile("a", "");
  EXPECT_ERRNO(link("a/x", "b"), ENOTDIR);
  EXPECT_ERRNO(link("a", "a/b"), ENOTDIR);
}

POSIX_CASE("link", "too_long_name_is_enametoolong") {
  WriteFile("a", "");
  EXPECT_ERRNO(link("a", TooLongName().c_str()), ENAMETOOLONG);
}

POSIX_CASE("link", "does_not_follow_symlink_source") {
  WriteFile("f", "");
  EXPECT_OK(symlink("f", "l"));
  EXPECT_OK(link("l", "m"));
  EXPECT_EQ(TypeBits("m"), (mode_t)S_IFLNK);
  EXPECT_EQ(Lstat("f").st_nlink, 1u);
}

POSIX_CASE("link", "linkat_symlink_follow_links_target") {
  WriteFile("f", "");
  EXPECT_OK(symlink("f", "l"));
  EXPECT_OK(linkat(AT_FDCWD, "l", AT_FDCWD, "m", AT_SYMLINK_FOLLOW));
  EXPECT_EQ(TypeBits("m"), (mode_t)S_IFREG);
  EXPECT_EQ(Lstat("f").st_nlink, 2u);
}

POSIX_CASE("link", "no_write_permission_on_target_directory_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "", 0666);
    MakeDir("d", 0555);
  });
  c.As(Context::Alice(), [] { EXPECT_ERRNO(link("f", "d/g"), EACCES); });
}

POSIX_CASE("link", "search_denied_in_source_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0700);
    WriteFile("d/f", "", 0666);
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(link("d/f", "g"), EACCES); });
}

POSIX_CASE("link", "unlinked_link_keeps_data_for_other_name") {
  WriteFile("a", Pattern(70000));
  EXPECT_OK(link("a", "b"));
  EXPECT_OK(unlink("a"));
  EXPECT_EQ(ReadFile("b"), Pattern(70000));
}

}  // namespace
}  // namespace pail::posix
