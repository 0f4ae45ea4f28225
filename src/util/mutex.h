// Mutex, SharedMutex, MutexLock, ReaderLock and CondVar: std:: primitives
// carrying clang thread-safety annotations, so members can be declared
// GUARDED_BY(mu_) and functions REQUIRES(mu_) and the compiler checks them.
//
// AssertHeld() is for places static analysis cannot follow (a lock chosen at
// run time, such as the per-inode lock table): in debug and sanitizer builds
// it aborts when the calling thread does not hold the lock.
#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "util/thread_annotations.h"

namespace pail {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() {
    mu_.lock();
    SetOwner();
  }
  void Unlock() RELEASE() {
    ClearOwner();
    mu_.unlock();
  }
  bool TryLock() TRY_ACQUIRE(true) {
    if (!mu_.try_lock()) return false;
    SetOwner();
    return true;
  }
  void AssertHeld() const ASSERT_CAPABILITY(this) {
#ifndef NDEBUG
    assert(owner_.load(std::memory_order_relaxed) == std::this_thread::get_id());
#endif
  }

  // For std::condition_variable; callers use CondVar below.
  std::mutex& native() { return mu_; }

 private:
  friend class CondVar;
#ifndef NDEBUG
  void SetOwner() { owner_.store(std::this_thread::get_id(), std::memory_order_relaxed); }
  void ClearOwner() { owner_.store(std::thread::id(), std::memory_order_relaxed); }
  std::atomic<std::thread::id> owner_{};
#else
  void SetOwner() {}
  void ClearOwner() {}
#endif
  std::mutex mu_;
};

class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  void LockShared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void UnlockShared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a Mutex for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Holds a Mutex for its scope when `take` is true. Not annotated: the
// analysis cannot follow a lock taken on a condition, so use it only for a
// mutex that orders operations and guards no member.
class ConditionalMutexLock {
 public:
  ConditionalMutexLock(Mutex* mu, bool take) NO_THREAD_SAFETY_ANALYSIS
      : mu_(take ? mu : nullptr) {
    if (mu_ != nullptr) mu_->Lock();
  }
  ~ConditionalMutexLock() NO_THREAD_SAFETY_ANALYSIS {
    if (mu_ != nullptr) mu_->Unlock();
  }
  ConditionalMutexLock(const ConditionalMutexLock&) = delete;
  ConditionalMutexLock& operator=(const ConditionalMutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~WriterLock() RELEASE() { mu_->Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// Holds a SharedMutex shared for its scope.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex* mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_->LockShared(); }
  ~ReaderLock() RELEASE() { mu_->UnlockShared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// A condition variable bound to one Mutex; Wait* must be called with it held.
// Like LevelDB's port::CondVar the waits carry no annotation (the analysis
// cannot tie cv.mu_ to the caller's mutex); they assert the lock instead.
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait() {
    mu_->AssertHeld();
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    mu_->ClearOwner();
    cv_.wait(lock);
    mu_->SetOwner();
    lock.release();
  }
  // Returns false on timeout.
  template <class Rep, class Period>
  bool WaitFor(std::chrono::duration<Rep, Period> d) {
    mu_->AssertHeld();
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    mu_->ClearOwner();
    bool signalled = cv_.wait_for(lock, d) == std::cv_status::no_timeout;
    mu_->SetOwner();
    lock.release();
    return signalled;
  }
  template <class Clock, class Duration>
  bool WaitUntil(std::chrono::time_point<Clock, Duration> t) {
    mu_->AssertHeld();
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    mu_->ClearOwner();
    bool signalled = cv_.wait_until(lock, t) == std::cv_status::no_timeout;
    mu_->SetOwner();
    lock.release();
    return signalled;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  Mutex* const mu_;
  std::condition_variable cv_;
};

}  // namespace pail
