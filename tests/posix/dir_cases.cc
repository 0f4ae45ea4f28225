// mkdir(2) and rmdir(2).
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

POSIX_CASES {
  for (mode_t mode : {00000, 00700, 00755, 00777, 01777}) {
    char name[64];
    std::snprintf(name, sizeof name, "creates_with_mode_%04o", mode);
    Register("mkdir", name, [mode](Context& c) {
      EXPECT_OK(mkdir("d", mode));
      struct stat st = Lstat("d");
      EXPECT_EQ(st.st_mode & S_IFMT, (mode_t)S_IFDIR);
      EXPECT_EQ(st.st_mode & 07777, mode);
      EXPECT_EQ(st.st_uid, c.self().uid);
      EXPECT_EQ(st.st_gid, c.self().gid);
      EXPECT_EQ(st.st_nlink, 2u);
    });
  }
}

POSIX_CASE("mkdir", "applies_umask") {
  umask(022);
  EXPECT_OK(mkdir("d", 0777));
  EXPECT_EQ(PermBits("d"), 0755u);
}

POSIX_CASE("mkdir", "parent_link_count_counts_subdirectories") {
  MakeDir("p");
  EXPECT_EQ(Lstat("p").st_nlink, 2u);
  MakeDir("p/a");
  MakeDir("p/b");
  WriteFile("p/f", "");
  EXPECT_EQ(Lstat("p").st_nlink, 4u);
}

POSIX_CASE("mkdir", "new_directory_is_empty_with_dot_entries") {
  MakeDir("d");
  EXPECT_TRUE(ListDir("d").empty());
  EXPECT_EQ(Lstat("d/.").st_ino, Lstat("d").st_ino);
  EXPECT_EQ(Lstat("d/..").st_ino, Lstat(".").st_ino);
}

POSIX_CASE("mkdir", "updates_parent_times") {
  MakeDir("p");
  Times before = TimesBeforeChange("p");
  MakeDir("p/d");
  EXPECT_TRUE(Before(before.mtime, TimesOf("p").mtime));
  EXPECT_TRUE(Before(before.ctime, TimesOf("p").ctime));
}

POSIX_CASE("mkdir", "existing_name_is_eexist") {
  MakeDir("d");
  WriteFile("f", "");
  EXPECT_OK(symlink("nowhere", "l"));
  EXPECT_ERRNO(mkdir("d", 0755), EEXIST);
  EXPECT_ERRNO(mkdir("f", 0755), EEXIST);
  EXPECT_ERRNO(mkdir("l", 0755), EEXIST);
}

POSIX_CASE("mkdir", "missing_parent_is_enoent") { EXPECT_ERRNO(mkdir("a/b", 0755), ENOENT); }

POSIX_CASE("mkdir", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(mkdir("f/d", 0755), ENOTDIR);
}

POSIX_CASE("mkdir", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(mkdir(TooLongName().c_str(), 0755), ENAMETOOLONG);
}

POSIX_CASE("mkdir", "trailing_slash_is_accepted") {
  EXPECT_OK(mkdir("d/", 0755));
  EXPECT_EQ(TypeBits("d"), (mode_t)S_IFDIR);
}

POSIX_CASE("mkdir", "deep_nesting") {
  std::string path = "d";
  for (int i = 0; i < 30; ++i) {
    MakeDir(path);
    path += "/d";
  }
  WriteFile(path, "deep");
  EXPECT_EQ(ReadFile(path), std::string("deep"));
}

POSIX_CASE("mkdir", "no_write_permission_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("p", 0555); });
  c.As(Context::Alice(), [] { EXPECT_ERRNO(mkdir("p/d", 0755), EACCES); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(mkdir("p/d", 0755), EACCES); });
}

POSIX_CASE("mkdir", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("p", 0766); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(mkdir("p/d", 0755), EACCES); });
}

POSIX_CASE("rmdir", "removes_empty_directory") {
  MakeDir("p");
  MakeDir("p/d");
  EXPECT_OK(rmdir("p/d"));
  EXPECT_TRUE(!Exists("p/d"));
  EXPECT_EQ(Lstat("p").st_nlink, 2u);
}

POSIX_CASE("rmdir", "updates_parent_times") {
  MakeDir("p");
  MakeDir("p/d");
  Times before = TimesBeforeChange("p");
  EXPECT_OK(rmdir("p/d"));
  EXPECT_TRUE(Before(before.mtime, TimesOf("p").mtime));
  EXPECT_TRUE(Before(before.ctime, TimesOf("p").ctime));
}

POSIX_CASES {
  for (NodeType type : {NodeType::kRegular, NodeType::kDirectory, NodeType::kSymlink, NodeType::kFifo}) {
    Register("rmdir", std::string("non_empty_with_") + NodeTypeName(type) + "_is_enotempty",
             [type](Context&) {
               MakeDir("d");
               MakeNode(type, "d/x");
               EXPECT_ERRNO(rmdir("d"), ENOTEMPTY, EEXIST);
               EXPECT_TRUE(Exists("d/x"));
             });
  }
}

POSIX_CASE("rmdir", "file_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(rmdir("f"), ENOTDIR);
}

POSIX_CASE("rmdir", "symlink_to_directory_is_enotdir") {
  MakeDir("d");
  EXPECT_OK(symlink("d", "l"));
  EXPECT_ERRNO(rmdir("l"), ENOTDIR);
  EXPECT_TRUE(Exists("d"));
}

POSIX_CASE("rmdir", "missing_is_enoent") { EXPECT_ERRNO(rmdir("nope"), ENOENT); }

POSIX_CASE("rmdir", "dot_is_einval") {
  MakeDir("d");
  EXPECT_ERRNO(rmdir("d/."), EINVAL);
}

POSIX_CASE("rmdir", "dot_dot_fails") {
  MakeDir("d");
  MakeDir("d/e");
  EXPECT_ERRNO(rmdir("d/e/.."), ENOTEMPTY, EEXIST, EINVAL, EBUSY);
  EXPECT_TRUE(Exists("d/e"));
}

POSIX_CASE("rmdir", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(rmdir(TooLongName().c_str()), ENAMETOOLONG);
}

POSIX_CASE("rmdir", "no_write_permission_on_parent_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("p", 0755);
    MakeDir("p/d", 0777);
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(rmdir("p/d"), EACCES); });
}

POSIX_CASE("rmdir", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("p", 0777);
    MakeDir("p/d", 0777);
    EXPECT_OK(chmod("p", 0766));
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(rmdir("p/d"), EACCES); });
}

POSIX_CASE("rmdir", "removed_directory_can_be_recreated") {
  MakeDir("d");
  WriteFile("d/f", "");
  EXPECT_OK(unlink("d/f"));
  EXPECT_OK(rmdir("d"));
  MakeDir("d");
  EXPECT_TRUE(ListDir("d").empty());
}

}  // namespace
}  // namespace pail::posix
