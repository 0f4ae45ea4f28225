// nfs_workloads_bench: the ten workloads of workloads_bench, run through
// libnfs's synchronous API by several NFSv3 clients at once, against any
// NFSv3 server (pailfs, nfs-ganesha), so the same run compares them.
//
//   nfs_workloads_bench --port P [--host H] [--mount-port M] [--export PATH]
//                       [--clients N] [--ops N] [--size BYTES] [--only name[,name]]
//                       [--around CMD]
//
// Each client is an nfs_context of its own (its own TCP connection, MOUNT
// of --export) on a thread of its own. For each workload, every client
// makes a directory of its own under a fresh work directory, does the
// workload's untimed setup there, and waits until all have; then they run
// N operations each at once, timing each one alone. ops/s is the aggregate:
// all successful operations over the time from that common start until the
// last client has finished. Latencies (mean, p50, p99) are over every
// client's operations. The work directory is removed afterwards (untimed).
// With --around CMD, `CMD start WORKLOAD` runs (through the shell) once the
// setups are done, right before the timed part, and `CMD end WORKLOAD`
// right after it, outside the timing; e.g. to read the server's CPU time.
//
// The operations are those of workloads_bench, in libnfs's calls: open/
// creat/write/pwrite/pread/close, mkdir, rename, unlink, stat, and
// opendir/readdir + lstat for the traversal. Paths are resolved by libnfs
// from the export root on every call (LOOKUP per component), as a client
// without a name cache would. libnfs writes UNSTABLE and sends COMMIT when
// a file written through it is closed, so data is stable on the server
// when an operation returns; there is no final sync() step as in
// workloads_bench. libnfs's directory cache is off, so every traversal
// reads the directories from the server.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
extern "C" {
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw-nfs.h>
}

#include "workloads_shape.h"

namespace {

using Clock = std::chrono::steady_clock;
using workloads::Name6;

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  int mount_port = 0;  // 0: the NFS port
  std::string export_path = "/";
  int clients = 8;
  int ops = 1000;
  size_t size = 4096;
  std::set<std::string> only;
  std::string around;
};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "nfs_workloads_bench: %s\n", what.c_str());
  std::exit(1);
}

