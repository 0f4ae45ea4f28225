// ninep_latency_bench: a 9P2000.L server's own time for the messages the
// Linux kernel client (6.1, cache=mmap) sends per operation of the first six
// workloads of workloads_bench, without a VM: one connection on loopback,
// one message at a time, each timed alone. The per-operation sequences are
// the ones bench/ninep_vm_bench.sh recorded from the guest kernel's trace
// events: a walk and a getattr per directory on the path (three levels
// here, as on the VM mount), then the operation, then a clunk of every fid.
// Works against any 9P2000.L server (pailfs, diod), so the same run
// compares them.
//
//   ninep_latency_bench --port P [--aname PATH] [--ops N] [--server-pid PID]
//
// Prints per workload the mean time of one operation (the sum of its
// messages' round trips), per message type the mean round trip, and with
// --server-pid the server's CPU time per operation (user + system, all
// threads, over the loop: /proc/PID/stat).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "../tests/ninep/p9_client.h"

namespace {

using pail::ninep::test::P9Attr;
using pail::ninep::test::P9Client;
using Clock = std::chrono::steady_clock;

// Linux open(2) bits, which P9_DOTL_* mirror.
constexpr uint32_t kRdonly = 0, kWronly = 1, kCreat = 0100, kTrunc = 01000, kAppend = 02000;
constexpr int kBlock = 4096;
constexpr int kModifyBlocks = 10, kReadBlocks = 100;
constexpr int kDepth = 3;  // directories walked per operation

// Clock ticks of CPU (user + system) the process has used, or -1.
long CpuTicks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // Fields after the ")" closing the command name: state is field 3;
  // utime and stime are fields 14 and 15.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; i++) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

class Runner {
 public:
  Runner(P9Client& c, std::vector<std::string> dirs) : c_(c), dirs_(std::move(dirs)) {}

  // Times one message; exits on an unexpected result.
  void Time(const char* type, int expect, const std::function<int()>& call) {
    Clock::time_point t0 = Clock::now();
    int rc = call();
    double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (rc != expect) {
      std::fprintf(stderr, "ninep_latency_bench: %s returned %d, expected %d\n", type, rc, expect);
      std::exit(1);
    }
    auto& s = stats_[type];
    s.first++;
    s.second += us;
    op_us_ += us;
  }

  // The kernel's path walk: one name per Twalk, each followed by Tgetattr.
  // Returns the fid of the last directory; `fids` collects the new fids.
  uint32_t WalkPath(std::vector<uint32_t>* fids) {
    uint32_t from = 0;
    for (const std::string& d : dirs_) {
      uint32_t fid = next_fid_++;
      Time("walk", 0, [&] { return c_.Walk(from, fid, {d}); });
      P9Attr attr;
      Time("getattr", 0, [&] { return c_.Getattr(fid, &attr); });
      fids->push_back(fid);
      from = fid;
    }
    return from;
  }
  void ClunkAll(const std::vector<uint32_t>& fids) {
    for (uint32_t fid : fids) Time("clunk", 0, [&] { return c_.Clunk(fid); });
  }
  uint32_t NewFid() { return next_fid_++; }

  // open(O_CREAT) of a new file, as the kernel does it: a failed lookup,
  // then a clone of the directory turned into the file by Tlcreate, a walk
  // to the new name and its getattr; with data, one Twrite.
  void CreateFile(const std::string& name, const std::string* data) {
    std::vector<uint32_t> fids;
    uint32_t dir = WalkPath(&fids);
    uint32_t probe = NewFid(), file = NewFid(), named = NewFid();
    Time("walk", ENOENT, [&] { return c_.Walk(dir, probe, {name}); });
    Time("walk", 0, [&] { return c_.Walk(dir, file, {}); });
    Time("lcreate", 0, [&] { return c_.Lcreate(file, name, kWronly | kCreat | kTrunc, 0644); });
    Time("walk", 0, [&] { return c_.Walk(dir, named, {name}); });
    P9Attr attr;
    Time("getattr", 0, [&] { return c_.Getattr(named, &attr); });
    if (data) Time("write", 0, [&] { return c_.Write(file, 0, *data); });
    ClunkAll({file, named});
    ClunkAll(fids);
  }
  // open() of an existing file and one read or write at `offset`.
  void OpenAndTransfer(const std::string& name, uint32_t flags, uint64_t offset,
                       const std::string* data) {
    std::vector<uint32_t> fids;
    uint32_t dir = WalkPath(&fids);
    uint32_t named = NewFid(), file = NewFid();
    P9Attr attr;
    Time("walk", 0, [&] { return c_.Walk(dir, named, {name}); });
    Time("getattr", 0, [&] { return c_.Getattr(named, &attr); });
    Time("walk", 0, [&] { return c_.Walk(named, file, {}); });
    Time("lopen", 0, [&] { return c_.Lopen(file, flags); });
    if (data) {
      Time("write", 0, [&] { return c_.Write(file, offset, *data); });
    } else {
      std::string got;
      Time("read", 0, [&] { return c_.Read(file, offset, kBlock, &got); });
    }
    ClunkAll({file, named});
    ClunkAll(fids);
  }
  void MakeDir(const std::string& name) {
    std::vector<uint32_t> fids;
    uint32_t dir = WalkPath(&fids);
    uint32_t probe = NewFid(), named = NewFid();
    Time("walk", ENOENT, [&] { return c_.Walk(dir, probe, {name}); });
    Time("mkdir", 0, [&] { return c_.Mkdir(dir, name, 0755); });
    Time("walk", 0, [&] { return c_.Walk(dir, named, {name}); });
    ClunkAll({named});
    ClunkAll(fids);
  }

