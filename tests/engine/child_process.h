// A child process with its stdout on a pipe, read line by line.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace pail::testing {

class ChildProcess {
 public:
  // `env`: extra "NAME=value" entries for the child's environment (for
  // example PAIL_FAILPOINTS), on top of this process's.
  explicit ChildProcess(const std::vector<std::string>& argv,
                        const std::vector<std::string>& env = {}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    // Built before fork: the child of a threaded process may not allocate.
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    for (char** e = environ; *e; ++e) envp.push_back(*e);
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~ChildProcess() {
    Kill();
    if (out_ >= 0) ::close(out_);
  }
  bool started() const { return pid_ > 0; }
  // Whether the child has exited (reaping it), without waiting.
  bool Exited() {
    if (reaped_) return true;
    if (::waitpid(pid_, &status_, WNOHANG) != pid_) return false;
    reaped_ = true;
    return true;
  }

  // The next line of output, or nullopt on EOF or after `timeout`.
  // Log lines ("[...") are passed over.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line[0] == '[') {
          // PAIL_CHILD_LOG=1 shows the children's log lines, for debugging.
          if (std::getenv("PAIL_CHILD_LOG")) std::fprintf(stderr, "child %d: %s\n", pid_, line.c_str());
          continue;
        }
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

  void Kill() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }

  // Exit status as from waitpid.
  int Wait() {
    if (reaped_) return status_;
    ::waitpid(pid_, &status_, 0);
    reaped_ = true;
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buffer_;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace pail::testing
