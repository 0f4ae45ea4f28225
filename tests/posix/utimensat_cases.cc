// utimensat(2) and futimens(3).
#include <fcntl.h>
#include <unistd.h>

#include "posix_util.h"

namespace pail::posix {
namespace {

timespec Ts(time_t sec, long nsec) { return timespec{sec, nsec}; }

POSIX_CASES {
  struct Pair {
    time_t atime_sec;
    long atime_nsec;
    time_t mtime_sec;
    long mtime_nsec;
  };
  for (Pair p : {Pair{1000000000, 0, 1000000001, 0}, Pair{1234567890, 123456789, 1234567891, 987654321},
                 Pair{0, 0, 0, 1}, Pair{4102444800, 999999999, 4102444800, 1}, Pair{1, 1, 2, 2}}) {
    Register("utimensat", "sets_exact_times_" + std::to_string(p.atime_sec) + "_" +
                              std::to_string(p.mtime_nsec),
             [p](Context&) {
               WriteFile("f", "");
               timespec t[2] = {Ts(p.atime_sec, p.atime_nsec), Ts(p.mtime_sec, p.mtime_nsec)};
               EXPECT_OK(utimensat(AT_FDCWD, "f", t, 0));
               Times got = TimesOf("f");
               EXPECT_EQ(got.atime.tv_sec, p.atime_sec);
               EXPECT_EQ(got.atime.tv_nsec, p.atime_nsec);
               EXPECT_EQ(got.mtime.tv_sec, p.mtime_sec);
               EXPECT_EQ(got.mtime.tv_nsec, p.mtime_nsec);
             });
  }
  for (NodeType type : {NodeType::kDirectory, NodeType::kFifo, NodeType::kSocket}) {
    Register("utimensat", std::string("sets_times_of_") + NodeTypeName(type), [type](Context&) {
      MakeNode(type, "n", 0755);
      timespec t[2] = {Ts(100, 5), Ts(200, 6)};
      EXPECT_OK(utimensat(AT_FDCWD, "n", t, 0));
      Times got = TimesOf("n");
      EXPECT_TRUE(SameTime(got.atime, t[0]));
      EXPECT_TRUE(SameTime(got.mtime, t[1]));
    });
  }
}

POSIX_CASE("utimensat", "updates_ctime") {
  WriteFile("f", "");
  Times before = TimesBeforeChange("f");
  timespec t[2] = {Ts(100, 0), Ts(100, 0)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", t, 0));
  EXPECT_TRUE(Before(before.ctime, TimesOf("f").ctime));
}

POSIX_CASE("utimensat", "null_times_set_now") {
  WriteFile("f", "");
  timespec old[2] = {Ts(100, 0), Ts(100, 0)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", old, 0));
  timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  start.tv_sec -= 2;
  EXPECT_OK(utimensat(AT_FDCWD, "f", nullptr, 0));
  Times got = TimesOf("f");
  EXPECT_TRUE(Before(start, got.atime));
  EXPECT_TRUE(Before(start, got.mtime));
}

POSIX_CASE("utimensat", "utime_now_and_omit") {
  WriteFile("f", "");
  timespec old[2] = {Ts(100, 0), Ts(200, 0)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", old, 0));
  timespec t[2] = {Ts(0, UTIME_OMIT), Ts(0, UTIME_NOW)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", t, 0));
  Times got = TimesOf("f");
  EXPECT_TRUE(SameTime(got.atime, Ts(100, 0)));
  EXPECT_TRUE(got.mtime.tv_sec > 1000000000);
  timespec t2[2] = {Ts(0, UTIME_NOW), Ts(0, UTIME_OMIT)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", t2, 0));
  Times got2 = TimesOf("f");
  EXPECT_TRUE(got2.atime.tv_sec > 1000000000);
  EXPECT_TRUE(SameTime(got2.mtime, got.mtime));
}

POSIX_CASE("utimensat", "both_omit_changes_nothing") {
  WriteFile("f", "");
  timespec old[2] = {Ts(100, 0), Ts(200, 0)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", old, 0));
  timespec t[2] = {Ts(0, UTIME_OMIT), Ts(0, UTIME_OMIT)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", t, 0));
  Times got = TimesOf("f");
  EXPECT_TRUE(SameTime(got.atime, Ts(100, 0)));
  EXPECT_TRUE(SameTime(got.mtime, Ts(200, 0)));
}

POSIX_CASE("utimensat", "invalid_nanoseconds_is_einval") {
  WriteFile("f", "");
  timespec t[2] = {Ts(100, 1000000000), Ts(100, 0)};
  EXPECT_ERRNO(utimensat(AT_FDCWD, "f", t, 0), EINVAL);
  timespec t2[2] = {Ts(100, 0), Ts(100, -5)};
  EXPECT_ERRNO(utimensat(AT_FDCWD, "f", t2, 0), EINVAL);
}

POSIX_CASE("utimensat", "nofollow_sets_symlink_times") {
  WriteFile("f", "");
  EXPECT_OK(symlink("f", "l"));
  timespec f_old[2] = {Ts(500, 0), Ts(500, 0)};
  EXPECT_OK(utimensat(AT_FDCWD, "f", f_old, 0));
  timespec t[2] = {Ts(100, 7), Ts(200, 8)};
  EXPECT_OK(utimensat(AT_FDCWD, "l", t, AT_SYMLINK_NOFOLLOW));
  EXPECT_TRUE(SameTime(TimesOf("l").mtime, Ts(200, 8)));
  EXPECT_TRUE(SameTime(TimesOf("f").mtime, Ts(500, 0)));
}

POSIX_CASE("utimensat", "follows_symlink_by_default") {
  WriteFile("f", "");
  EXPECT_OK(symlink("f", "l"));
  timespec t[2] = {Ts(100, 7), Ts(200, 8)};
  EXPECT_OK(utimensat(AT_FDCWD, "l", t, 0));
  EXPECT_TRUE(SameTime(TimesOf("f").mtime, Ts(200, 8)));
}

POSIX_CASE("utimensat", "futimens_on_descriptor") {
  WriteFile("f", "");
  int fd = EXPECT_OK(open("f", O_RDONLY));
  timespec t[2] = {Ts(300, 1), Ts(400, 2)};
  EXPECT_OK(futimens(fd, t));
  close(fd);
  EXPECT_TRUE(SameTime(TimesOf("f").mtime, Ts(400, 2)));
}

POSIX_CASE("utimensat", "missing_is_enoent") {
  EXPECT_ERRNO(utimensat(AT_FDCWD, "nope", nullptr, 0), ENOENT);
}

POSIX_CASE("utimensat", "non_owner_with_write_permission_may_set_now") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0666); });
  c.As(Context::Bob(), [] {
    EXPECT_OK(utimensat(AT_FDCWD, "f", nullptr, 0));
    timespec now[2] = {Ts(0, UTIME_NOW), Ts(0, UTIME_NOW)};
    EXPECT_OK(utimensat(AT_FDCWD, "f", now, 0));
  });
}

POSIX_CASE("utimensat", "non_owner_may_not_set_explicit_times") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0666); });
  c.As(Context::Bob(), [] {
    timespec t[2] = {Ts(100, 0), Ts(100, 0)};
    EXPECT_ERRNO(utimensat(AT_FDCWD, "f", t, 0), EPERM);
  });
}

POSIX_CASE("utimensat", "non_owner_without_write_permission_may_not_set_now") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0644); });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(utimensat(AT_FDCWD, "f", nullptr, 0), EACCES); });
}

