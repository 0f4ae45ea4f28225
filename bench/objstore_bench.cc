// objstore_bench: what the S3 and Azure clients cost next to plain curl.
//
// For each configured backend (the loopback RGW and Azurite servers that
// shared/objstores/objstores.sh starts; endpoints from the environment or
// $OBJSTORES_ROOT/env), it measures sequential PUT and GET of 4 KiB objects
// (ops/s) and of 64 MiB objects (MB/s) through S3Store / AzureStore, and
// the same transfers with the curl command-line tool, which runs each batch
// in a single process so it too keeps its connection open. The two take
// turns batch by batch, so background load affects both alike. The ratio
// column is client / curl: above 1 means the client is faster.
//
// curl signs S3 requests with --aws-sigv4 and reaches Azure through a
// container SAS token, since it cannot compute Shared Key signatures. Its
// credentials go in a private config file, never on the command line.
//
// Usage: objstore_bench [small_count=500] [large_mib=64] [large_reps=5]
// A benchmark, not a test: it prints numbers and never judges them.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "objstore/azure_store.h"
#include "objstore/digest.h"
#include "objstore/s3_store.h"

namespace pail {
namespace {

constexpr size_t kSmallBytes = 4096;
// Small objects per timed batch: large enough that starting a curl process
// is a small share of its batch.
constexpr size_t kSmallBatch = 50;

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

struct Env {
  std::map<std::string, std::string> values;
  std::string Get(const std::string& name) const {
    const char* v = std::getenv(name.c_str());
    if (v != nullptr && *v != '\0') return v;
    auto it = values.find(name);
    return it == values.end() ? "" : it->second;
  }
};

Env LoadEnv() {
  const char* root = std::getenv("OBJSTORES_ROOT");
  std::ifstream in(std::string(root != nullptr && *root ? root : "/tmp/objstores") + "/env");
  Env env;
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) env.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

double Seconds(const std::function<bool()>& fn, bool* ok) {
  auto start = std::chrono::steady_clock::now();
  *ok = fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The measurements of one backend, by one client.
struct Numbers {
  double put_small_ops = 0, get_small_ops = 0, put_large_mbs = 0, get_large_mbs = 0;
};

// Describes how curl reaches one backend: shared config lines (credentials,
// headers) and the URL of a key.
struct CurlTarget {
  std::string common_config;
  std::function<std::string(const std::string& key)> url;
};

class Bench {
 public:
  Bench(size_t small_count, size_t large_bytes, int large_reps)
      : small_count_(small_count), large_bytes_(large_bytes), large_reps_(large_reps) {
    dir_ = std::filesystem::temp_directory_path() / ("pail-objstore-bench-" + RandomHex(4));
    std::filesystem::create_directories(dir_);
    chmod(dir_.c_str(), 0700);
    small_body_.assign(kSmallBytes, 's');
    large_body_.resize(large_bytes_);
    for (size_t i = 0; i < large_body_.size(); ++i) large_body_[i] = static_cast<char>(i * 131 + 7);
    WriteFile(dir_ / "small.bin", small_body_);
    WriteFile(dir_ / "large.bin", large_body_);
  }
  ~Bench() { std::filesystem::remove_all(dir_); }

  // Client and curl take turns, batch by batch and alternating who goes
  // first, so load from other processes on the machine hits both alike;
  // each side reports the median of its batch rates, which shrugs off the
  // batches that a burst of background load slowed down.
  std::pair<Numbers, Numbers> Measure(ObjectStore& store, const CurlTarget& target,
                                      const std::vector<std::string>& put_headers) {
    std::vector<double> rates[2][4];  // [client, curl][put small, get small, put large, get large]
    bool ok = true;
    auto timed = [&](int who, int what, double units, const std::function<bool()>& fn) {
      bool done = false;
      double seconds = Seconds(fn, &done);
      ok = ok && done;
      rates[who][what].push_back(units / seconds);
    };
    const size_t rounds = std::max<size_t>(1, small_count_ / kSmallBatch);
    for (size_t round = 0; round < rounds; ++round) {
      size_t begin = small_count_ * round / rounds, end = small_count_ * (round + 1) / rounds;
      std::vector<std::string> keys, curl_keys;
      for (size_t i = begin; i < end; ++i) {
        keys.push_back(SmallKey(i));
        curl_keys.push_back("curl-" + SmallKey(i));
      }
      const double n = static_cast<double>(keys.size());
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn + round) % 2 == 0) {
          timed(0, 0, n, [&] {
            for (const auto& k : keys) {
              if (!Check(store.Put(k, small_body_).status())) return false;
            }
            return true;
          });
        } else {
          timed(1, 0, n, [&] { return RunCurl(target, put_headers, curl_keys, "small.bin"); });
        }
      }
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn + round) % 2 == 0) {
          timed(0, 1, n, [&] {
            for (const auto& k : keys) {
              auto got = store.Get(k);
              if (!Check(got.status()) || got->size() != kSmallBytes) return false;
            }
            return true;
          });
        } else {
          timed(1, 1, n, [&] { return RunCurl(target, {}, keys, ""); });
        }
      }
    }
    const double mb = large_bytes_ / 1e6;
    for (int rep = 0; rep < large_reps_; ++rep) {
      const std::string key = LargeKey(rep);
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn + rep) % 2 == 0) {
          timed(0, 2, mb, [&] { return Check(store.Put(key, large_body_).status()); });
        } else {
          timed(1, 2, mb, [&] { return RunCurl(target, put_headers, {"curl-" + key}, "large.bin"); });
        }
      }
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn + rep) % 2 == 0) {
          timed(0, 3, mb, [&] {
            auto got = store.Get(key);
            return Check(got.status()) && got->size() == large_bytes_;
          });
        } else {
          timed(1, 3, mb, [&] { return RunCurl(target, {}, {key}, ""); });
        }
      }
    }
    Numbers client, curl;
    if (!ok) return {client, curl};
    for (int who = 0; who < 2; ++who) {
      Numbers& out = who == 0 ? client : curl;
      out.put_small_ops = Median(rates[who][0]);
      out.get_small_ops = Median(rates[who][1]);
      out.put_large_mbs = Median(rates[who][2]);
      out.get_large_mbs = Median(rates[who][3]);
    }
    return {client, curl};
  }

  void Cleanup(ObjectStore& store) {
    for (size_t i = 0; i < small_count_; ++i) {
      (void)store.Delete(SmallKey(i));
      (void)store.Delete("curl-" + SmallKey(i));
    }
    for (int r = 0; r < large_reps_; ++r) {
      (void)store.Delete(LargeKey(r));
      (void)store.Delete("curl-" + LargeKey(r));
    }
  }

  void Print(const std::string& backend, const Numbers& client, const Numbers& curl) const {
    auto row = [&](const char* what, double a, double b, const char* unit) {
      std::printf("%-7s %-14s %10.1f %-5s %10.1f %-5s %6.2fx\n", backend.c_str(), what, a, unit, b,
                  unit, b > 0 ? a / b : 0.0);
    };
    row("PUT 4 KiB", client.put_small_ops, curl.put_small_ops, "ops/s");
    row("GET 4 KiB", client.get_small_ops, curl.get_small_ops, "ops/s");
    std::string large = std::to_string(large_bytes_ >> 20) + " MiB";
    row(("PUT " + large).c_str(), client.put_large_mbs, curl.put_large_mbs, "MB/s");
    row(("GET " + large).c_str(), client.get_large_mbs, curl.get_large_mbs, "MB/s");
  }

 private:
  static bool Check(const Status& s) {
    if (!s.ok()) std::fprintf(stderr, "  failed: %s\n", s.ToString().c_str());
    return s.ok();
  }
  static void WriteFile(const std::filesystem::path& path, const std::string& data) {
    std::ofstream(path, std::ios::binary).write(data.data(), static_cast<long>(data.size()));
  }
  std::string SmallKey(size_t i) const { return "small/" + std::to_string(i); }
  std::string LargeKey(int r) const { return "large/" + std::to_string(r); }

  // One curl process transfers every key (uploading `upload_file` when set)
  // and reports each status code; true when all succeeded.
  bool RunCurl(const CurlTarget& target, const std::vector<std::string>& headers,
               const std::vector<std::string>& keys, const std::string& upload_file) {
    auto config = dir_ / "curl.conf";
    {
      std::ofstream out(config);
      out << target.common_config << "silent\nshow-error\nwrite-out = \"%{http_code}\\n\"\n";
      for (const auto& h : headers) out << "header = \"" << h << "\"\n";
      for (const auto& key : keys) {
        out << "url = \"" << target.url(key) << "\"\n";
        if (!upload_file.empty()) out << "upload-file = \"" << (dir_ / upload_file).string() << "\"\n";
        out << "output = \"/dev/null\"\n";
      }
    }
    chmod(config.c_str(), 0600);
    std::string cmd = "curl --config '" + config.string() + "'";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return false;
    char line[64];
    size_t good = 0, total = 0;
    while (std::fgets(line, sizeof line, pipe) != nullptr) {
      int code = std::atoi(line);
      ++total;
      if (code >= 200 && code < 300) ++good;
    }
    int rc = pclose(pipe);
    std::filesystem::remove(config);
    if (rc != 0 || good != keys.size()) {
      std::fprintf(stderr, "  curl: %zu of %zu transfers succeeded (exit %d)\n", good, total, rc);
      return false;
    }
    return true;
  }

  size_t small_count_;
  size_t large_bytes_;
  int large_reps_;
  std::filesystem::path dir_;
  std::string small_body_, large_body_;
};

}  // namespace
}  // namespace pail

