#include "server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace pail::nfs::test {

namespace {

constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kStopTimeout = std::chrono::seconds(30);

}  // namespace

uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

namespace {

bool CanConnect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

ServerProcess::ServerProcess(bool durable_commit, std::string nfs_options,
                             std::string extra_config)
    : ServerProcess(ServersSection([=](const std::string& address) {
        return "[servers.nfs]\naddresses = [\"" + address + "\"]\ncommit = \"" +
               (durable_commit ? "durable" : "async") + "\"\n" + nfs_options + extra_config;
      })) {}

ServerProcess::ServerProcess(ServersSection servers_section)
    : servers_section_(std::move(servers_section)) {
  std::string templ = (std::filesystem::temp_directory_path() / "pail-nfs-test-XXXXXX").string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  dir_ = mkdtemp(buf.data());
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Kill();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string ServerProcess::log() const {
  std::ifstream in(dir_ + "/server.log");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool ServerProcess::Start() {
  if (port_ == 0) port_ = FreePort();
  std::string address = "127.0.0.1:" + std::to_string(port_);
  std::string config = dir_ + "/pailfs.toml";
  std::ofstream(config) << "[storage]\n"
                        << "url = \"file://" << dir_ << "/bucket\"\n"
                        << "encryption_password = \"nfs-test\"\n"
                        << "[cache]\n"
                        << "dir = \"" << dir_ << "/cache\"\n"
                        << servers_section_(address) << extra_config_;
  std::vector<std::string> argv = {PAIL_PAILFS_BINARY, "run", "-c", config};
  pid_ = fork();
  if (pid_ == 0) {
    int log = open((dir_ + "/server.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(log, 1);
    dup2(log, 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid_ > 0 && WaitForPort();
}

bool ServerProcess::WaitForPort() {
  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (CanConnect(port_)) return true;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool ServerProcess::Stop() {
  if (pid_ <= 0) return false;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (std::chrono::steady_clock::now() > deadline) {
      Kill();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "server: killed by signal %d after SIGTERM\n", WTERMSIG(status));
  } else {
    std::fprintf(stderr, "server: exit status %d after SIGTERM\n", WEXITSTATUS(status));
  }
  return false;
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace pail::nfs::test
