// chown(2), fchown(2), lchown(2), fchownat(2).
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

POSIX_CASES {
  // Root gives any node type to another user and group; others may not.
  for (NodeType type : {NodeType::kRegular, NodeType::kDirectory, NodeType::kFifo,
                        NodeType::kSymlink, NodeType::kSocket}) {
    Register("chown", std::string("give_away_") + NodeTypeName(type), [type](Context& c) {
      MakeNode(type, "n", 0644);
      int rc = lchown("n", kAliceUid, kSharedGid);
      if (c.privileged()) {
        EXPECT_OK(rc);
        EXPECT_EQ(Lstat("n").st_uid, kAliceUid);
        EXPECT_EQ(Lstat("n").st_gid, kSharedGid);
      } else {
        EXPECT_ERRNO(rc, EPERM);
        EXPECT_EQ(Lstat("n").st_uid, c.self().uid);
      }
    });
  }
}

POSIX_CASE("chown", "owner_may_change_group_to_own_group") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    WriteFile("f", "");
    EXPECT_OK(chown("f", (uid_t)-1, kSharedGid));
    EXPECT_EQ(Lstat("f").st_gid, kSharedGid);
    EXPECT_EQ(Lstat("f").st_uid, kBobUid);
  });
}

POSIX_CASE("chown", "owner_may_not_change_group_to_foreign_group") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "");
    EXPECT_ERRNO(chown("f", (uid_t)-1, kSharedGid), EPERM);
    EXPECT_EQ(Lstat("f").st_gid, kAliceGid);
  });
}

POSIX_CASE("chown", "owner_may_not_give_file_away") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "");
    EXPECT_ERRNO(chown("f", kBobUid, (gid_t)-1), EPERM);
    EXPECT_EQ(Lstat("f").st_uid, kAliceUid);
  });
}

POSIX_CASE("chown", "owner_may_chown_to_self") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "");
    EXPECT_OK(chown("f", kAliceUid, kAliceGid));
  });
}

POSIX_CASE("chown", "non_owner_may_not_change_group") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", ""); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(chown("f", (uid_t)-1, kSharedGid), EPERM); });
}

POSIX_CASE("chown", "minus_one_changes_nothing") {
  WriteFile("f", "");
  EXPECT_OK(chown("f", (uid_t)-1, (gid_t)-1));
  EXPECT_EQ(Lstat("f").st_uid, c.self().uid);
  EXPECT_EQ(Lstat("f").st_gid, c.self().gid);
}

POSIX_CASE("chown", "updates_ctime") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    WriteFile("f", "");
    Times before = TimesBeforeChange("f");
    EXPECT_OK(chown("f", (uid_t)-1, kSharedGid));
    EXPECT_TRUE(Before(before.ctime, TimesOf("f").ctime));
  });
}

POSIX_CASE("chown", "non_root_owner_clears_setuid_and_setgid") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    WriteFile("f", "", 0755);
    EXPECT_OK(chmod("f", 06755));
    EXPECT_OK(chown("f", (uid_t)-1, kSharedGid));
    EXPECT_EQ(PermBits("f"), 0755u);
  });
}

POSIX_CASE("chown", "follows_symlink") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    WriteFile("f", "");
    EXPECT_OK(symlink("f", "l"));
    EXPECT_OK(chown("l", (uid_t)-1, kSharedGid));
    EXPECT_EQ(Lstat("f").st_gid, kSharedGid);
    EXPECT_EQ(Lstat("l").st_gid, kBobGid);
  });
}

POSIX_CASE("chown", "lchown_changes_link_not_target") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    WriteFile("f", "");
    EXPECT_OK(symlink("f", "l"));
    EXPECT_OK(lchown("l", (uid_t)-1, kSharedGid));
    EXPECT_EQ(Lstat("l").st_gid, kSharedGid);
    EXPECT_EQ(Lstat("f").st_gid, kBobGid);
  });
}

POSIX_CASE("chown", "fchown_on_open_descriptor") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    WriteFile("f", "");
    int fd = EXPECT_OK(open("f", O_RDONLY));
    EXPECT_OK(fchown(fd, (uid_t)-1, kSharedGid));
    struct stat st;
    EXPECT_OK(fstat(fd, &st));
    EXPECT_EQ(st.st_gid, kSharedGid);
    close(fd);
  });
}

POSIX_CASE("chown", "fchownat_nofollow_changes_link") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Bob(), [] {
    WriteFile("f", "");
    EXPECT_OK(symlink("f", "l"));
    EXPECT_OK(fchownat(AT_FDCWD, "l", (uid_t)-1, kSharedGid, AT_SYMLINK_NOFOLLOW));
    EXPECT_EQ(Lstat("l").st_gid, kSharedGid);
    EXPECT_EQ(Lstat("f").st_gid, kBobGid);
  });
}

POSIX_CASE("chown", "root_changes_owner_and_group_together") {
  WriteFile("f", "");
  c.AsRoot([] {
    EXPECT_OK(chown("f", kBobUid, kBobGid));
    EXPECT_EQ(Lstat("f").st_uid, kBobUid);
    EXPECT_EQ(Lstat("f").st_gid, kBobGid);
  });
}

POSIX_CASE("chown", "missing_file_is_enoent") { EXPECT_ERRNO(chown("nope", 0, 0), ENOENT); }

POSIX_CASE("chown", "file_as_path_prefix_is_enotdir") {
  WriteFile("f", "");
  EXPECT_ERRNO(chown("f/x", (uid_t)-1, (gid_t)-1), ENOTDIR);
}

POSIX_CASE("chown", "too_long_name_is_enametoolong") {
  EXPECT_ERRNO(chown(TooLongName().c_str(), (uid_t)-1, (gid_t)-1), ENAMETOOLONG);
}

POSIX_CASE("chown", "symlink_loop_is_eloop") {
  EXPECT_OK(symlink("b", "a"));
  EXPECT_OK(symlink("a", "b"));
  EXPECT_ERRNO(chown("a", (uid_t)-1, (gid_t)-1), ELOOP);
}

POSIX_CASE("chown", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0700);
    WriteFile("d/f", "");
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(chown("d/f", (uid_t)-1, (gid_t)-1), EACCES); });
}

}  // namespace
}  // namespace pail::posix
