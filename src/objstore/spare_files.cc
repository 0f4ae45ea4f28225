#include "objstore/spare_files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include <spdlog/spdlog.h>

namespace pail {
namespace {
// After a failed create (a full disk, a removed directory) the maker waits
// this long before it tries again; puts create their own files meanwhile.
constexpr auto kRetryAfterFailure = std::chrono::seconds(1);
// A file this long unchanged whose process is gone is a leftover.
constexpr auto kLeftoverAge = std::chrono::hours(1);
}  // namespace

SpareFiles::SpareFiles(std::string dir, unsigned mode) : dir_(std::move(dir)), mode_(mode) {}

SpareFiles::~SpareFiles() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wanted_.SignalAll();
  if (maker_.joinable()) maker_.join();
  MutexLock lock(&mu_);
  for (const SpareFile& spare : ready_) {
    ::close(spare.fd);
    ::unlink(spare.path.c_str());
  }
}

std::string SpareFiles::UniqueName(const std::string& dir) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return dir + "/" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(rng());
}

size_t SpareFiles::RemoveLeftovers(const std::string& dir) {
  size_t removed = 0;
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::filesystem::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    const size_t dash = name.find('-');
    if (dash == 0 || dash == std::string::npos || dash > 9 ||
        name.find_first_not_of("0123456789") != dash) {
      continue;  // not a name of ours
    }
    const pid_t pid = static_cast<pid_t>(std::stol(name.substr(0, dash)));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code time_ec;
    const auto changed = std::filesystem::last_write_time(entry.path(), time_ec);
    if (time_ec || now - changed < kLeftoverAge) continue;
    if (::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

std::optional<SpareFile> SpareFiles::Take() {
  MutexLock lock(&mu_);
  if (!maker_.joinable() && !stopping_) maker_ = std::thread([this] { MakeLoop(); });
  while (!ready_.empty()) {
    SpareFile spare = std::move(ready_.back());
    ready_.pop_back();
    wanted_.Signal();
    // A spare that waited long can look like a dead process's leftover to
    // a process that cannot see ours (another machine or PID namespace on
    // the same directory), which removes it: then it has no name to link.
    struct stat st;
    if (::fstat(spare.fd, &st) == 0 && st.st_nlink > 0) return spare;
    ::close(spare.fd);
  }
  return std::nullopt;
}

void SpareFiles::MakeLoop() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    if (ready_.size() >= kSpareFiles) {
      wanted_.Wait();
      continue;
    }
    mu_.Unlock();
    SpareFile spare{-1, UniqueName(dir_)};
    spare.fd = ::open(spare.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_);
    const int err = errno;
    mu_.Lock();
    if (spare.fd >= 0) {
      ready_.push_back(std::move(spare));
      continue;
    }
    spdlog::debug("file:// bucket: cannot make a spare file in {}: {}", dir_, std::strerror(err));
    wanted_.WaitFor(kRetryAfterFailure);
  }
}

}  // namespace pail
