#include "util/thread_priority.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace pail {
namespace {

int OwnNice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

// The nice value is the calling thread's alone: the thread that set it
// runs at it, the others (the test's main thread) as before.
TEST(ThreadPriority, SetsOnlyTheCallingThreadsNice) {
  const int main_before = OwnNice();
  int seen = 0;
  bool set = false;
  std::thread lower([&] {
    set = SetThreadNice(main_before + 5);  // lowering needs no privilege
    seen = OwnNice();
  });
  lower.join();
  EXPECT_TRUE(set);
  EXPECT_EQ(seen, main_before + 5);
  EXPECT_EQ(OwnNice(), main_before);
}

TEST(ThreadPriority, RaisingNeedsThePrivilegeAndOtherwiseChangesNothing) {
  const int before = OwnNice();
  int seen = 0;
  bool set = false;
  std::thread raise([&] {
    set = SetThreadNice(kRequestThreadNice);
    seen = OwnNice();
  });
  raise.join();
  if (geteuid() == 0) {
    EXPECT_TRUE(set);
    EXPECT_EQ(seen, kRequestThreadNice);
  } else {
    EXPECT_EQ(seen, set ? kRequestThreadNice : before);
  }
  EXPECT_EQ(OwnNice(), before);
}

}  // namespace
}  // namespace pail
