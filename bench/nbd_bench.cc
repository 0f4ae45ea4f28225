// nbd_bench: block I/O through libnbd against pailfs's NBD server (file://
// bucket, and S3 on RGW when S3_ENDPOINT etc. are set) and, as the
// reference, nbdkit's file plugin on a local-disk file, in one run with the
// same client: the four workloads of block_workloads.h (FLUSH closing the
// writes), all at queue depth --depth (16). pailfs runs with its default durability:
// writes are acknowledged from memory, FLUSH waits for the bucket. The
// export file is made through pailfs's NFS server (libnfs), as a user would
// with `truncate` on a mount. Prints numbers; never fails on them.
//
// Beside each pailfs target it prints what the machine allows whatever the
// server does (`ceiling` lines): the bucket's own write and read rate for
// whole 16 MiB objects, four in flight (what the uploader sends); one core
// encrypting and decrypting 64 KiB pages (what every byte to or from the
// bucket costs; a cold 4 KiB read opens a whole page); and writing memory
// the process touches for the first time against memory it has touched
// before (a fresh server's buffers). nbdkit reads and writes the host's
// page cache and pays none of these.
//
//   nbd_bench --pailfs build/pailfs [--targets file,s3,nbdkit] [--dir /var/tmp]
#include <arpa/inet.h>
#include <fcntl.h>
#include <libnbd.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include <nfsc/libnfs.h>
}
#include <sodium.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "block_workloads.h"
#include "crypto/encrypted_store.h"
#include "objstore/open_store.h"
#include "server/heap.h"

namespace {

using block_workloads::kMiB;

struct Params {
  std::string pailfs;
  std::string dir = "/var/tmp";
  std::string targets = "file,s3,nbdkit";
  uint64_t size_mib = 1024;
  uint64_t seq_mib = 256;
  uint64_t random_ops = 16384;
  unsigned depth = 16;
};

uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

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

// A child process with its output in `log`, stopped with SIGTERM.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::string& log) {
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // no server outlives an interrupted bench
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
  }
  ~Child() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status;
    waitpid(pid_, &status, 0);
  }
  bool WaitForPort(uint16_t port) {
    for (int i = 0; i < 3000; i++) {
      if (CanConnect(port)) return true;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
};

struct Result {
  double seconds = 0;
  uint64_t bytes = 0;
  uint64_t ops = 0;
  uint64_t errors = 0;
  bool flushed = false;      // a write run: it ends with a FLUSH
  double flush_seconds = 0;  // of `seconds`, that FLUSH
};

// Runs `ops` requests of `block` bytes at queue depth `depth`; offset(i)
// places request i. A FLUSH at the end (writes) is part of the time.
Result Run(nbd_handle* h, bool write, uint64_t ops, size_t block, unsigned depth,
           const std::function<uint64_t(uint64_t)>& offset, const block_workloads::Workloads& w) {
  Result r;
  std::vector<std::string> buffers(depth, std::string(block, '\0'));
  uint64_t errors = 0;
  nbd_completion_callback done{};
  done.user_data = &errors;
  done.callback = [](void* user, int* error) -> int {
    if (*error) ++*static_cast<uint64_t*>(user);
    return 1;  // retire the command
  };
  auto start = std::chrono::steady_clock::now();
  uint64_t issued = 0;
  while (issued < ops || nbd_aio_in_flight(h) > 0) {
    while (issued < ops && nbd_aio_in_flight(h) < static_cast<int>(depth)) {
      uint64_t at = offset(issued);
      int64_t cookie;
      if (write) {
        cookie = nbd_aio_pwrite(h, w.WriteData(issued, block).data(), block, at, done, 0);
      } else {
        cookie = nbd_aio_pread(h, buffers[issued % depth].data(), block, at, done, 0);
      }
      if (cookie < 0) {
        std::fprintf(stderr, "request failed: %s\n", nbd_get_error());
        errors++;
      }
      issued++;
    }
    if (nbd_poll(h, -1) < 0) {
      std::fprintf(stderr, "poll: %s\n", nbd_get_error());
      break;
    }
  }
  const auto flush_start = std::chrono::steady_clock::now();
  if (write && nbd_flush(h, 0) != 0) errors++;
  r.flushed = write;
  r.flush_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - flush_start).count();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.ops = ops;
  r.bytes = ops * block;
  r.errors = errors;
  return r;
}

void Report(const std::string& target, const std::string& workload, const Result& r) {
  char flush[32] = "";
  if (r.flushed) std::snprintf(flush, sizeof(flush), " (flush %.2f s)", r.flush_seconds);
  std::printf("%-8s %-11s %9.0f IOPS %9.1f MiB/s %7.2f s%s%s\n", target.c_str(), workload.c_str(),
              r.ops / r.seconds, r.bytes / r.seconds / kMiB, r.seconds, flush,
              r.errors ? (" ERRORS " + std::to_string(r.errors)).c_str() : "");
  std::fflush(stdout);
}

