#include "util/cpu_idle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

namespace pail {
namespace {

TEST(ParseCpuTimes, SumsTheCountedColumnsAndTheIdleOnes) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  CpuTimes t;
  ASSERT_TRUE(ParseCpuTimes("cpu  100 2 30 400 5 6 7 8 50 1\ncpu0 1 2 3 4 5 6 7 8 9 10\n", &t));
  EXPECT_EQ(t.idle, 405u);
  EXPECT_EQ(t.total, 100u + 2 + 30 + 400 + 5 + 6 + 7 + 8);  // guest is inside user
}

TEST(ParseCpuTimes, RefusesWhatIsNotTheCpuLine) {
  CpuTimes t;
  EXPECT_FALSE(ParseCpuTimes("", &t));
  EXPECT_FALSE(ParseCpuTimes("cpu0 1 2 3 4 5 6 7 8\n", &t));
  EXPECT_FALSE(ParseCpuTimes("intr 1 2 3\n", &t));
  EXPECT_FALSE(ParseCpuTimes("cpu  1 2 3 4 5 6 7\n", &t));  // too few columns
  EXPECT_FALSE(ParseCpuTimes("cpu  1 2 x 4 5 6 7 8\n", &t));
}

TEST(ParseCpuTimes, ReadsThisMachinesProcStat) {
  std::ifstream in("/proc/stat");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  CpuTimes t;
  ASSERT_TRUE(ParseCpuTimes(line, &t)) << line;
  EXPECT_GT(t.total, 0u);
  EXPECT_LE(t.idle, t.total);
}

// A meter over a file the test writes, so the counters are the test's.
class CpuIdleMeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cpu_idle_test_XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = tmpl;
  }
  void TearDown() override { unlink(path_.c_str()); }
  void Write(uint64_t busy, uint64_t idle) {
    std::ofstream(path_, std::ios::trunc) << "cpu  " << busy << " 0 0 " << idle << " 0 0 0 0 0 0\n";
  }
  std::string path_;
};

TEST_F(CpuIdleMeterTest, IdleWhenTheShareOfIdleTimeSinceTheLastReadingIsEnough) {
  CpuIdleMeter meter(0.25, std::chrono::nanoseconds(0), path_);
  Write(1000, 1000);
  EXPECT_FALSE(meter.Idle());  // one reading: nothing to compare yet
  Write(1070, 1030);           // 30 of 100 ticks idle
  EXPECT_TRUE(meter.Idle());
  Write(1150, 1050);           // 20 of 100
  EXPECT_FALSE(meter.Idle());
  Write(1175, 1075);           // 25 of 50: exactly the share asked for
  EXPECT_TRUE(meter.Idle());
  Write(1175, 1075);           // no time passed: not idle (nothing measured)
  EXPECT_FALSE(meter.Idle());
}

TEST_F(CpuIdleMeterTest, TimeCountedAsIdleByTheCallerCountsAsIdle) {
  const int64_t ns_per_tick = 1000000000 / sysconf(_SC_CLK_TCK);
  CpuIdleMeter meter(0.5, std::chrono::nanoseconds(0), path_);
  Write(1000, 1000);
  meter.Idle();
  Write(1100, 1000);  // 100 busy ticks, none idle...
  meter.CountAsIdle(60 * ns_per_tick);  // ...60 of which the caller spent polling
  EXPECT_TRUE(meter.Idle());
  Write(1200, 1000);  // counted once only
  EXPECT_FALSE(meter.Idle());
  Write(1300, 1000);
  meter.CountAsIdle(1000 * ns_per_tick);  // never more than the whole interval
  EXPECT_TRUE(meter.Idle());
}

TEST_F(CpuIdleMeterTest, ReadsAgainOnlyOnceAnIntervalHasPassed) {
  CpuIdleMeter meter(0.5, std::chrono::hours(1), path_);
  Write(0, 1000);
  EXPECT_FALSE(meter.Idle());
  Write(10, 2000);  // would be idle, but the hour has not passed
  EXPECT_FALSE(meter.Idle());
}

TEST_F(CpuIdleMeterTest, CountersThatCannotBeReadAreNotIdle) {
  CpuIdleMeter meter(0.25, std::chrono::nanoseconds(0), path_);
  Write(0, 100);
  meter.Idle();
  Write(10, 200);
  EXPECT_TRUE(meter.Idle());
  std::ofstream(path_, std::ios::trunc) << "garbage\n";
  EXPECT_FALSE(meter.Idle());
  Write(20, 300);  // the next good reading starts over
  EXPECT_FALSE(meter.Idle());
  Write(30, 400);
  EXPECT_TRUE(meter.Idle());
  unlink(path_.c_str());
  EXPECT_FALSE(meter.Idle());
}

}  // namespace
}  // namespace pail
