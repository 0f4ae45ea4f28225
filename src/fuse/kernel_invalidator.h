// KernelInvalidator: tells the kernel behind the FUSE mount to forget the
// names and attributes that changes made through other protocols (NFS, 9P,
// NBD: see fs/change_notifier.h) made stale, so the mount can let the
// kernel cache them for long (fuse_convert.h) and still show such changes
// at once.
//
// The kernel handles an invalidation under the directory's or inode's own
// lock, which a FUSE request in progress may hold while it waits for its
// answer; so the reports are queued and sent by a thread of their own (the
// queue merges repeated reports of the same inode or name), and Flush(),
// which the other protocols call before they answer, waits for that thread
// at most kFlushBound: the FUSE requests holding those locks are answered
// by threads that never wait for other protocols, so the wait ends, but a
// wedged mount must not stall NFS and 9P for good.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "fs/change_notifier.h"
#include "util/mutex.h"

struct fuse_session;  // libfuse's, known only by pointer here

namespace pail::fuse {

class KernelInvalidator final : public fs::ChangeListener {
 public:
  KernelInvalidator();
  ~KernelInvalidator() override;

  // From now on reports go to this session's kernel (once it completed
  // INIT; before, the kernel has nothing cached). Reports made while no
  // session is attached are dropped.
  void Attach(fuse_session* session) EXCLUDES(mu_);
  // Waits for a send in progress; the session may then be destroyed.
  void Detach() EXCLUDES(mu_);

  void InodeChanged(fs::Ino ino, bool data) override EXCLUDES(mu_);
  void EntryChanged(fs::Ino dir, std::string_view name) override EXCLUDES(mu_);
  // Waits until everything reported so far was sent, or kFlushBound.
  void Flush() override EXCLUDES(mu_);

 private:
  static constexpr std::chrono::seconds kFlushBound{1};

  void Run() EXCLUDES(mu_);

  Mutex mu_;
  CondVar work_cv_{&mu_};
  CondVar idle_cv_{&mu_};
  fuse_session* session_ GUARDED_BY(mu_) = nullptr;
  bool sending_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t reported_ GUARDED_BY(mu_) = 0;  // reports queued so far
  uint64_t sent_ GUARDED_BY(mu_) = 0;      // of which this many were sent
  std::map<fs::Ino, bool> inodes_ GUARDED_BY(mu_);  // ino -> data changed too
  std::set<std::pair<fs::Ino, std::string>> entries_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace pail::fuse
