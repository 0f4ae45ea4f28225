// unlink(2) and unlinkat(2).
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

POSIX_CASES {
  for (NodeType type : {NodeType::kRegular, NodeType::kFifo, NodeType::kSymlink, NodeType::kSocket}) {
    Register("unlink", std::string("removes_") + NodeTypeName(type), [type](Context&) {
      MakeNode(type, "n", 0644);
      EXPECT_OK(unlink("n"));
      EXPECT_TRUE(!Exists("n"));
      EXPECT_TRUE(ListDir(".").empty());
    });
  }
}

POSIX_CASE("unlink", "removes_device_nodes_when_privileged") {
  if (!c.privileged()) {
    EXPECT_ERRNO(mknod("n", S_IFCHR | 0644, makedev(7, 11)), EPERM);
    return;
  }
  MakeNode(NodeType::kCharDevice, "c");
  MakeNode(NodeType::kBlockDevice, "b");
  EXPECT_OK(unlink("c"));
  EXPECT_OK(unlink("b"));
  EXPECT_TRUE(ListDir(".").empty());
}

POSIX_CASE("unlink", "symlink_target_survives") {
  WriteFile("f", "x");
  EXPECT_OK(symlink("f", "l"));
  EXPECT_OK(unlink("l"));
  EXPECT_EQ(ReadFile("f"), std::string("x"));
}

POSIX_CASE("unlink", "directory_is_eisdir_or_eperm") {
  MakeDir("d");
  EXPECT_ERRNO(unlink("d"), EISDIR, EPERM);
  EXPECT_TRUE(Exists("d"));
}

POSIX_CASE("unlink", "missing_is_enoent") { EXPECT_ERRNO(unlink("nope"), ENOENT); }

POSIX_CASE("unlink", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(unlink("f/x"), ENOTDIR);
}

POSIX_CASE("unlink", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(unlink(TooLongName().c_str()), ENAMETOOLONG);
}

POSIX_CASE("unlink", "updates_parent_times") {
  MakeDir("d");
  WriteFile("d/f", "");
  Times before = TimesBeforeChange("d");
  EXPECT_OK(unlink("d/f"));
  EXPECT_TRUE(Before(before.mtime, TimesOf("d").mtime));
  EXPECT_TRUE(Before(before.ctime, TimesOf("d").ctime));
}

POSIX_CASE("unlink", "updates_ctime_of_remaining_link") {
  WriteFile("a", "");
  EXPECT_OK(link("a", "b"));
  Times before = TimesBeforeChange("b");
  EXPECT_OK(unlink("a"));
  struct stat st = Lstat("b");
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_TRUE(Before(before.ctime, st.st_ctim));
}

POSIX_CASE("unlink", "open_file_stays_usable_after_unlink") {
  std::string data = Pattern(100000);
  WriteFile("f", data);
  int fd = EXPECT_OK(open("f", O_RDWR));
  EXPECT_OK(unlink("f"));
  EXPECT_TRUE(!Exists("f"));
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  EXPECT_EQ(st.st_nlink, 0u);
  std::string back(data.size(), '\0');
  EXPECT_EQ(pread(fd, back.data(), back.size(), 0), (ssize_t)data.size());
  EXPECT_EQ(back, data);
  EXPECT_EQ(pwrite(fd, "tail", 4, 100000), 4);
  EXPECT_OK(fstat(fd, &st));
  EXPECT_EQ(st.st_size, 100004);
  close(fd);
}

POSIX_CASE("unlink", "same_name_recreated_is_a_new_file") {
  WriteFile("f", "old");
  int fd = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_OK(unlink("f"));
  WriteFile("f", "new!");
  char buf[8] = {};
  EXPECT_EQ(pread(fd, buf, sizeof buf, 0), 3);
  EXPECT_EQ(std::string(buf), std::string("old"));
  close(fd);
  EXPECT_EQ(ReadFile("f"), std::string("new!"));
}

POSIX_CASE("unlink", "many_files_then_directory_is_empty") {
  for (int i = 0; i < 200; ++i) WriteFile("f" + std::to_string(i), "x");
  EXPECT_EQ(ListDir(".").size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_OK(unlink(("f" + std::to_string(i)).c_str()));
  EXPECT_TRUE(ListDir(".").empty());
}

POSIX_CASE("unlink", "unlinkat_removedir_removes_directory") {
  MakeDir("d");
  EXPECT_OK(unlinkat(AT_FDCWD, "d", AT_REMOVEDIR));
  EXPECT_TRUE(!Exists("d"));
}

POSIX_CASE("unlink", "no_write_permission_on_parent_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0755);
    WriteFile("d/f", "", 0666);
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(unlink("d/f"), EACCES); });
  EXPECT_TRUE(Exists("d/f"));
}

POSIX_CASE("unlink", "file_permissions_do_not_matter") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0000); });
  c.As(Context::Bob(), [] { EXPECT_OK(unlink("f")); });
}

POSIX_CASE("unlink", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0733);
    WriteFile("d/f", "");
    EXPECT_OK(chmod("d", 0676));
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(unlink("d/f"), EACCES); });
}

}  // namespace
}  // namespace pail::posix
