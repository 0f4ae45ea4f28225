// FSYNC and FSYNCDIR are answered off the request loop (fuse_ops.cc,
// AnswerFsync): with one loop thread, and so no watchdog to hand reading
// on, other requests are still served while an fsync waits for the bucket,
// and the fsync returns only once the engine's sync has. Mounts the
// filesystem in this process; needs root and /dev/fuse.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <tuple>

#include "mounted_fs_test.h"
#include "util/mutex.h"

namespace pail::fuse {
namespace {

using namespace std::chrono_literals;

// Holds every Sync() until the test opens the gate.
class GatedSyncEngine : public fs::testing::ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;

  Status SyncThrough(uint64_t sequence) override {
    {
      MutexLock g(&mu_);
      ++waiting_;
      cv_.SignalAll();
      while (!open_) cv_.Wait();
      --waiting_;
    }
    Status s = ForwardingEngine::SyncThrough(sequence);
    completed_++;
    return s;
  }
  // True once a Sync() waits at the gate (within `timeout`).
  bool AwaitWaiter(std::chrono::milliseconds timeout) {
    MutexLock g(&mu_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (waiting_ == 0 && cv_.WaitUntil(deadline)) {
    }
    return waiting_ > 0;
  }
  void Open() {
    MutexLock g(&mu_);
    open_ = true;
    cv_.SignalAll();
  }
  int completed() const { return completed_.load(); }

  // Opens the gate when it goes out of scope: declared after a future whose
  // call may wait at the gate, it lets that call end before the future's
  // destructor waits for it, also when an assertion ends the test early.
  struct OpenOnExit {
    GatedSyncEngine* gate;
    ~OpenOnExit() { gate->Open(); }
  };

 private:
  Mutex mu_;
  CondVar cv_{&mu_};
  int waiting_ GUARDED_BY(mu_) = 0;
  bool open_ GUARDED_BY(mu_) = false;
  std::atomic<int> completed_{0};
};

using testing::FuseOpTotals;

class SyncPoolTest : public testing::MountedFsTest {
 protected:
  // One loop thread: no watchdog to hand reading on, so a blocked loop
  // thread would block everything.
  SyncPoolTest() { threads_ = 1; }

  void BeforeUnmount() override {
    if (gate_) gate_->Open();
  }

  engine::Engine& FsEngine() override {
    gate_ = std::make_unique<GatedSyncEngine>(*engine_);
    return *gate_;
  }

  std::unique_ptr<GatedSyncEngine> gate_;
};

TEST_F(SyncPoolTest, OtherRequestsRunWhileAnFsyncWaitsForTheBucket) {
  int fd = open(Path("data").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "durable", 7), 7);
  const auto [fsyncs_before, fsync_seconds_before] = FuseOpTotals("fsync");

  auto fsynced = std::async(std::launch::async, [fd] { return fsync(fd); });
  GatedSyncEngine::OpenOnExit open_for_fsync{gate_.get()};
  ASSERT_TRUE(gate_->AwaitWaiter(10s)) << "the fsync never reached the engine";

  // Served meanwhile: a lookup, a create and a directory listing.
  auto others = std::async(std::launch::async, [this] {
    struct stat st;
    if (stat(Path("data").c_str(), &st) != 0 || st.st_size != 7) return false;
    int other = open(Path("other").c_str(), O_CREAT | O_WRONLY, 0644);
    if (other < 0) return false;
    close(other);
    DIR* d = opendir(mountpoint_.c_str());
    if (d == nullptr) return false;
    int entries = 0;
    while (readdir(d) != nullptr) ++entries;
    closedir(d);
    return entries == 4;  // ".", "..", data, other
  });
  GatedSyncEngine::OpenOnExit open_for_others{gate_.get()};
  ASSERT_EQ(others.wait_for(10s), std::future_status::ready)
      << "requests waited behind an fsync held at the engine";
  EXPECT_TRUE(others.get());
  EXPECT_EQ(fsynced.wait_for(200ms), std::future_status::timeout)
      << "fsync returned before the engine's sync";
  EXPECT_EQ(gate_->completed(), 0);

  gate_->Open();
  ASSERT_EQ(fsynced.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(fsynced.get(), 0);
  EXPECT_GE(gate_->completed(), 1);
  close(fd);

  // Counted once, with the time it waited (at least the 200 ms above), by
  // the thread that answered it. That thread records it after its reply,
  // which may reach the caller first: wait for the count to move.
  auto [fsyncs_after, fsync_seconds_after] = FuseOpTotals("fsync");
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       fsyncs_after == fsyncs_before && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(1ms);
    std::tie(fsyncs_after, fsync_seconds_after) = FuseOpTotals("fsync");
  }
  EXPECT_EQ(fsyncs_after - fsyncs_before, 1);
  EXPECT_GE(fsync_seconds_after - fsync_seconds_before, 0.2);
}

TEST_F(SyncPoolTest, DirectorySyncsAndManyConcurrentFsyncsAllComplete) {
  ASSERT_EQ(mkdir(Path("d").c_str(), 0755), 0);
  // More callers than the pool has threads and backlog: the rest are
  // answered on the loop thread, which then waits at the gate too.
  constexpr int kCallers = 80;
  std::vector<std::future<int>> syncs;
  for (int i = 0; i < kCallers; ++i) {
    syncs.push_back(std::async(std::launch::async, [this, i] {
      std::string path = i % 2 ? Path("d") : Path("d/f" + std::to_string(i));
      int fd = i % 2 ? open(path.c_str(), O_RDONLY | O_DIRECTORY)
                     : open(path.c_str(), O_CREAT | O_WRONLY, 0644);
      if (fd < 0) return -1;
      int rc = fsync(fd);
      close(fd);
      return rc;
    }));
  }
  GatedSyncEngine::OpenOnExit open_for_syncs{gate_.get()};
  ASSERT_TRUE(gate_->AwaitWaiter(10s));
  gate_->Open();
  for (auto& s : syncs) {
    ASSERT_EQ(s.wait_for(30s), std::future_status::ready);
    EXPECT_EQ(s.get(), 0);
  }
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(Path("d"))) ++files;
  EXPECT_EQ(files, kCallers / 2);
}

}  // namespace
}  // namespace pail::fuse
