// Sync cost benchmark: what an fsync costs on each of several mounts, so
// that a comparison of rates also shows which mounts made their changes
// durable.
//
//   sync_cost_bench --dir D [--dir D2 ...] [--loops N] [--rounds R]
//
// In a fresh directory under each D it times, per loop: creating a file and
// renaming it, then the same followed by an fsync of the directory (what
// stress-ng's rename stressor does, and how applications make a rename
// durable); writing 4 KiB into a file, then the same followed by an fsync
// of the file. The rounds alternate between the directories. A directory
// fsync that adds nothing to the loop reached no disk: bindfs, for one,
// leaves FSYNCDIR out, libfuse answers it with ENOSYS, and the kernel then
// treats every directory fsync on the mount as done. It prints numbers; it
// never passes or fails.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kWriteBytes = 4096;
// The file written over and over wraps at this size.
constexpr size_t kFileBytes = 1 << 20;

struct Costs {
  double rename_us = 0;
  double rename_sync_us = 0;
  double write_us = 0;
  double write_sync_us = 0;
};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "sync_cost_bench: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

// Microseconds per loop of create-and-rename in `dir`, each loop followed by
// an fsync of the directory when `sync`.
double RenameLoop(const std::string& dir, int loops, bool sync, int round) {
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd < 0) Fail("open " + dir);
  const std::string prefix = dir + "/" + (sync ? "s" : "n") + std::to_string(round) + "-";
  const auto start = Clock::now();
  for (int i = 0; i < loops; ++i) {
    const std::string from = prefix + std::to_string(i), to = from + ".renamed";
    int fd = open(from.c_str(), O_CREAT | O_WRONLY | O_EXCL, 0644);
    if (fd < 0) Fail("create " + from);
    close(fd);
    if (rename(from.c_str(), to.c_str()) != 0) Fail("rename " + from);
    if (sync && fsync(dir_fd) != 0) Fail("fsync " + dir);
  }
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  close(dir_fd);
  for (int i = 0; i < loops; ++i) unlink((prefix + std::to_string(i) + ".renamed").c_str());
  return us / loops;
}

// Microseconds per 4 KiB write into `file`, each followed by an fsync of
// the file when `sync`.
double WriteLoop(const std::string& file, int loops, bool sync) {
  int fd = open(file.c_str(), O_CREAT | O_WRONLY, 0644);
  if (fd < 0) Fail("open " + file);
  const std::string block(kWriteBytes, 'w');
  const auto start = Clock::now();
  for (int i = 0; i < loops; ++i) {
    const off_t at = static_cast<off_t>((static_cast<size_t>(i) * kWriteBytes) % kFileBytes);
    if (pwrite(fd, block.data(), block.size(), at) != static_cast<ssize_t>(block.size())) {
      Fail("write " + file);
    }
    if (sync && fsync(fd) != 0) Fail("fsync " + file);
  }
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  close(fd);
  return us / loops;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"what an fsync of a directory and of a file costs on each mount"};
  std::vector<std::string> dirs;
  int loops = 200;
  int rounds = 3;
  app.add_option("--dir", dirs, "a directory on a mount to measure (repeat for several)")
      ->required();
  app.add_option("--loops", loops, "loops per measurement")->check(CLI::Range(1, 1000000));
  app.add_option("--rounds", rounds, "rounds, alternating the directories")
      ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> work;
  for (const std::string& d : dirs) {
    work.push_back(d + "/sync-cost-" + std::to_string(getpid()));
    std::error_code ec;
    std::filesystem::create_directories(work.back(), ec);
    if (ec) {
      std::fprintf(stderr, "sync_cost_bench: mkdir %s: %s\n", work.back().c_str(),
                   ec.message().c_str());
      return 1;
    }
  }
  std::vector<Costs> sums(dirs.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t d = 0; d < dirs.size(); ++d) {
      sums[d].rename_us += RenameLoop(work[d], loops, false, r);
      sums[d].rename_sync_us += RenameLoop(work[d], loops, true, r);
      sums[d].write_us += WriteLoop(work[d] + "/file", loops, false);
      sums[d].write_sync_us += WriteLoop(work[d] + "/file", loops, true);
    }
  }
  std::printf("%-40s %14s %14s %14s %14s\n", "directory (us per loop)", "create+rename",
              "+fsync(dir)", "write 4KiB", "+fsync(file)");
  for (size_t d = 0; d < dirs.size(); ++d) {
    std::printf("%-40s %14.1f %14.1f %14.1f %14.1f\n", dirs[d].c_str(), sums[d].rename_us / rounds,
                sums[d].rename_sync_us / rounds, sums[d].write_us / rounds,
                sums[d].write_sync_us / rounds);
    std::error_code ec;
    std::filesystem::remove_all(work[d], ec);
  }
  return 0;
}