void Workloads(const std::string& target, uint16_t port, const std::string& export_name,
               const Params& p) {
  nbd_handle* h = nbd_create();
  nbd_set_export_name(h, export_name.c_str());
  if (nbd_connect_tcp(h, "127.0.0.1", std::to_string(port).c_str()) != 0) {
    std::fprintf(stderr, "%s: connect: %s\n", target.c_str(), nbd_get_error());
    nbd_close(h);
    return;
  }
  const block_workloads::Workloads w = block_workloads::Make(p.seq_mib, p.random_ops);
  auto seq = block_workloads::Workloads::SeqOffset;
  Report(target, "seq-write", Run(h, true, p.seq_mib, kMiB, p.depth, seq, w));
  Report(target, "seq-read", Run(h, false, p.seq_mib, kMiB, p.depth, seq, w));
  Report(target, "rand-write", Run(h, true, p.random_ops, block_workloads::kRandomBlock, p.depth,
                                   [&](uint64_t i) { return w.write_offsets[i]; }, w));
  Report(target, "rand-read", Run(h, false, p.random_ops, block_workloads::kRandomBlock, p.depth,
                                  [&](uint64_t i) { return w.read_offsets[i]; }, w));
  nbd_shutdown(h, 0);
  nbd_close(h);
}

bool MakeExportOverNfs(uint16_t nfs_port, const std::string& name, uint64_t size) {
  nfs_context* nfs = nfs_init_context();
  std::string url = "nfs://127.0.0.1/?version=3&nfsport=" + std::to_string(nfs_port) +
                    "&mountport=" + std::to_string(nfs_port);
  nfs_url* u = nfs_parse_url_dir(nfs, url.c_str());
  bool ok = u != nullptr && nfs_mount(nfs, u->server, u->path) == 0;
  nfsfh* fh = nullptr;
  std::string path = "/.nbd/" + name;
  ok = ok && nfs_creat(nfs, path.c_str(), 0600, &fh) == 0;
  ok = ok && nfs_ftruncate(nfs, fh, size) == 0;
  if (!ok) std::fprintf(stderr, "making the export over NFS: %s\n", nfs_get_error(nfs));
  if (fh) nfs_close(nfs, fh);
  if (u) nfs_destroy_url(u);
  nfs_destroy_context(nfs);
  return ok;
}

// Every object under an S3 bucket URL's prefix goes, so that runs do not
// fill the store (RGW on loopback has a few GiB).
void DeleteBucket(const std::string& url, const pail::AwsOptions& aws) {
  pail::StoreOptions options;
  options.url = url;
  options.aws = aws;
  auto store = pail::OpenBackend(options);
  pail::Status s = store.status();
  if (store.ok()) {
    auto listed = pail::ListAll(**store, "");
    s = listed.status();
    for (size_t i = 0; listed.ok() && s.ok() && i < listed->size(); ++i) {
      s = (*store)->Delete((*listed)[i].key);
    }
  }
  if (!s.ok()) std::fprintf(stderr, "deleting %s: %s\n", url.c_str(), s.ToString().c_str());
}

// --- ceilings: what the machine allows, whatever the server does.

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Seconds for `threads` threads to run fn(0) .. fn(items - 1), each taking
// the next item; the first error seen is kept in *error.
double TimeParallel(unsigned threads, uint64_t items,
                    const std::function<pail::Status(uint64_t)>& fn, pail::Status* error) {
  std::atomic<uint64_t> next{0};
  std::mutex mu;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (uint64_t i; (i = next.fetch_add(1)) < items;) {
        pail::Status s = fn(i);
        std::lock_guard<std::mutex> lock(mu);
        if (!s.ok() && error->ok()) *error = s;
      }
    });
  }
  for (auto& t : pool) t.join();
  return SecondsSince(start);
}

constexpr uint64_t kObjectMiB = 16;  // pailfs's segment size
constexpr unsigned kObjectsInFlight = 4;  // and its upload parallelism

std::string RandomBytes(uint64_t n) {
  std::mt19937_64 rng(7);
  return block_workloads::RandomBytes(rng, n);
}

