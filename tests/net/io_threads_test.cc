// IoThreads: the threads running a server's io_context stay until drained.
#include "net/io_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace pail::net {
namespace {

// The threads keep running with nothing to do (a stopping server has no
// work between its listeners' close and its connections'), and Drain
// returns only once what was queued before it, and what that queued in
// turn, has run.
TEST(IoThreadsTest, IdleThreadsStayAndDrainRunsWhatIsQueued) {
  asio::io_context io;
  IoThreads threads;
  threads.Start(io, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto strand = asio::make_strand(io);
  std::atomic<int> ran{0};
  std::function<void(int)> chain = [&](int left) {
    ran++;
    if (left > 0) asio::post(strand, [&chain, left] { chain(left - 1); });
  };
  for (int i = 0; i < 100; i++) asio::post(strand, [&] { ran++; });
  asio::post(strand, [&] { chain(9); });
  threads.Drain();
  EXPECT_EQ(ran.load(), 110);
}

}  // namespace
}  // namespace pail::net
