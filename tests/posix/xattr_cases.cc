// Extended attributes (Linux setxattr(2) family; POSIX leaves them out).
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

std::string Get(const char* path, const char* name) {
  char buf[70000];
  ssize_t n = getxattr(path, name, buf, sizeof buf);
  if (n < 0) throw CaseFailure{std::string("getxattr ") + name + ": " + std::strerror(errno)};
  return std::string(buf, static_cast<size_t>(n));
}

std::set<std::string> Names(const char* path) {
  char buf[65536];
  ssize_t n = listxattr(path, buf, sizeof buf);
  if (n < 0) throw CaseFailure{std::string("listxattr: ") + std::strerror(errno)};
  std::set<std::string> out;
  for (ssize_t i = 0; i < n;) {
    std::string name(buf + i);
    if (name.rfind("user.", 0) == 0) out.insert(name);
    i += static_cast<ssize_t>(name.size()) + 1;
  }
  return out;
}

POSIX_CASES {
  for (size_t size : {0ul, 1ul, 100ul, 1024ul, 3000ul}) {
    Register("xattr", "value_of_" + std::to_string(size) + "_bytes", [size](Context&) {
      WriteFile("f", "");
      std::string value = Pattern(size, 11);
      EXPECT_OK(setxattr("f", "user.v", value.data(), value.size(), 0));
      EXPECT_EQ(getxattr("f", "user.v", nullptr, 0), (ssize_t)size);
      EXPECT_EQ(Get("f", "user.v"), value);
    });
  }
}

POSIX_CASE("xattr", "list_shows_all_names") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "1", 1, 0));
  EXPECT_OK(setxattr("f", "user.bb", "2", 1, 0));
  EXPECT_OK(setxattr("f", "user.ccc", "3", 1, 0));
  EXPECT_EQ(Names("f"), (std::set<std::string>{"user.a", "user.bb", "user.ccc"}));
}

POSIX_CASE("xattr", "list_size_probe_matches") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "1", 1, 0));
  ssize_t size = EXPECT_OK(listxattr("f", nullptr, 0));
  std::string buf(static_cast<size_t>(size), '\0');
  EXPECT_EQ(listxattr("f", buf.data(), buf.size()), size);
}

POSIX_CASE("xattr", "replace_value") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "first", 5, 0));
  EXPECT_OK(setxattr("f", "user.a", "2nd", 3, 0));
  EXPECT_EQ(Get("f", "user.a"), std::string("2nd"));
}

POSIX_CASE("xattr", "remove_then_get_is_enodata") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "x", 1, 0));
  EXPECT_OK(removexattr("f", "user.a"));
  EXPECT_ERRNO(getxattr("f", "user.a", nullptr, 0), ENODATA);
  EXPECT_TRUE(Names("f").empty());
}

POSIX_CASE("xattr", "missing_name_is_enodata") {
  WriteFile("f", "");
  char buf[8];
  EXPECT_ERRNO(getxattr("f", "user.none", buf, sizeof buf), ENODATA);
  EXPECT_ERRNO(removexattr("f", "user.none"), ENODATA);
}

POSIX_CASE("xattr", "create_flag_on_existing_is_eexist") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "x", 1, XATTR_CREATE));
  EXPECT_ERRNO(setxattr("f", "user.a", "y", 1, XATTR_CREATE), EEXIST);
  EXPECT_EQ(Get("f", "user.a"), std::string("x"));
}

POSIX_CASE("xattr", "replace_flag_on_missing_is_enodata") {
  WriteFile("f", "");
  EXPECT_ERRNO(setxattr("f", "user.a", "y", 1, XATTR_REPLACE), ENODATA);
  EXPECT_OK(setxattr("f", "user.a", "x", 1, 0));
  EXPECT_OK(setxattr("f", "user.a", "z", 1, XATTR_REPLACE));
  EXPECT_EQ(Get("f", "user.a"), std::string("z"));
}

POSIX_CASE("xattr", "small_buffer_is_erange") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "longvalue", 9, 0));
  char buf[4];
  EXPECT_ERRNO(getxattr("f", "user.a", buf, sizeof buf), ERANGE);
  char list[3];
  EXPECT_ERRNO(listxattr("f", list, sizeof list), ERANGE);
}