POSIX_CASE("utimensat", "owner_without_write_permission_may_set_times") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    WriteFile("f", "", 0444);
    timespec t[2] = {Ts(100, 0), Ts(100, 0)};
    EXPECT_OK(utimensat(AT_FDCWD, "f", t, 0));
    EXPECT_OK(utimensat(AT_FDCWD, "f", nullptr, 0));
  });
}

POSIX_CASE("utimensat", "root_may_set_any_times") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] { WriteFile("f", "", 0000); });
  c.AsRoot([] {
    timespec t[2] = {Ts(100, 0), Ts(100, 0)};
    EXPECT_OK(utimensat(AT_FDCWD, "f", t, 0));
  });
  EXPECT_TRUE(SameTime(TimesOf("f").mtime, Ts(100, 0)));
}

POSIX_CASE("utimensat", "search_denied_in_prefix_is_eacces") {
  EXPECT_OK(chmod(".", 0777));
  c.As(Context::Alice(), [] {
    MakeDir("d", 0777);
    WriteFile("d/f", "", 0666);
    EXPECT_OK(chmod("d", 0776));
  });
  c.As(Context::Bob(), [] { EXPECT_ERRNO(utimensat(AT_FDCWD, "d/f", nullptr, 0), EACCES); });
}

}  // namespace
}  // namespace pail::posix
