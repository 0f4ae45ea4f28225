#include "fuse/kernel_invalidator.h"

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "fuse/fuse_lowlevel_include.h"

namespace pail::fuse {

KernelInvalidator::KernelInvalidator() : thread_([this] { Run(); }) {}

KernelInvalidator::~KernelInvalidator() {
  {
    MutexLock g(&mu_);
    stopping_ = true;
    work_cv_.SignalAll();
  }
  thread_.join();
}

void KernelInvalidator::Attach(fuse_session* session) {
  MutexLock g(&mu_);
  session_ = session;
}

void KernelInvalidator::Detach() {
  MutexLock g(&mu_);
  session_ = nullptr;
  inodes_.clear();
  entries_.clear();
  sent_ = reported_;  // nothing is left to wait for
  idle_cv_.SignalAll();
  while (sending_) idle_cv_.Wait();
}

void KernelInvalidator::Flush() {
  MutexLock g(&mu_);
  const uint64_t target = reported_;
  const auto deadline = std::chrono::steady_clock::now() + kFlushBound;
  while (sent_ < target && idle_cv_.WaitUntil(deadline)) {
  }
}

void KernelInvalidator::InodeChanged(fs::Ino ino, bool data) {
  MutexLock g(&mu_);
  if (session_ == nullptr) return;
  inodes_[ino] |= data;
  ++reported_;
  work_cv_.Signal();
}

void KernelInvalidator::EntryChanged(fs::Ino dir, std::string_view name) {
  MutexLock g(&mu_);
  if (session_ == nullptr) return;
  entries_.emplace(dir, std::string(name));
  ++reported_;
  work_cv_.Signal();
}

void KernelInvalidator::Run() {
  mu_.Lock();
  for (;;) {
    while (!stopping_ && (session_ == nullptr || (inodes_.empty() && entries_.empty()))) {
      work_cv_.Wait();
    }
    if (stopping_) break;
    fuse_session* session = session_;
    std::map<fs::Ino, bool> inodes;
    std::set<std::pair<fs::Ino, std::string>> entries;
    inodes.swap(inodes_);
    entries.swap(entries_);
    const uint64_t batch_end = reported_;
    sending_ = true;
    mu_.Unlock();
    // Names first: dropping a name also drops the kernel's inode for it
    // when nothing else holds it, which saves the inode's own message.
    for (const auto& [dir, name] : entries) {
      int rc = fuse_lowlevel_notify_inval_entry(session, dir, name.data(), name.size());
      // ENOENT: the kernel has nothing cached under that name.
      if (rc != 0 && rc != -ENOENT) {
        spdlog::debug("fuse: invalidating entry {} in {}: {}", name, dir, std::strerror(-rc));
      }
    }
    for (const auto& [ino, data] : inodes) {
      // Offset 0, length 0: the attributes and every cached page; offset
      // -1: the attributes only.
      int rc = fuse_lowlevel_notify_inval_inode(session, ino, data ? 0 : -1, 0);
      if (rc != 0 && rc != -ENOENT) {
        spdlog::debug("fuse: invalidating inode {}: {}", ino, std::strerror(-rc));
      }
    }
    mu_.Lock();
    sending_ = false;
    if (sent_ < batch_end) sent_ = batch_end;
    idle_cv_.SignalAll();
  }
  mu_.Unlock();
}

}  // namespace pail::fuse