POSIX_CASE("xattr", "too_long_name_is_erange") {
  WriteFile("f", "");
  std::string name = "user." + std::string(251, 'x');
  EXPECT_ERRNO(setxattr("f", name.c_str(), "x", 1, 0), ERANGE);
}

POSIX_CASE("xattr", "on_directory") {
  MakeDir("d");
  EXPECT_OK(setxattr("d", "user.dir", "yes", 3, 0));
  EXPECT_EQ(Get("d", "user.dir"), std::string("yes"));
}

POSIX_CASE("xattr", "through_descriptor") {
  WriteFile("f", "");
  int fd = EXPECT_OK(open("f", O_RDONLY));
  EXPECT_OK(fsetxattr(fd, "user.fd", "v", 1, 0));
  char buf[8];
  EXPECT_EQ(fgetxattr(fd, "user.fd", buf, sizeof buf), 1);
  EXPECT_OK(fremovexattr(fd, "user.fd"));
  close(fd);
}

POSIX_CASE("xattr", "user_namespace_on_symlink_is_eperm") {
  EXPECT_OK(symlink("x", "l"));
  EXPECT_ERRNO(lsetxattr("l", "user.a", "v", 1, 0), EPERM);
}

POSIX_CASE("xattr", "survives_rename_and_link") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "kept", 4, 0));
  EXPECT_OK(rename("f", "g"));
  EXPECT_OK(link("g", "h"));
  EXPECT_EQ(Get("h", "user.a"), std::string("kept"));
}

POSIX_CASE("xattr", "gone_with_recreated_file") {
  WriteFile("f", "");
  EXPECT_OK(setxattr("f", "user.a", "old", 3, 0));
  EXPECT_OK(unlink("f"));
  WriteFile("f", "");
  EXPECT_TRUE(Names("f").empty());
}

POSIX_CASE("xattr", "set_updates_ctime") {
  WriteFile("f", "");
  Times before = TimesBeforeChange("f");
  EXPECT_OK(setxattr("f", "user.a", "v", 1, 0));
  EXPECT_TRUE(Before(before.ctime, TimesOf("f").ctime));
}

POSIX_CASE("xattr", "non_owner_without_write_permission_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0644); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(setxattr("f", "user.a", "v", 1, 0), EACCES); });
}

POSIX_CASE("xattr", "reader_without_read_permission_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "", 0600);
    EXPECT_OK(setxattr("f", "user.a", "v", 1, 0));
  });
  c.As(Context::Bob(), [] {
    char buf[8];
    EXPECT_ERRNO(getxattr("f", "user.a", buf, sizeof buf), EACCES);
  });
}

POSIX_CASE("xattr", "many_attributes") {
  WriteFile("f", "");
  std::set<std::string> want;
  for (int i = 0; i < 50; ++i) {
    std::string name = "user.n" + std::to_string(i);
    std::string value = "value" + std::to_string(i);
    EXPECT_OK(setxattr("f", name.c_str(), value.data(), value.size(), 0));
    want.insert(name);
  }
  EXPECT_EQ(Names("f").size(), want.size());
  EXPECT_EQ(Get("f", "user.n37"), std::string("value37"));
}

// One inode's attributes are bounded: names together never more than a
// listxattr buffer can hold (XATTR_LIST_MAX, 64 KiB), and filling it ends in
// ENOSPC, after which removing one makes room again.
POSIX_CASE("xattr", "names_together_are_bounded_with_enospc") {
  WriteFile("f", "");
  const std::string stem = "user." + std::string(240, 'n');
  int set = 0;
  int err = 0;
  for (; set < 1000; ++set) {
    std::string name = stem + std::to_string(1000 + set);
    if (setxattr("f", name.c_str(), "", 0, 0) != 0) {
      err = errno;
      break;
    }
  }
  EXPECT_EQ(err, ENOSPC);
  EXPECT_TRUE(set > 0);
  ssize_t size = EXPECT_OK(listxattr("f", nullptr, 0));
  EXPECT_TRUE(size <= 65536);
  std::string first = stem + std::to_string(1000);
  EXPECT_OK(removexattr("f", first.c_str()));
  EXPECT_OK(setxattr("f", first.c_str(), "", 0, 0));
}

