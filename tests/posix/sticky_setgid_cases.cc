// The sticky bit on directories (restricted deletion) and set-group-ID
// rules: group inheritance from setgid directories, clearing on write.
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

// A world-writable sticky directory "t" owned by the case's identity, with
// a file, a directory and a symlink of alice's inside.
void StickyWithAliceEntries(Context& c) {
  EXPECT_OK(chmod(".", 0777));
  MakeDir("t", 0777);
  EXPECT_OK(chmod("t", 01777));
  c.As(Context::Alice(), [] {
    WriteFile("t/f", "", 0666);
    MakeDir("t/d", 0777);
    EXPECT_OK(symlink("x", "t/l"));
  });
}

POSIX_CASE("sticky", "mode_shows_sticky_bit") {
  MakeDir("t", 0777);
  EXPECT_OK(chmod("t", 01777));
  EXPECT_EQ(PermBits("t"), 01777u);
}

POSIX_CASE("sticky", "other_user_may_not_unlink") {
  StickyWithAliceEntries(c);
  c.As(Context::Bob(), [] {
    EXPECT_ERRNO(unlink("t/f"), EPERM, EACCES);
    EXPECT_ERRNO(unlink("t/l"), EPERM, EACCES);
    EXPECT_ERRNO(rmdir("t/d"), EPERM, EACCES);
  });
  EXPECT_TRUE(Exists("t/f") && Exists("t/l") && Exists("t/d"));
}

POSIX_CASE("sticky", "other_user_may_not_rename_away") {
  StickyWithAliceEntries(c);
  c.As(Context::Bob(), [] {
    EXPECT_ERRNO(rename("t/f", "t/g"), EPERM, EACCES);
    EXPECT_ERRNO(rename("t/d", "t/e"), EPERM, EACCES);
  });
}

POSIX_CASE("sticky", "other_user_may_not_replace_by_rename") {
  StickyWithAliceEntries(c);
  c.As(Context::Bob(), [] {
    WriteFile("t/mine", "");
    EXPECT_ERRNO(rename("t/mine", "t/f"), EPERM, EACCES);
  });
  EXPECT_TRUE(Exists("t/mine"));
}

POSIX_CASE("sticky", "file_owner_may_unlink") {
  StickyWithAliceEntries(c);
  c.As(Context::Alice(), [] {
    EXPECT_OK(unlink("t/f"));
    EXPECT_OK(rmdir("t/d"));
    EXPECT_OK(unlink("t/l"));
  });
}

POSIX_CASE("sticky", "directory_owner_may_unlink") {
  StickyWithAliceEntries(c);
  EXPECT_OK(unlink("t/f"));
  EXPECT_OK(rmdir("t/d"));
}

POSIX_CASE("sticky", "root_may_unlink") {
  StickyWithAliceEntries(c);
  c.AsRoot([] { EXPECT_OK(unlink("t/f")); });
}

POSIX_CASE("sticky", "without_sticky_anyone_with_write_may_unlink") {
  EXPECT_OK(chmod(".", 0777));
  MakeDir("t", 0777);
  c.As(Context::Alice(), [] { WriteFile("t/f", "", 0600); });
  c.As(Context::Bob(), [] { EXPECT_OK(unlink("t/f")); });
}

POSIX_CASE("setgid", "file_inherits_directory_group") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    MakeDir("g", 0777);
    EXPECT_OK(chown("g", (uid_t)-1, kSharedGid));
    EXPECT_OK(chmod("g", 02777));
  });
  c.As(Context::Alice(), [] {
    WriteFile("g/f", "");
    EXPECT_EQ(Lstat("g/f").st_gid, kSharedGid);
    EXPECT_OK(mkfifo("g/p", 0644));
    EXPECT_EQ(Lstat("g/p").st_gid, kSharedGid);
    EXPECT_OK(symlink("x", "g/l"));
    EXPECT_EQ(Lstat("g/l").st_gid, kSharedGid);
  });
}

POSIX_CASE("setgid", "subdirectory_inherits_group_and_setgid_bit") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    MakeDir("g", 0777);
    EXPECT_OK(chown("g", (uid_t)-1, kSharedGid));
    EXPECT_OK(chmod("g", 02777));
  });
  c.As(Context::Alice(), [] {
    MakeDir("g/sub", 0755);
    struct stat st = Lstat("g/sub");
    EXPECT_EQ(st.st_gid, kSharedGid);
    EXPECT_EQ(st.st_mode & 07777, 02755u);
  });
}

POSIX_CASE("setgid", "without_setgid_new_file_gets_creator_group") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    MakeDir("g", 0777);
    EXPECT_OK(chown("g", (uid_t)-1, kSharedGid));
  });
  c.As(Context::Alice(), [] {
    WriteFile("g/f", "");
    EXPECT_EQ(Lstat("g/f").st_gid, kAliceGid);
  });
}

POSIX_CASE("setgid", "non_member_creating_setgid_file_loses_bit") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    MakeDir("g", 0777);
    EXPECT_OK(chown("g", (uid_t)-1, kSharedGid));
    EXPECT_OK(chmod("g", 02777));
  });
  c.As(Context::Alice(), [] {
    close(EXPECT_OK(open("g/f", O_CREAT | O_WRONLY, 02755)));
    EXPECT_EQ(Lstat("g/f").st_gid, kSharedGid);
    EXPECT_EQ(PermBits("g/f"), 0755u);
  });
}

POSIX_CASE("setgid", "non_owner_write_clears_setuid_and_setgid") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "abc", 0777);
    EXPECT_OK(chmod("f", 06777));
  });
  c.As(Context::Bob(), [] {
    int fd = EXPECT_OK(open("f", O_WRONLY));
    EXPECT_EQ(write(fd, "x", 1), 1);
    close(fd);
  });
  EXPECT_EQ(PermBits("f"), 0777u);
}

POSIX_CASE("setgid", "owner_write_clears_setuid_unless_root") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "abc", 0755);
    EXPECT_OK(chmod("f", 04755));
    int fd = EXPECT_OK(open("f", O_WRONLY));
    EXPECT_EQ(write(fd, "x", 1), 1);
    close(fd);
    EXPECT_EQ(PermBits("f"), 0755u);
  });
}

POSIX_CASE("setgid", "root_write_keeps_setuid") {
  WriteFile("f", "abc", 0755);
  EXPECT_OK(chmod("f", 04755));
  c.AsRoot([] {
    int fd = EXPECT_OK(open("f", O_WRONLY));
    EXPECT_EQ(write(fd, "x", 1), 1);
    close(fd);
  });
  EXPECT_EQ(PermBits("f"), 04755u);
}

}  // namespace
}  // namespace pail::posix