int main(int argc, char** argv) {
  using namespace pail;
  size_t small_count = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 500;
  size_t large_mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 64;
  int large_reps = argc > 3 ? std::atoi(argv[3]) : 5;
  if (small_count == 0 || large_mib == 0 || large_reps <= 0) {
    std::fprintf(stderr, "usage: %s [small_count>0] [large_mib>0] [large_reps>0]\n", argv[0]);
    return 2;
  }
  Env env = LoadEnv();
  Bench bench(small_count, large_mib << 20, large_reps);
  std::printf("%zu x 4 KiB (batches of %zu) and %d x %zu MiB objects, sequential; medians of "
              "batch rates; ratio = client / curl\n",
              small_count, kSmallBatch, large_reps, large_mib);
  std::printf("%-7s %-14s %16s %16s %7s\n", "backend", "operation", "client", "curl", "ratio");
  bool any = false;

  if (!env.Get("S3_ENDPOINT").empty()) {
    any = true;
    AwsOptions o;
    o.access_key_id = env.Get("S3_ACCESS_KEY");
    o.secret_access_key = env.Get("S3_SECRET_KEY");
    o.region = env.Get("S3_REGION");
    o.endpoint = env.Get("S3_ENDPOINT");
    o.allow_http = true;
    o.path_style = true;
    const std::string prefix = "bench-" + RandomHex(4);
    auto store = S3Store::Open("s3://pail-test/" + prefix, o);
    if (!store.ok()) {
      std::fprintf(stderr, "s3: %s\n", store.status().ToString().c_str());
    } else {
      CurlTarget target;
      target.common_config = "aws-sigv4 = \"aws:amz:" + o.region + ":s3\"\nuser = \"" +
                             o.access_key_id + ":" + o.secret_access_key +
                             "\"\nheader = \"x-amz-content-sha256: UNSIGNED-PAYLOAD\"\n";
      target.url = [&](const std::string& key) {
        return o.endpoint + "/pail-test/" + prefix + "/" + key;
      };
      auto [client, curl] = bench.Measure(**store, target, {});
      bench.Print("s3", client, curl);
      bench.Cleanup(**store);
    }
  }

  if (!env.Get("AZ_ENDPOINT").empty()) {
    any = true;
    AzureOptions o;
    o.storage_account_name = env.Get("AZ_ACCOUNT");
    o.storage_account_key = env.Get("AZ_KEY");
    o.endpoint = env.Get("AZ_ENDPOINT");
    o.allow_http = true;
    const std::string prefix = "bench-" + RandomHex(4);
    auto store = AzureStore::Open("azure://pail-test/" + prefix, o);
    if (!store.ok()) {
      std::fprintf(stderr, "azure: %s\n", store.status().ToString().c_str());
    } else {
      AzureStore& az = **store;
      CurlTarget target;
      const std::string sas = az.ContainerSasToken("2099-01-01T00:00:00Z");
      target.common_config = std::string("header = \"x-ms-version: ") + kAzureApiVersion + "\"\n";
      target.url = [&](const std::string& key) { return az.BlobUrl(key) + "?" + sas; };
      auto [client, curl] = bench.Measure(az, target, {"x-ms-blob-type: BlockBlob"});
      bench.Print("azure", client, curl);
      bench.Cleanup(az);
    }
  }

  if (!any) {
    std::fprintf(stderr,
                 "no object store configured: run shared/objstores/objstores.sh start, or set "
                 "S3_ENDPOINT / AZ_ENDPOINT\n");
    return 1;
  }
  return 0;
}