// One client: a mounted nfs_context. Its calls fail with a negative errno
// and leave a message in error().
class Client {
 public:
  explicit Client(const Options& o) : nfs_(nfs_init_context()) {
    if (nfs_ == nullptr) Fail("nfs_init_context failed");
    std::string url = "nfs://" + o.host + o.export_path + "?version=3&auto-traverse-mounts=0" +
                      "&nfsport=" + std::to_string(o.port) +
                      "&mountport=" + std::to_string(o.mount_port ? o.mount_port : o.port);
    nfs_url* u = nfs_parse_url_dir(nfs_, url.c_str());
    if (u == nullptr) Fail("bad url " + url + ": " + nfs_get_error(nfs_));
    int rc = nfs_mount(nfs_, u->server, u->path);
    nfs_destroy_url(u);
    if (rc != 0) Fail("mount " + url + ": " + nfs_get_error(nfs_));
    nfs_set_dircache(nfs_, 0);
  }
  ~Client() { nfs_destroy_context(nfs_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  nfs_context* get() { return nfs_; }
  std::string error() { return nfs_get_error(nfs_); }

  // Returns 0 or a negative errno.
  int WriteFile(const std::string& path, const std::string& content) {
    nfsfh* fh = nullptr;
    int rc = nfs_create(nfs_, path.c_str(), O_WRONLY | O_TRUNC, 0666, &fh);
    if (rc != 0) return rc;
    rc = WriteAll(fh, 0, content, false);
    int closed = nfs_close(nfs_, fh);
    return rc != 0 ? rc : closed;
  }

  // Writes all of `data` at `offset` (or at the end for an O_APPEND handle).
  int WriteAll(nfsfh* fh, uint64_t offset, const std::string& data, bool append) {
    size_t done = 0;
    while (done < data.size()) {
      int n = append ? nfs_write(nfs_, fh, data.size() - done, data.data() + done)
                     : nfs_pwrite(nfs_, fh, offset + done, data.size() - done, data.data() + done);
      if (n < 0) return n;
      if (n == 0) return -EIO;
      done += static_cast<size_t>(n);
    }
    return 0;
  }

  int ReadExact(nfsfh* fh, uint64_t offset, std::string* buf) {
    size_t done = 0;
    while (done < buf->size()) {
      int n = nfs_pread(nfs_, fh, offset + done, buf->size() - done, buf->data() + done);
      if (n < 0) return n;
      if (n == 0) return -EIO;  // short file
      done += static_cast<size_t>(n);
    }
    return 0;
  }

  // A listing of `dir` with an lstat of every entry, recursively; adds the
  // entries to *entries. 0 or a negative errno.
  int Walk(const std::string& dir, size_t* entries) {
    nfsdir* d = nullptr;
    int rc = nfs_opendir(nfs_, dir.c_str(), &d);
    if (rc != 0) return rc;
    std::vector<std::string> subdirs;
    while (nfsdirent* e = nfs_readdir(nfs_, d)) {
      if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0) continue;
      std::string path = dir + "/" + e->name;
      nfs_stat_64 st;
      rc = nfs_lstat64(nfs_, path.c_str(), &st);
      if (rc != 0) break;
      ++*entries;
      if (S_ISDIR(st.nfs_mode)) subdirs.push_back(path);
    }
    nfs_closedir(nfs_, d);
    if (rc != 0) return rc;
    for (const std::string& sub : subdirs) {
      rc = Walk(sub, entries);
      if (rc != 0) return rc;
    }
    return 0;
  }

  // Removes `path` and everything below it; best effort.
  void RemoveTree(const std::string& path) {
    nfsdir* d = nullptr;
    if (nfs_opendir(nfs_, path.c_str(), &d) != 0) {
      nfs_unlink(nfs_, path.c_str());
      return;
    }
    std::vector<std::pair<std::string, bool>> children;
    while (nfsdirent* e = nfs_readdir(nfs_, d)) {
      if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0) continue;
      children.emplace_back(path + "/" + e->name, e->type == NF3DIR);
    }
    nfs_closedir(nfs_, d);
    for (const auto& [child, is_dir] : children) {
      if (is_dir) {
        RemoveTree(child);
      } else {
        nfs_unlink(nfs_, child.c_str());
      }
    }
    nfs_rmdir(nfs_, path.c_str());
  }

 private:
  nfs_context* nfs_;
};

// A workload's timed operation for op index i: 0 or a negative errno.
using Op = std::function<int(int)>;

struct Workload {
  const char* name;
  // Untimed setup in `dir` through `c`; returns the timed operation, or
  // sets *error and returns nullptr.
  std::function<Op(Client& c, const std::string& dir, const Options& o, std::string* error)> prepare;
};

// Setup steps fail the setup with a message.
bool SetupOk(Client& c, int rc, const std::string& what, std::string* error) {
  if (rc == 0) return true;
  *error = "setup: " + what + ": " + c.error();
  return false;
}

bool BuildTree(Client& c, const std::string& dir, int depth, std::string* error) {
  for (int j = 0; j < workloads::kFilesPerDir; ++j) {
    std::string path = dir + "/" + workloads::TreeFileName(j);
    if (!SetupOk(c, c.WriteFile(path, workloads::TreeFileContent(j, depth)), path, error)) return false;
  }
  if (depth == workloads::kTreeDepth) return true;
  for (int i = 0; i < workloads::kTreeFanout; ++i) {
    std::string sub = dir + "/" + workloads::TreeDirName(depth, i);
    if (!SetupOk(c, nfs_mkdir2(c.get(), sub.c_str(), 0777), "mkdir " + sub, error)) return false;
    if (!BuildTree(c, sub, depth + 1, error)) return false;
  }
  return true;
}

