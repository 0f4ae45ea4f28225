// pailfs: the command line.
//   pailfs init [PATH|-]              write a commented starter config
//   pailfs run -c FILE                serve until SIGINT/SIGTERM
//   pailfs fsck -c FILE               check the filesystem offline
//   pailfs change-password -c FILE    rewrap the data key (new password on stdin)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "server/config.h"
#include "server/process.h"

namespace {

int Fail(const pail::Status& s) {
  std::fprintf(stderr, "pailfs: %s\n", s.ToString().c_str());
  return s.code() == pail::Status::Code::kInvalidArgument ? 2 : 1;
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
  CLI::App app{"pailfs: a POSIX filesystem on object storage"};
  app.require_subcommand(1);
  std::string config_path;
  std::string init_path = "pailfs.toml";
  bool verbose = false;
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

  CLI11_PARSE(app, argc, argv);
  // Logs go to stderr: stdout is for what a command prints (init -, fsck).
  spdlog::set_default_logger(spdlog::stderr_color_mt("pailfs"));
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);

  if (*init) return Init(init_path);
  auto config = pail::server::Config::Load(config_path);
  if (!config.ok()) return Fail(config.status());
  pail::Status s;
  if (*run) {
    WarnIfSecretExposed(config_path);
    s = pail::server::RunServer(*config);
  } else if (*fsck) {
    s = pail::server::RunFsck(*config);
  } else if (*change_password) {
    std::string password;
    std::getline(std::cin, password);
    s = pail::server::RunChangePassword(*config, password);
    if (s.ok()) std::printf("password changed\n");
  }
  return s.ok() ? 0 : Fail(s);
}