  void Reset() {
    stats_.clear();
    op_us_ = 0;
  }
  double op_us() const { return op_us_; }
  const std::map<std::string, std::pair<long, double>>& stats() const { return stats_; }

 private:
  P9Client& c_;
  const std::vector<std::string> dirs_;
  uint32_t next_fid_ = 100;
  std::map<std::string, std::pair<long, double>> stats_;  // type -> count, total us
  double op_us_ = 0;
};

// Untimed setup: a file of `bytes` in the workload directory.
void MustCreate(P9Client& c, const std::vector<std::string>& dirs, const std::string& name,
                const std::string& content) {
  uint32_t dir = 90, file = 91;
  if (c.Walk(0, dir, dirs) != 0 || c.Walk(dir, file, {}) != 0 ||
      c.Lcreate(file, name, kWronly | kCreat | kTrunc, 0644) != 0) {
    std::fprintf(stderr, "ninep_latency_bench: setup: cannot create %s\n", name.c_str());
    std::exit(1);
  }
  for (size_t off = 0; off < content.size(); off += 32768) {
    if (c.Write(file, off, content.substr(off, 32768)) != 0) std::exit(1);
  }
  c.Clunk(file);
  c.Clunk(dir);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"9P server time for the kernel client's per-operation messages"};
  int port = 0, ops = 1000, server_pid = 0;
  std::string aname;
  app.add_option("--port", port, "server TCP port on 127.0.0.1")->required();
  app.add_option("--aname", aname, "attach name (diod: the exported directory)");
  app.add_option("--ops", ops, "operations per workload");
  app.add_option("--server-pid", server_pid, "server process, for its CPU time");
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<P9Client> c = P9Client::ConnectTcp(static_cast<uint16_t>(port));
  if (!c || c->Start(0, aname) != 0) {
    std::fprintf(stderr, "ninep_latency_bench: cannot connect/attach to 127.0.0.1:%d\n", port);
    return 1;
  }
  // Three directory levels, as /mnt/X/bench/bench.PID/WORKLOAD on the VM mount.
  std::string top = "lat." + std::to_string(getpid());
  if (c->Mkdir(0, top, 0755) != 0 || c->Walk(0, 1, {top}) != 0 || c->Mkdir(1, "run", 0755) != 0) {
    std::fprintf(stderr, "ninep_latency_bench: cannot make %s\n", top.c_str());
    return 1;
  }
  c->Clunk(1);
  long hz = sysconf(_SC_CLK_TCK);
  std::string block(kBlock, 'b');
  std::printf("127.0.0.1:%d aname '%s', %d ops per workload, one message at a time\n", port,
              aname.c_str(), ops);
  std::printf("%-20s %9s %9s %12s  %s\n", "workload", "msgs/op", "us/op", "cpu_us/op",
              "mean us per message");
  const char* names[] = {"sequential-writes", "data-modifications", "single-file-append",
                         "empty-files",       "empty-dirs",         "random-reads"};
  for (const char* w : names) {
    std::vector<std::string> dirs = {top, "run", w};
    {
      uint32_t run = 92;
      if (c->Walk(0, run, {top, "run"}) != 0 || c->Mkdir(run, w, 0755) != 0) return 1;
      c->Clunk(run);
    }
    std::string wl(w);
    if (wl == "data-modifications") MustCreate(*c, dirs, "data.dat", std::string(kBlock * kModifyBlocks, 'd'));
    if (wl == "single-file-append") MustCreate(*c, dirs, "append.dat", "");
    if (wl == "random-reads") MustCreate(*c, dirs, "data.dat", std::string(kBlock * kReadBlocks, 'r'));
    Runner r(*c, dirs);
    long cpu0 = server_pid ? CpuTicks(server_pid) : -1;
    uint64_t seed = 42;
    for (int i = 0; i < ops; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      char name[32];
      if (wl == "sequential-writes" || wl == "empty-files") {
        std::snprintf(name, sizeof name, "file_%06d.dat", i);
        r.CreateFile(name, wl == "sequential-writes" ? &block : nullptr);
      } else if (wl == "data-modifications") {
        r.OpenAndTransfer("data.dat", kWronly, (seed >> 33) % (kBlock * (kModifyBlocks - 1)), &block);
      } else if (wl == "single-file-append") {
        r.OpenAndTransfer("append.dat", kWronly | kAppend, uint64_t(i) * kBlock, &block);
      } else if (wl == "empty-dirs") {
        std::snprintf(name, sizeof name, "dir_%06d", i);
        r.MakeDir(name);
      } else {
        r.OpenAndTransfer("data.dat", kRdonly, (seed >> 33) % (kBlock * (kReadBlocks - 1)), nullptr);
      }
    }
    long cpu1 = server_pid ? CpuTicks(server_pid) : -1;
    long msgs = 0;
    std::string per;
    for (const auto& [type, s] : r.stats()) {
      msgs += s.first;
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s=%.0f", type.c_str(), s.second / s.first);
      per += buf;
    }
    double cpu_us = cpu0 >= 0 && cpu1 >= 0 ? (cpu1 - cpu0) * 1e6 / hz / ops : -1;
    std::printf("%-20s %9.1f %9.0f %12.0f %s\n", w, double(msgs) / ops, r.op_us() / ops, cpu_us,
                per.c_str());
    std::fflush(stdout);
  }
  return 0;
}