// The bucket alone: `mib` MiB written as 16 MiB objects, four at a time,
// then read back the same way. A sequential write that ends in FLUSH can
// go no faster than the first; a cold read no faster than the second.
void BucketCeiling(const std::string& target, const pail::StoreOptions& options, uint64_t mib) {
  auto store = pail::OpenBackend(options);
  if (!store.ok()) {
    std::printf("%-8s ceiling: bucket: %s\n", target.c_str(), store.status().ToString().c_str());
    return;
  }
  const std::string body = RandomBytes(kObjectMiB * kMiB);
  const uint64_t objects = std::max<uint64_t>(1, mib / kObjectMiB);
  auto key = [](uint64_t i) { return "ceiling/" + std::to_string(i); };
  pail::Status error;
  const double put = TimeParallel(kObjectsInFlight, objects, [&](uint64_t i) {
    return (*store)->Put(key(i), body).status();
  }, &error);
  const double get = TimeParallel(kObjectsInFlight, objects, [&](uint64_t i) {
    return (*store)->Get(key(i)).status();
  }, &error);
  for (uint64_t i = 0; i < objects; ++i) (void)(*store)->Delete(key(i));
  const double bytes = static_cast<double>(objects * kObjectMiB * kMiB);
  std::printf("%-8s ceiling: bucket put %.1f MiB/s, get %.1f MiB/s (%llu x 16 MiB, 4 at a time)%s\n",
              target.c_str(), bytes / put / kMiB, bytes / get / kMiB,
              (unsigned long long)objects, error.ok() ? "" : (" " + error.ToString()).c_str());
}

// One core sealing and opening 16 MiB in pages of EncryptedStore's size
// with its cipher, buffers reused: what every byte to or from the bucket
// costs in CPU before anything else is done with it. A cold random read,
// of data in neither memory nor the disk cache, opens a whole page however
// few bytes it wants, so pages/s bounds those reads per core.
void CipherCeiling(const std::string& target) {
  using pail::crypto::kPagePlainBytes;
  if (sodium_init() < 0) return;  // also picks the fastest code for this CPU
  unsigned char key[crypto_aead_xchacha20poly1305_ietf_KEYBYTES];
  unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES];
  unsigned char tag[crypto_aead_xchacha20poly1305_ietf_ABYTES];
  randombytes_buf(key, sizeof(key));
  randombytes_buf(nonce, sizeof(nonce));  // one nonce for all: nothing sealed here is kept
  std::string plain = RandomBytes(kPagePlainBytes), sealed(kPagePlainBytes, '\0');
  auto* in = reinterpret_cast<unsigned char*>(plain.data());
  auto* out = reinterpret_cast<unsigned char*>(sealed.data());
  const uint64_t pages = kObjectMiB * kMiB / kPagePlainBytes;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < pages; ++i) {
    crypto_aead_xchacha20poly1305_ietf_encrypt_detached(out, tag, nullptr, in, kPagePlainBytes,
                                                        nullptr, 0, nullptr, nonce, key);
  }
  const double seal = SecondsSince(start);
  bool ok = true;
  start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < pages; ++i) {
    ok = ok && crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
                   in, nullptr, out, kPagePlainBytes, tag, nullptr, 0, nonce, key) == 0;
  }
  const double open = SecondsSince(start);
  std::printf("%-8s ceiling: one core encrypts %.0f MiB/s, decrypts %.0f MiB/s (%.0f pages/s)%s\n",
              target.c_str(), kObjectMiB / seal, kObjectMiB / open, pages / open,
              ok ? "" : " ERRORS");
}

// Writing `mib` MiB of memory new to the process, then the same memory
// again. In a VM that backs guest pages lazily the first is far slower, and
// a fresh server pays it for every buffer until it has used each once.
void FirstTouchCeiling(const std::string& target, uint64_t mib) {
  const size_t bytes = mib * kMiB;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  auto start = std::chrono::steady_clock::now();
  std::memset(p, 1, bytes);
  const double first = SecondsSince(start);
  start = std::chrono::steady_clock::now();
  std::memset(p, 2, bytes);
  const double again = SecondsSince(start);
  munmap(p, bytes);
  std::printf("%-8s ceiling: memory written first %.0f MiB/s, again %.0f MiB/s (%llu MiB)\n",
              target.c_str(), mib / first, mib / again, (unsigned long long)mib);
}

