// Permission checks (POSIX "file access permissions"): owner, group and
// other classes, supplementary groups, search permission, root's override.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

// Alice owns a file with `mode`; bob is in its group or not.
void AliceFile(Context& c, mode_t mode, gid_t group) {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [mode] {
    WriteFile("f", "data", 0600);
    EXPECT_OK(chmod("f", mode));
  });
  c.AsRoot([group] { EXPECT_OK(chown("f", kAliceUid, group)); });
}

bool CanOpen(int flags) {
  int fd = open("f", flags);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

POSIX_CASES {
  // Which class applies: owner, else group (primary or supplementary),
  // else other; only that class's bits count.
  struct Row {
    const char* name;
    mode_t mode;
    bool bob_in_group;
    bool bob_reads, bob_writes;
    bool alice_reads, alice_writes;
  };
  for (Row r : {
           Row{"other_rw", 0606, false, true, true, true, true},
           Row{"other_none", 0660, false, false, false, true, true},
           Row{"group_r_for_member", 0640, true, true, false, true, true},
           Row{"group_rw_for_member", 0660, true, true, true, true, true},
           Row{"group_none_beats_other", 0606, true, false, false, true, true},
           Row{"owner_none_beats_group_and_other", 0077, true, true, true, false, false},
           Row{"owner_read_only", 0400, true, false, false, true, false},
           Row{"owner_write_only", 0200, true, false, false, false, true},
           Row{"all_none", 0000, true, false, false, false, false},
       }) {
    Register("permission", std::string("open_") + r.name, [r](Context& c) {
      AliceFile(c, r.mode, r.bob_in_group ? kSharedGid : kAliceGid);
      c.As(Context::Bob(), [r] {
        if (r.bob_reads) EXPECT_TRUE(CanOpen(O_RDONLY));
        else EXPECT_ERRNO(open("f", O_RDONLY), EACCES);
        if (r.bob_writes) EXPECT_TRUE(CanOpen(O_WRONLY));
        else EXPECT_ERRNO(open("f", O_WRONLY), EACCES);
      });
      c.As(Context::Alice(), [r] {
        if (r.alice_reads) EXPECT_TRUE(CanOpen(O_RDONLY));
        else EXPECT_ERRNO(open("f", O_RDONLY), EACCES);
        if (r.alice_writes) EXPECT_TRUE(CanOpen(O_WRONLY));
        else EXPECT_ERRNO(open("f", O_WRONLY), EACCES);
      });
      c.AsRoot([] {
        EXPECT_TRUE(CanOpen(O_RDWR));
      });
    });
  }
  // access(2) agrees with open for the same table of modes.
  for (mode_t mode : {0000, 0100, 0200, 0400, 0700, 0070, 0007, 0755}) {
    char name[48];
    std::snprintf(name, sizeof name, "access_for_owner_mode_%04o", mode);
    Register("permission", name, [mode](Context& c) {
      EXPECT_OK(chmod(".", 0777));
      c.As(Context::Alice(), [mode] {
        WriteFile("f", "", 0600);
        EXPECT_OK(chmod("f", mode));
        auto check = [](int rc, bool allowed) {
          if (allowed) EXPECT_OK(rc);
          else EXPECT_ERRNO(rc, EACCES);
        };
        check(access("f", R_OK), mode & 0400);
        check(access("f", W_OK), mode & 0200);
        check(access("f", X_OK), mode & 0100);
        EXPECT_OK(access("f", F_OK));
      });
    });
  }
}

POSIX_CASE("permission", "root_execute_needs_some_execute_bit") {
  WriteFile("f", "", 0644);
  c.AsRoot([] {
    EXPECT_ERRNO(access("f", X_OK), EACCES);
    EXPECT_OK(access("f", R_OK | W_OK));
  });
  EXPECT_OK(chmod("f", 0001));
  c.AsRoot([] { EXPECT_OK(access("f", X_OK)); });
}

POSIX_CASE("permission", "root_searches_and_lists_mode_0_directory") {
  MakeDir("d", 0755);
  WriteFile("d/f", "x");
  EXPECT_OK(chmod("d", 0000));
  c.AsRoot([] {
    EXPECT_EQ(ReadFile("d/f"), std::string("x"));
    EXPECT_EQ(ListDir("d").size(), 1u);
    WriteFile("d/g", "");
  });
}

POSIX_CASE("permission", "directory_without_search_hides_entries") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0755);
    WriteFile("d/f", "x", 0644);
    EXPECT_OK(chmod("d", 0644));
  });
  c.As(Context::Bob(), [] {
    struct stat st;
    EXPECT_ERRNO(stat("d/f", &st), EACCES);
    EXPECT_ERRNO(open("d/f", O_RDONLY), EACCES);
    EXPECT_EQ(ListDir("d").size(), 1u);  // read without search still lists names
  });
}

POSIX_CASE("permission", "directory_without_read_still_allows_known_names") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0755);
    WriteFile("d/f", "x", 0644);
    EXPECT_OK(chmod("d", 0711));
  });
  c.As(Context::Bob(), [] {
    EXPECT_EQ(ReadFile("d/f"), std::string("x"));
    EXPECT_ERRNO(open("d", O_RDONLY | O_DIRECTORY), EACCES);
  });
}

POSIX_CASE("permission", "create_needs_write_and_search_on_directory") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("w", 0777);
    EXPECT_OK(chmod("w", 0666));  // write without search
    MakeDir("x", 0555);           // search without write
  });
  c.As(Context::Bob(), [] {
    EXPECT_ERRNO(open("w/f", O_CREAT | O_WRONLY, 0644), EACCES);
    EXPECT_ERRNO(open("x/f", O_CREAT | O_WRONLY, 0644), EACCES);
  });
}

POSIX_CASE("permission", "supplementary_group_grants_directory_write") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { MakeDir("d", 0770); });
  c.AsRoot([] { EXPECT_OK(chown("d", kAliceUid, kSharedGid)); });
  c.As(Context::Bob(), [] { WriteFile("d/f", "bob"); });
  EXPECT_EQ(Lstat("d/f").st_uid, kBobUid);
}

POSIX_CASE("permission", "denied_open_has_no_side_effects") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "keep", 0644); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(open("f", O_WRONLY | O_TRUNC), EACCES); });
  EXPECT_EQ(ReadFile("f"), std::string("keep"));
}

POSIX_CASE("permission", "chmod_revokes_access_for_later_opens") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0666); });
  c.As(Context::Bob(), [] { EXPECT_TRUE(CanOpen(O_WRONLY)); });
  c.As(Context::Alice(), [] { EXPECT_OK(chmod("f", 0600)); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(open("f", O_WRONLY), EACCES); });
}

POSIX_CASE("permission", "write_to_descriptor_opened_before_chmod_succeeds") {
  WriteFile("f", "", 0644);
  int fd = EXPECT_OK(open("f", O_WRONLY));
  EXPECT_OK(chmod("f", 0444));
  EXPECT_EQ(write(fd, "abc", 3), 3);
  close(fd);
  EXPECT_EQ(ReadFile("f"), std::string("abc"));
}

}  // namespace
}  // namespace pail::posix
