// ThreadPool: a fixed number of threads running submitted tasks, with a
// bounded backlog: Submit waits while `threads + backlog` tasks are queued
// or running, so a producer faster than the pool is slowed down rather than
// allowed to grow memory; TrySubmit refuses instead of waiting.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "util/mutex.h"

namespace pail {

class ThreadPool {
 public:
  // `nice`, when not 0, is each thread's nice value (see thread_priority.h;
  // without the privilege to raise it the threads run at the process's).
  ThreadPool(size_t threads, size_t backlog, int nice = 0);
  // Runs the queued tasks, then joins the threads.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> task) EXCLUDES(mu_);
  bool TrySubmit(std::function<void()> task) EXCLUDES(mu_);
  // Waits until every task submitted so far has finished.
  void WaitIdle() EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);

  const size_t capacity_;
  Mutex mu_;
  CondVar work_cv_{&mu_};   // tasks queued, or stopping
  CondVar space_cv_{&mu_};  // a task finished
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  size_t pending_ GUARDED_BY(mu_) = 0;  // queued plus running
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace pail
