// pailfs: the command line.
//   pailfs init [PATH|-]              write a commented starter config
//   pailfs run -c FILE                serve until SIGINT/SIGTERM
//   pailfs fsck -c FILE               check the filesystem offline
//   pailfs change-password -c FILE    rewrap the data key (new password on stdin)
//   pailfs flush -c FILE              make the running server durable now
//   pailfs status -c FILE [--json]    what the running server is doing
//   pailfs cost -c FILE [--provider P] [--json]   what the bucket costs
//
// Exit codes (docs/operations.md): 0 success; 1 failure; 2 bad usage or
// config; 3 the server (or the bucket) did not answer, retrying may help;
// 4 fenced: another server owns the bucket (a restart would fence it back).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "server/admin_client.h"
#include "server/config.h"
#include "server/heap.h"
#include "server/process.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;
constexpr int kExitFenced = 4;

int Fail(const pail::Status& s) {
  std::fprintf(stderr, "pailfs: %s\n", s.ToString().c_str());
  switch (s.code()) {
    case pail::Status::Code::kInvalidArgument: return kExitUsage;
    case pail::Status::Code::kRetryable: return kExitUnreachable;
    case pail::Status::Code::kFenced: return kExitFenced;
    default: return kExitFailure;
  }
}

int Init(const std::string& path) {
  const std::string text = pail::server::StarterConfig();
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  if (std::ifstream(path)) {
    return Fail(pail::Status::InvalidArgument(path + " exists; not overwriting it"));
  }
  // 0600: the user is about to put a password or cloud key into it.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Fail(pail::Status::IOError("cannot create " + path + ": " + std::strerror(errno)));
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0) written = false;
  if (!written) return Fail(pail::Status::IOError("cannot write " + path));
  std::printf("wrote %s; edit [storage] and [cache], then run: pailfs run -c %s\n", path.c_str(),
              path.c_str());
  return 0;
}

// Under systemd (stderr connected to the journal) each line starts with its
// syslog priority, "<6>" and so on, and carries no timestamp of its own:
// journald stores both.
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr const char* kPriority[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", ""};
    const char* p = kPriority[static_cast<int>(msg.level)];
    dest.append(p, p + std::strlen(p));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

void SetUpLogging(bool verbose) {
  // Logs go to stderr: stdout is for what a command prints (init -, fsck).
  spdlog::set_default_logger(spdlog::stderr_color_mt("pailfs"));
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  if (std::getenv("JOURNAL_STREAM") != nullptr) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%v");
    spdlog::set_formatter(std::move(formatter));
  }
}

// One admin request; prints the body to stdout on success.
int Admin(const pail::server::Config& config, const std::string& method, const std::string& path) {
  auto response = pail::server::CallAdmin(config, method, path);
  if (!response.ok()) return Fail(response.status());
  if (response->http_status == 200) {
    std::fwrite(response->body.data(), 1, response->body.size(), stdout);
    return 0;
  }
  std::string body = response->body;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  std::fprintf(stderr, "pailfs: server answered %ld: %s\n", response->http_status, body.c_str());
  if (response->http_status == 400) return kExitUsage;
  if (response->http_status == 503 && body.find("fenced") != std::string::npos) return kExitFenced;
  return kExitFailure;
}

// On a terminal, fsck redraws one progress line; in scripts it says nothing.
pail::fs::FsckProgress TerminalProgress() {
  if (!isatty(STDERR_FILENO)) return nullptr;
  return [last = std::chrono::steady_clock::time_point()](std::string_view pass, uint64_t keys) mutable {
    auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(200)) return;
    last = now;
    std::fprintf(stderr, "\r\033[Kfsck: %.*s: %llu keys", static_cast<int>(pass.size()), pass.data(),
                 static_cast<unsigned long long>(keys));
  };
}

// A config that spells out a password or key must not be readable by other
// users; ${ENV} references are fine anywhere.
void WarnIfSecretExposed(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IRWXG | S_IRWXO)) == 0) return;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (pail::server::HoldsLiteralSecret(text.str())) {
    spdlog::warn(
        "{} holds a secret (password or key) and is readable by other users (mode {:o}); run "
        "`chmod 600 {}` or use ${{ENV}} references",
        path, st.st_mode & 07777, path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  pail::server::ConfigureHeap();
  CLI::App app{"pailfs: a POSIX filesystem on object storage"};
  app.set_version_flag("--version", std::string("pailfs ") + PAILFS_VERSION);
  app.require_subcommand(1);
  std::string config_path;
  std::string init_path = "pailfs.toml";
  std::string provider = "aws-s3";
  bool verbose = false;
  bool json = false;
  app.add_flag("-v,--verbose", verbose, "debug logging");

  auto* init = app.add_subcommand("init", "write a commented starter config");
  init->add_option("path", init_path, "where to write it, or - for stdout");
  auto* run = app.add_subcommand("run", "serve the filesystem until SIGINT/SIGTERM");
  run->add_option("-c,--config", config_path, "config file")->required();
  auto* fsck = app.add_subcommand("fsck", "check the filesystem offline (server stopped)");
  fsck->add_option("-c,--config", config_path, "config file")->required();
  auto* change_password = app.add_subcommand(
      "change-password", "rewrap the data key under a new password read from stdin");
  change_password->add_option("-c,--config", config_path, "config file")->required();
  auto* flush = app.add_subcommand(
      "flush", "make the running server put everything in the bucket now; exits 0 once durable");
  flush->add_option("-c,--config", config_path, "config file")->required();
  auto* status = app.add_subcommand("status", "a summary from the running server");
  status->add_option("-c,--config", config_path, "config file")->required();
  status->add_flag("--json", json, "JSON for scripts");
  auto* cost = app.add_subcommand("cost", "what the bucket and the server's requests cost");
  cost->add_option("-c,--config", config_path, "config file")->required();
  cost->add_option("--provider", provider, "price table to use")
      ->check(CLI::IsMember({"aws-s3", "azure-blob-hot", "gcs", "r2"}));
  cost->add_flag("--json", json, "JSON for scripts");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  SetUpLogging(verbose);

  if (*init) return Init(init_path);
  auto config = pail::server::Config::Load(config_path);
  if (!config.ok()) return Fail(config.status());
  const std::string format = json ? "format=json" : "";
  if (*flush) return Admin(*config, "POST", "/flush");
  if (*status) return Admin(*config, "GET", "/status" + (json ? "?" + format : ""));
  if (*cost) return Admin(*config, "GET", "/cost?provider=" + provider + (json ? "&" + format : ""));
  pail::Status s;
  if (*run) {
    WarnIfSecretExposed(config_path);
    s = pail::server::RunServer(*config);
  } else if (*fsck) {
    auto progress = TerminalProgress();
    s = pail::server::RunFsck(*config, progress);
    if (progress) std::fprintf(stderr, "\r\033[K");
  } else if (*change_password) {
    std::string password;
    std::getline(std::cin, password);
    s = pail::server::RunChangePassword(*config, password);
    if (s.ok()) std::printf("password changed\n");
  }
  return s.ok() ? 0 : Fail(s);
}
