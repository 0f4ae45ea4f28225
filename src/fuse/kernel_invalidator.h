// KernelInvalidator: tells the kernel behind the FUSE mount to forget the
// names and attributes that changes made through other protocols (NFS, 9P,
// NBD: see fs/change_notifier.h) made stale, so the mount can let the
// kernel cache them for long (fuse_convert.h) and still show such changes
// at once.
//
// The kernel handles an invalidation under the directory's or inode's own
// lock, which a FUSE request in progress may hold while it waits for its
// answer; so the reports are queued and sent by a thread of their own, and
// reporting never waits for the kernel. The queue merges repeated reports
// of the same inode or name.
#pragma once

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
  // Waits until everything reported so far was sent (tests).
  void Drain() EXCLUDES(mu_);

  void InodeChanged(fs::Ino ino, bool data) override EXCLUDES(mu_);
  void EntryChanged(fs::Ino dir, std::string_view name) override EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);

  Mutex mu_;
  CondVar work_cv_{&mu_};
  CondVar idle_cv_{&mu_};
  fuse_session* session_ GUARDED_BY(mu_) = nullptr;
  bool sending_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::map<fs::Ino, bool> inodes_ GUARDED_BY(mu_);  // ino -> data changed too
  std::set<std::pair<fs::Ino, std::string>> entries_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace pail::fuse