void BenchPailfs(const std::string& target, const Params& p, const std::string& work) {
  pail::StoreOptions store;
  std::string aws;
  if (target == "file") {
    store.url = "file://" + work + "/bucket";
  } else {
    const char* endpoint = std::getenv("S3_ENDPOINT");
    const char* key = std::getenv("S3_ACCESS_KEY");
    const char* secret = std::getenv("S3_SECRET_KEY");
    if (!endpoint || !key || !secret) {
      std::printf("%-8s skipped: S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY not set\n",
                  target.c_str());
      return;
    }
    const char* region = std::getenv("S3_REGION");
    store.aws = {key, secret, region ? region : "us-east-1", endpoint, true, true};
    std::random_device rd;
    store.url = "s3://pail-test/nbd-bench-" + std::to_string(rd());
    aws = std::string("[aws]\naccess_key_id = \"") + key + "\"\nsecret_access_key = \"" + secret +
          "\"\nregion = \"" + (region ? region : "us-east-1") + "\"\nendpoint = \"" + endpoint +
          "\"\nallow_http = true\npath_style = true\n";
  }
  uint16_t nfs_port = FreePort(), nbd_port = FreePort();
  std::string config = work + "/" + target + ".toml";
  std::ofstream(config) << "[storage]\nurl = \"" << store.url << "\"\nencryption_password = \"bench\"\n"
                        << "[cache]\ndir = \"" << work << "/cache-" << target << "\"\n" << aws
                        << "[servers.nfs]\naddresses = [\"127.0.0.1:" << nfs_port << "\"]\n"
                        // The bench runs as root and makes the export as root.
                        << "squash = \"none\"\n"
                        << "[servers.nbd]\naddresses = [\"127.0.0.1:" << nbd_port << "\"]\n";
  {
    Child server({p.pailfs, "run", "-c", config}, work + "/" + target + ".log");
    if (server.WaitForPort(nbd_port) && MakeExportOverNfs(nfs_port, "bench", p.size_mib * kMiB)) {
      Workloads(target, nbd_port, "bench", p);
    } else {
      std::printf("%-8s failed to start; see %s/%s.log\n", target.c_str(), work.c_str(),
                  target.c_str());
    }
  }
  // The server is gone; the bucket's own rate is measured beside its
  // objects (BucketCeiling deletes what it wrote), then those go too.
  pail::StoreOptions raw = store;
  raw.url += "-raw";
  BucketCeiling(target, raw, p.seq_mib);
  if (target == "file") {
    std::filesystem::remove_all(work + "/bucket-raw");
  } else {
    DeleteBucket(store.url, store.aws);
  }
  CipherCeiling(target);
  FirstTouchCeiling(target, p.seq_mib);
}

void BenchNbdkit(const Params& p, const std::string& work) {
  std::string file = work + "/nbdkit.img";
  std::filesystem::resize_file(
      (std::ofstream(file), std::filesystem::path(file)), p.size_mib * kMiB);
  uint16_t port = FreePort();
  Child server({"nbdkit", "-f", "--exit-with-parent", "-i", "127.0.0.1", "-p",
                std::to_string(port), "file", "file=" + file},
               work + "/nbdkit.log");
  if (!server.WaitForPort(port)) {
    std::printf("nbdkit   failed to start; see %s/nbdkit.log\n", work.c_str());
    return;
  }
  Workloads("nbdkit", port, "", p);
}

}  // namespace

int main(int argc, char** argv) {
  Params p;
  CLI::App app("NBD block I/O through libnbd: pailfs beside nbdkit's file plugin");
  app.add_option("--pailfs", p.pailfs, "the pailfs binary")->required();
  app.add_option("--dir", p.dir, "work directory on local disk (bucket, cache, nbdkit file)");
  app.add_option("--targets", p.targets, "comma list of file, s3, nbdkit");
  app.add_option("--size-mib", p.size_mib, "export size");
  app.add_option("--seq-mib", p.seq_mib, "bytes moved by the sequential runs (and the random range)");
  app.add_option("--random-ops", p.random_ops, "4 KiB requests per random run");
  app.add_option("--depth", p.depth, "requests in flight");
  CLI11_PARSE(app, argc, argv);
  // As in the server: 16 MiB buffers freed are reused, so the bucket
  // ceiling does not measure touching fresh memory for every object.
  pail::server::ConfigureHeap();
  if (p.seq_mib == 0 || p.seq_mib > p.size_mib || p.depth == 0) {
    std::fprintf(stderr, "nbd_bench: --seq-mib must be 1..--size-mib (%llu), --depth at least 1\n",
                 (unsigned long long)p.size_mib);
    return 2;
  }
  std::string work = p.dir + "/nbd-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(work);
  std::printf("depth %u; sequential %llu x 1 MiB; random %llu x 4 KiB over %llu MiB\n", p.depth,
              (unsigned long long)p.seq_mib, (unsigned long long)p.random_ops,
              (unsigned long long)p.seq_mib);
  std::stringstream list(p.targets);
  for (std::string target; std::getline(list, target, ',');) {
    if (target == "nbdkit") {
      BenchNbdkit(p, work);
    } else if (target == "file" || target == "s3") {
      BenchPailfs(target, p, work);
    } else {
      std::fprintf(stderr, "unknown target %s\n", target.c_str());
    }
  }
  std::filesystem::remove_all(work);
  return 0;
}
