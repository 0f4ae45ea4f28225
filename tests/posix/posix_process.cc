#include "posix_process.h"

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace pail::posix {

namespace {

// The longest failure message a child passes back; more is cut.
constexpr size_t kMaxMessageBytes = 4096;

void WriteAllBestEffort(int fd, const std::string& text) {
  size_t done = 0;
  size_t total = std::min(text.size(), kMaxMessageBytes);
  while (done < total) {
    ssize_t n = write(fd, text.data() + done, total - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

ChildOutcome RunInChild(const std::function<void()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return {false, std::string("pipe: ") + std::strerror(errno)};
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {false, std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(kChildTimeLimitSeconds);
    int code = 0;
    try {
      fn();
    } catch (const CaseFailure& f) {
      WriteAllBestEffort(fds[1], f.message);
      code = 1;
    } catch (const std::exception& e) {
      WriteAllBestEffort(fds[1], std::string("exception: ") + e.what());
      code = 1;
    }
    _exit(code);
  }
  close(fds[1]);
  std::string message;
  char buf[1024];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (message.size() < kMaxMessageBytes) message.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {true, ""};
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::string why = sig == SIGALRM ? "timed out after " + std::to_string(kChildTimeLimitSeconds) + " s"
                                     : std::string("killed by signal ") + strsignal(sig);
    return {false, message.empty() ? why : message + " (" + why + ")"};
  }
  if (message.empty()) message = "exited with status " + std::to_string(WEXITSTATUS(status));
  return {false, message};
}

void SwitchIdentity(const Identity& who, bool keep_root_saved) {
  auto fail = [](const char* what) {
    throw CaseFailure{std::string("switching identity: ") + what + ": " + std::strerror(errno)};
  };
  // Become fully root first: only root may set arbitrary ids and groups.
  if (geteuid() != 0 && setresuid(0, 0, 0) != 0) fail("setresuid(0)");
  if (setgroups(who.groups.size(), who.groups.data()) != 0) fail("setgroups");
  gid_t saved_gid = keep_root_saved ? 0 : who.gid;
  uid_t saved_uid = keep_root_saved ? 0 : who.uid;
  if (setresgid(who.gid, who.gid, saved_gid) != 0) fail("setresgid");
  if (setresuid(who.uid, who.uid, saved_uid) != 0) fail("setresuid");
}

}  // namespace pail::posix