// Values add up to a bound too: 64 KiB values (the most one may hold)
// are refused with ENOSPC well before 64 of them.
POSIX_CASE("xattr", "values_together_are_bounded_with_enospc") {
  WriteFile("f", "");
  const std::string value(65536, 'v');
  int set = 0;
  int err = 0;
  for (; set < 64; ++set) {
    std::string name = "user.v" + std::to_string(set);
    if (setxattr("f", name.c_str(), value.data(), value.size(), 0) != 0) {
      err = errno;
      break;
    }
  }
  EXPECT_EQ(err, ENOSPC);
  // Small attributes still fit once a big one is gone.
  if (set > 0) EXPECT_OK(removexattr("f", "user.v0"));
  EXPECT_OK(setxattr("f", "user.small", "s", 1, 0));
}

POSIX_CASE("xattr", "value_over_64k_is_e2big") {
  WriteFile("f", "");
  std::string value(65537, 'v');
  EXPECT_ERRNO(setxattr("f", "user.big", value.data(), value.size(), 0), E2BIG);
}

// File capabilities (security.capability) go whenever a file's data or
// owner changes, like setuid: a changed program keeps none of the
// privileges given to the old one. Setting them takes root (CAP_SETFCAP).
// The value is what setcap writes (struct vfs_cap_data, revision 2,
// little-endian): CAP_NET_BIND_SERVICE permitted and effective.
void GiveCapability(Context& c, const char* path) {
  c.AsRoot([path] {
    const uint32_t words[5] = {0x02000001u, 1u << 10, 0, 0, 0};
    EXPECT_OK(setxattr(path, "security.capability", words, sizeof words, 0));
    EXPECT_EQ(getxattr(path, "security.capability", nullptr, 0), (ssize_t)sizeof words);
  });
}

bool HasCapability(const char* path) {
  ssize_t n = getxattr(path, "security.capability", nullptr, 0);
  if (n < 0 && errno != ENODATA) {
    throw CaseFailure{std::string("getxattr security.capability: ") + std::strerror(errno)};
  }
  return n >= 0;
}

void WriteAt(const char* path, off_t offset) {
  int fd = EXPECT_OK(open(path, O_WRONLY));
  EXPECT_EQ(pwrite(fd, "x", 1, offset), (ssize_t)1);
  EXPECT_OK(close(fd));
}

POSIX_CASE("xattr", "write_drops_capabilities") {
  WriteFile("f", "abc", 0666);
  GiveCapability(c, "f");
  WriteAt("f", 1);
  EXPECT_EQ(HasCapability("f"), false);
  EXPECT_EQ(ReadFile("f"), "axc");
}

// Given between two writes (the first may still be in the server's buffer,
// and FUSE's kernel may have marked the file as one without capabilities),
// they still go with the next write.
POSIX_CASE("xattr", "write_drops_capabilities_given_after_a_write") {
  WriteFile("f", "abc", 0666);
  WriteAt("f", 0);
  GiveCapability(c, "f");
  WriteAt("f", 2);
  EXPECT_EQ(HasCapability("f"), false);
}

POSIX_CASE("xattr", "truncate_drops_capabilities") {
  WriteFile("f", "abc", 0666);
  GiveCapability(c, "f");
  EXPECT_OK(truncate("f", 1));
  EXPECT_EQ(HasCapability("f"), false);
}

POSIX_CASE("xattr", "chown_drops_capabilities") {
  WriteFile("f", "abc", 0666);
  GiveCapability(c, "f");
  c.AsRoot([] { EXPECT_OK(chown("f", kAliceUid, kAliceGid)); });
  EXPECT_EQ(HasCapability("f"), false);
}

POSIX_CASE("xattr", "chmod_keeps_capabilities") {
  WriteFile("f", "abc", 0666);
  GiveCapability(c, "f");
  c.AsRoot([] { EXPECT_OK(chmod("f", 0755)); });
  EXPECT_EQ(HasCapability("f"), true);
}

}  // namespace
}  // namespace pail::posix