std::vector<Workload> AllWorkloads() {
  std::vector<Workload> all = {
      {"sequential-writes",
       [](Client& c, const std::string& dir, const Options& o, std::string*) -> Op {
         auto data = std::make_shared<std::string>(workloads::SequentialData(o.size));
         return [&c, dir, data](int i) { return c.WriteFile(dir + "/" + Name6("file_", i, ".dat"), *data); };
       }},
      {"data-modifications",
       [](Client& c, const std::string& dir, const Options& o, std::string* error) -> Op {
         std::string path = dir + "/data.dat";
         if (!SetupOk(c, c.WriteFile(path, std::string(o.size * workloads::kModifyFileBlocks, 'd')), path,
                      error)) {
           return nullptr;
         }
         auto rng = std::make_shared<std::mt19937_64>(workloads::kRandomSeed);
         auto patch = std::make_shared<std::string>(workloads::ModifyPatch(*rng, o.size));
         size_t span = o.size * (workloads::kModifyFileBlocks - 1);
         return [&c, path, rng, patch, span](int) {
           uint64_t offset = (*rng)() % span;
           nfsfh* fh = nullptr;
           int rc = nfs_open(c.get(), path.c_str(), O_WRONLY, &fh);
           if (rc != 0) return rc;
           rc = c.WriteAll(fh, offset, *patch, false);
           int closed = nfs_close(c.get(), fh);
           return rc != 0 ? rc : closed;
         };
       }},
      {"single-file-append",
       [](Client& c, const std::string& dir, const Options& o, std::string* error) -> Op {
         std::string path = dir + "/append.dat";
         if (!SetupOk(c, c.WriteFile(path, ""), path, error)) return nullptr;
         auto data = std::make_shared<std::string>(o.size, 'a');
         return [&c, path, data](int) {
           nfsfh* fh = nullptr;
           int rc = nfs_open(c.get(), path.c_str(), O_WRONLY | O_APPEND, &fh);
           if (rc != 0) return rc;
           rc = c.WriteAll(fh, 0, *data, true);
           int closed = nfs_close(c.get(), fh);
           return rc != 0 ? rc : closed;
         };
       }},
      {"empty-files",
       [](Client& c, const std::string& dir, const Options&, std::string*) -> Op {
         return [&c, dir](int i) {
           nfsfh* fh = nullptr;
           std::string path = dir + "/" + Name6("empty_", i, ".txt");
           int rc = nfs_create(c.get(), path.c_str(), O_WRONLY | O_TRUNC, 0666, &fh);
           return rc != 0 ? rc : nfs_close(c.get(), fh);
         };
       }},
      {"empty-dirs",
       [](Client& c, const std::string& dir, const Options&, std::string*) -> Op {
         return [&c, dir](int i) { return nfs_mkdir2(c.get(), (dir + "/" + Name6("dir_", i, "")).c_str(), 0777); };
       }},
      {"random-reads",
       [](Client& c, const std::string& dir, const Options& o, std::string* error) -> Op {
         std::string path = dir + "/data.dat";
         if (!SetupOk(c, c.WriteFile(path, workloads::RandomReadFile(o.size)), path, error)) return nullptr;
         auto rng = std::make_shared<std::mt19937_64>(workloads::kRandomSeed);
         auto buf = std::make_shared<std::string>(o.size, '\0');
         size_t span = o.size * (workloads::kReadFileBlocks - 1);
         return [&c, path, rng, buf, span](int) {
           uint64_t offset = (*rng)() % span;
           nfsfh* fh = nullptr;
           int rc = nfs_open(c.get(), path.c_str(), O_RDONLY, &fh);
           if (rc != 0) return rc;
           rc = c.ReadExact(fh, offset, buf.get());
           int closed = nfs_close(c.get(), fh);
           return rc != 0 ? rc : closed;
         };
       }},
      {"file-moves",
       [](Client& c, const std::string& dir, const Options& o, std::string* error) -> Op {
         if (!SetupOk(c, nfs_mkdir2(c.get(), (dir + "/src").c_str(), 0777), "mkdir src", error) ||
             !SetupOk(c, nfs_mkdir2(c.get(), (dir + "/dst").c_str(), 0777), "mkdir dst", error)) {
           return nullptr;
         }
         std::string data(o.size, 'm');
         for (int i = 0; i < o.ops; ++i) {
           std::string path = dir + "/src/" + Name6("file_", i, ".dat");
           if (!SetupOk(c, c.WriteFile(path, data), path, error)) return nullptr;
         }
         return [&c, dir](int i) {
           std::string name = Name6("file_", i, ".dat");
           return nfs_rename(c.get(), (dir + "/src/" + name).c_str(), (dir + "/dst/" + name).c_str());
         };
       }},
      {"file-deletion",
       [](Client& c, const std::string& dir, const Options& o, std::string* error) -> Op {
         std::string data(o.size, 'x');
         for (int i = 0; i < o.ops; ++i) {
           std::string path = dir + "/" + Name6("file_", i, ".dat");
           if (!SetupOk(c, c.WriteFile(path, data), path, error)) return nullptr;
         }
         return [&c, dir](int i) { return nfs_unlink(c.get(), (dir + "/" + Name6("file_", i, ".dat")).c_str()); };
       }},
      {"directory-traversal",
       [](Client& c, const std::string& dir, const Options&, std::string* error) -> Op {
         if (!BuildTree(c, dir, 0, error)) return nullptr;
         return [&c, dir](int) {
           size_t entries = 0;
           return c.Walk(dir, &entries);
         };
       }},
      {"metadata-ops",
       [](Client& c, const std::string& dir, const Options&, std::string* error) -> Op {
         auto paths = std::make_shared<std::vector<std::string>>();
         for (int i = 0; i < workloads::kMetadataFiles; ++i) {
           paths->push_back(dir + "/" + workloads::MetadataFileName(i));
           std::string content(workloads::MetadataFileSize(i), 'z');
           if (!SetupOk(c, c.WriteFile(paths->back(), content), paths->back(), error)) return nullptr;
         }
         return [&c, paths](int i) {
           nfs_stat_64 st;
           int rc = nfs_stat64(c.get(), (*paths)[static_cast<size_t>(i) % paths->size()].c_str(), &st);
           if (rc != 0) return rc;
           // Read the fields the reference reads: length, type, mtime.
           volatile bool used = st.nfs_size > 0 && S_ISREG(st.nfs_mode) && st.nfs_mtime > 0;
           (void)used;
           return 0;
         };
       }},
  };
  // The same workloads as workloads_bench, in its order.
  if (all.size() != std::size(workloads::kNames)) Fail("workload list out of step with workloads_shape.h");
  for (size_t i = 0; i < all.size(); ++i) {
    if (std::strcmp(all[i].name, workloads::kNames[i]) != 0) Fail("workload order differs from workloads_shape.h");
  }
  return all;
}

