#include "util/thread_pool.h"

#include "util/thread_priority.h"

namespace pail {

ThreadPool::ThreadPool(size_t threads, size_t backlog, int nice) : capacity_(threads + backlog) {
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this, nice] {
      if (nice != 0) SetThreadNice(nice);
      Run();
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    MutexLock g(&mu_);
    stopping_ = true;
  }
  work_cv_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::Submit(std::function<void()> task) {
  MutexLock g(&mu_);
  while (pending_ >= capacity_) space_cv_.Wait();
  queue_.push_back(std::move(task));
  pending_++;
  work_cv_.Signal();
}

bool ThreadPool::TrySubmit(std::function<void()> task) {
  MutexLock g(&mu_);
  if (pending_ >= capacity_) return false;
  queue_.push_back(std::move(task));
  pending_++;
  work_cv_.Signal();
  return true;
}

void ThreadPool::WaitIdle() {
  MutexLock g(&mu_);
  while (pending_ > 0) space_cv_.Wait();
}

void ThreadPool::Run() {
  MutexLock g(&mu_);
  for (;;) {
    while (queue_.empty() && !stopping_) work_cv_.Wait();
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    task();
    task = nullptr;  // whatever it captured goes before we report it done
    mu_.Lock();
    pending_--;
    space_cv_.SignalAll();
  }
}

}  // namespace pail
