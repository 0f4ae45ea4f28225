// A fixture for tests that mount the filesystem of fs::testing::FsTest
// through a FuseServer of their own, in the test's process, and go through
// the kernel to it. Skips without root and /dev/fuse (fails instead with
// PAIL_REQUIRE_FUSE=1).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <utility>

#include "../fs/fs_test_util.h"
#include "fuse/fuse_server.h"
#include "metrics/metric.h"
#include "metrics/protocol_metrics.h"

namespace pail::fuse::testing {

// The fuse protocol's count and summed seconds of one operation.
inline std::pair<double, double> FuseOpTotals(const std::string& op) {
  metrics::TextWriter w;
  metrics::ProtocolMetrics::WriteAll(w);
  auto value = [&](const std::string& series) {
    std::smatch m;
    std::regex re(series + "\\{protocol=\"fuse\",op=\"" + op + "\"\\} ([0-9.e+-]+)");
    return std::regex_search(w.text(), m, re) ? std::stod(m[1]) : 0.0;
  };
  return {value("pailfs_protocol_operation_duration_seconds_count"),
          value("pailfs_protocol_operation_duration_seconds_sum")};
}

class MountedFsTest : public fs::testing::FsTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
      if (const char* need = std::getenv("PAIL_REQUIRE_FUSE"); need && std::string(need) == "1") {
        FAIL() << "needs root and /dev/fuse (PAIL_REQUIRE_FUSE=1)";
      }
      GTEST_SKIP() << "needs root and /dev/fuse";
    }
    FsTest::SetUp();
    mountpoint_ = cache_dirs_.back() + "-mnt";
    std::filesystem::create_directories(mountpoint_);
    FuseServerOptions o;
    o.mountpoint = mountpoint_;
    o.threads = threads_;
    server_ = std::make_unique<FuseServer>(*fs_, o);
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void TearDown() override {
    BeforeUnmount();
    if (server_) server_->Stop();
    server_.reset();
    FsTest::TearDown();
    std::error_code ec;
    if (!mountpoint_.empty()) std::filesystem::remove_all(mountpoint_, ec);
  }

  // Whatever must happen for the unmount to finish (opening a gate).
  virtual void BeforeUnmount() {}

  std::string Path(const std::string& name) const { return mountpoint_ + "/" + name; }

  unsigned threads_ = 1;
  std::string mountpoint_;
  std::unique_ptr<FuseServer> server_;
};

}  // namespace pail::fuse::testing