struct ClientResult {
  int ok_ops = 0;
  int failed_ops = 0;
  std::string first_error;  // of the first failed operation, or of the setup
  bool setup_failed = false;
  std::vector<double> latencies_us;
};

struct Result {
  int ok_ops = 0;
  int failed_ops = 0;
  std::string first_error;
  double seconds = 0;
  std::vector<double> latencies_us;
};

// Runs `o.around PHASE WORKLOAD` when --around was given.
void RunAround(const Options& o, const char* phase, const char* workload) {
  if (o.around.empty()) return;
  std::fflush(stdout);
  std::string cmd = o.around + " " + phase + " " + workload;
  int rc = std::system(cmd.c_str());
  if (rc != 0) Fail("--around command `" + cmd + "` failed (" + std::to_string(rc) + ")");
}

// One workload by every client at once, each in dir/cN.
Result RunWorkload(const Workload& w, std::vector<std::unique_ptr<Client>>& clients, const std::string& dir,
                   const Options& o) {
  const size_t n = clients.size();
  std::vector<ClientResult> results(n);
  // Every client and this thread meet at `ready` once the setups are done,
  // and at `go` when the clock starts.
  std::barrier ready(static_cast<std::ptrdiff_t>(n + 1));
  std::barrier go(static_cast<std::ptrdiff_t>(n + 1));
  std::vector<std::thread> threads;
  for (size_t k = 0; k < n; ++k) {
    threads.emplace_back([&, k] {
      Client& c = *clients[k];
      ClientResult& r = results[k];
      std::string mine = dir + "/c" + std::to_string(k);
      Op op;
      if (nfs_mkdir2(c.get(), mine.c_str(), 0777) != 0) {
        r.first_error = "setup: mkdir " + mine + ": " + c.error();
      } else {
        op = w.prepare(c, mine, o, &r.first_error);
      }
      r.setup_failed = !op;
      ready.arrive_and_wait();
      go.arrive_and_wait();
      if (r.setup_failed) return;
      r.latencies_us.reserve(static_cast<size_t>(o.ops));
      for (int i = 0; i < o.ops; ++i) {
        Clock::time_point t0 = Clock::now();
        int rc = op(i);
        Clock::time_point t1 = Clock::now();
        if (rc == 0) {
          ++r.ok_ops;
          r.latencies_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        } else {
          ++r.failed_ops;
          if (r.first_error.empty()) r.first_error = c.error();
        }
      }
    });
  }
  ready.arrive_and_wait();
  RunAround(o, "start", w.name);
  go.arrive_and_wait();
  Clock::time_point start = Clock::now();
  for (std::thread& t : threads) t.join();
  Result total;
  total.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  RunAround(o, "end", w.name);
  for (ClientResult& r : results) {
    if (r.setup_failed) Fail(std::string(w.name) + ": " + r.first_error);
    total.ok_ops += r.ok_ops;
    total.failed_ops += r.failed_ops;
    if (total.first_error.empty()) total.first_error = r.first_error;
    total.latencies_us.insert(total.latencies_us.end(), r.latencies_us.begin(), r.latencies_us.end());
  }
  return total;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  CLI::App app("nfs_workloads_bench: the ten small-file workloads through N libnfs clients at once");
  app.add_option("--host", o.host, "the NFS server's address");
  app.add_option("--port", o.port, "its NFS port")->required()->check(CLI::Range(1, 65535));
  app.add_option("--mount-port", o.mount_port, "its MOUNT port (default: the NFS port)")
      ->check(CLI::Range(1, 65535));
  app.add_option("--export", o.export_path, "the export to mount")
      ->check([](const std::string& path) { return path.starts_with('/') ? "" : "must start with /"; });
  app.add_option("--clients", o.clients, "clients at once, each its own connection")
      ->check(CLI::Range(1, 256));
  app.add_option("--ops", o.ops, "timed operations per client and workload")->check(CLI::Range(1, 100000000));
  app.add_option("--size", o.size, "bytes per file or write")->check(CLI::Range(1, 64 << 20));
  workloads::ParseCommandLine(app, argc, argv, &o.around, &o.only);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  std::vector<std::unique_ptr<Client>> clients;
  for (int k = 0; k < o.clients; ++k) clients.push_back(std::make_unique<Client>(o));
  // Paths are relative to the export root, as libnfs takes them.
  std::string work = "/nfs_workloads_bench." + std::to_string(getpid());
  if (nfs_mkdir2(clients[0]->get(), work.c_str(), 0777) != 0) Fail("mkdir " + work + ": " + clients[0]->error());
  std::printf("%s:%d%s, %d ops of %zu bytes per workload and client, %d clients at once (aggregate ops/s)\n",
              o.host.c_str(), o.port, o.export_path.c_str(), o.ops, o.size, o.clients);
  std::printf("%-20s %8s %10s %10s %10s %10s %7s\n", "workload", "ops", "ops/s", "mean_us", "p50_us", "p99_us",
              "errors");
  int total_failed = 0;
  for (const Workload& w : AllWorkloads()) {
    if (!o.only.empty() && !o.only.count(w.name)) continue;
    std::string dir = work + "/" + w.name;
    if (nfs_mkdir2(clients[0]->get(), dir.c_str(), 0777) != 0) Fail("mkdir " + dir + ": " + clients[0]->error());
    Result r = RunWorkload(w, clients, dir, o);
    std::vector<double>& lat = r.latencies_us;
    std::sort(lat.begin(), lat.end());
    double sum = 0;
    for (double v : lat) sum += v;
    double mean = lat.empty() ? 0 : sum / static_cast<double>(lat.size());
    std::printf("%-20s %8d %10.1f %10.1f %10.1f %10.1f %7d%s%s\n", w.name, r.ok_ops,
                r.seconds > 0 ? r.ok_ops / r.seconds : 0.0, mean, workloads::Percentile(lat, 0.50),
                workloads::Percentile(lat, 0.99), r.failed_ops, r.first_error.empty() ? "" : "  first error: ",
                r.first_error.c_str());
    std::fflush(stdout);
    total_failed += r.failed_ops;
    clients[0]->RemoveTree(dir);
  }
  clients[0]->RemoveTree(work);
  return total_failed == 0 ? 0 : 1;
}
