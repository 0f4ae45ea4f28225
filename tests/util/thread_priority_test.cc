#include "util/thread_priority.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <latch>
#include <mutex>
#include <vector>
#include <thread>

#include "util/thread_pool.h"

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

// Each thread of a pool given a nice value runs at it (the tasks wait for
// each other, so each runs on a thread of its own).
TEST(ThreadPriority, PoolThreadsRunAtTheirNice) {
  const int before = OwnNice();
  const int nice = before + 3;  // lowering needs no privilege
  constexpr int kThreads = 3;
  ThreadPool pool(kThreads, 0, nice);
  std::latch all(kThreads);
  std::mutex mu;
  std::vector<int> seen;
  for (int i = 0; i < kThreads; i++) {
    pool.Submit([&] {
      {
        std::lock_guard<std::mutex> g(mu);
        seen.push_back(OwnNice());
      }
      all.arrive_and_wait();
    });
  }
  pool.WaitIdle();
  EXPECT_EQ(seen, std::vector<int>(kThreads, nice));
  EXPECT_EQ(OwnNice(), before);
}

}  // namespace
}  // namespace pail
