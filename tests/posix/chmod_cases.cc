// chmod(2), fchmod(2), fchmodat(2).
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

POSIX_CASES {
  // Every permission pattern sticks on every type chmod applies to.
  for (NodeType type : {NodeType::kRegular, NodeType::kDirectory, NodeType::kFifo}) {
    for (mode_t mode : {00000, 00111, 00444, 00640, 00755, 00777, 01755, 02755, 04755, 06777}) {
      char name[64];
      std::snprintf(name, sizeof name, "%s_to_%04o", NodeTypeName(type), mode);
      Register("chmod", name, [type, mode](Context&) {
        MakeNode(type, "n", 0600);
        EXPECT_OK(chmod("n", mode));
        EXPECT_EQ(PermBits("n"), mode);
        EXPECT_EQ(TypeBits("n"), NodeTypeBits(type));
      });
    }
  }
}

POSIX_CASE("chmod", "updates_ctime_not_mtime") {
  WriteFile("f", "x");
  Times before = TimesBeforeChange("f");
  EXPECT_OK(chmod("f", 0600));
  Times after = TimesOf("f");
  EXPECT_TRUE(Before(before.ctime, after.ctime));
  EXPECT_TRUE(SameTime(before.mtime, after.mtime));
}

POSIX_CASE("chmod", "follows_symlink") {
  WriteFile("f", "", 0644);
  EXPECT_OK(symlink("f", "l"));
  mode_t link_mode = PermBits("l");
  EXPECT_OK(chmod("l", 0600));
  EXPECT_EQ(PermBits("f"), 0600u);
  EXPECT_EQ(PermBits("l"), link_mode);
}

POSIX_CASE("chmod", "fchmod_on_open_descriptor") {
  WriteFile("f", "", 0644);
  int fd = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_OK(fchmod(fd, 0400));
  struct stat st;
  EXPECT_OK(fstat(fd, &st));
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  close(fd);
}

POSIX_CASE("chmod", "fchmodat_relative_to_directory") {
  MakeDir("d");
  WriteFile("d/f", "", 0644);
  int dfd = EXPECT_OK(open("d", O_RDONLY | O_DIRECTORY));
  EXPECT_OK(fchmodat(dfd, "f", 0705, 0));
  close(dfd);
  EXPECT_EQ(PermBits("d/f"), 0705u);
}

POSIX_CASE("chmod", "missing_file_is_enoent") { EXPECT_ERRNO(chmod("nope", 0644), ENOENT); }

POSIX_CASE("chmod", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(chmod("f/x", 0644), ENOTDIR);
}

POSIX_CASE("chmod", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(chmod(TooLongName().c_str(), 0644), ENAMETOOLONG);
}

POSIX_CASE("chmod", "symlink_loop_is_eloop") {
  EXPECT_OK(symlink("b", "a"));
  EXPECT_OK(symlink("a", "b"));
  EXPECT_ERRNO(chmod("a", 0644), ELOOP);
}

POSIX_CASE("chmod", "non_owner_is_eperm") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0644); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(chmod("f", 0600), EPERM); });
  EXPECT_EQ(PermBits("f"), 0644u);
}

POSIX_CASE("chmod", "root_may_chmod_any_file") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0644); });
  c.AsRoot([] { EXPECT_OK(chmod("f", 0600)); });
  EXPECT_EQ(PermBits("f"), 0600u);
}

POSIX_CASE("chmod", "owner_without_any_permission_may_chmod") {
  WriteFile("f", "", 0000);
  EXPECT_OK(chmod("f", 0640));
  EXPECT_EQ(PermBits("f"), 0640u);
}

POSIX_CASE("chmod", "setgid_cleared_when_owner_not_in_file_group") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0755); });
  c.AsRoot([] { EXPECT_OK(chown("f", kAliceUid, kSharedGid)); });
  c.As(Context::Alice(), [] {
    EXPECT_OK(chmod("f", 02755));
    EXPECT_EQ(PermBits("f"), 0755u);
  });
}

POSIX_CASE("chmod", "setgid_kept_when_owner_in_file_group") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] { WriteFile("f", "", 0755); });
  c.AsRoot([] { EXPECT_OK(chown("f", kBobUid, kSharedGid)); });
  c.As(Context::Bob(), [] {
    EXPECT_OK(chmod("f", 02755));
    EXPECT_EQ(PermBits("f"), 02755u);
  });
}

POSIX_CASE("chmod", "search_denied_in_prefix_is_eacces") {
  MakeDir("d", 0700);
  WriteFile("d/f", "", 0644);
  EXPECT_OK(chmod(".", 0777));
  if (c.privileged()) {
    c.As(Context::Alice(), [] { EXPECT_ERRNO(chmod("d/f", 0600), EACCES); });
  } else {
    c.As(Context::Bob(), [] { EXPECT_ERRNO(chmod("d/f", 0600), EACCES); });
  }
}

}  // namespace
}  // namespace pail::posix
