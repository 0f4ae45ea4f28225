// pail_crash_files: the two halves of the FUSE crash test.
//
//   pail_crash_files write  --dir D --manifest M --round R
//   pail_crash_files verify --dir D --manifest M
//
// `write` creates files of deterministic content under D/round_R, fsyncs
// about half of them, overwrites part of a file from an earlier round and
// fsyncs it, renames a synced file and fsyncs the directory, then leaves a
// batch of unsynced files behind. Every promise fsync made is appended to
// the manifest M (a local file, outside the mount): "file PATH SIZE HASH"
// (PATH must hold SIZE bytes whose 64-bit FNV-1a hash is HASH) or
// "gone PATH" (PATH must not exist). `verify` checks every promise, the latest line for a path
// winning, and exits 1 on any broken one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

constexpr int kFilesPerRound = 40;
constexpr int kUnsyncedFiles = 30;

// File i of a round holds this many bytes: empty, tiny, around 4 KiB and
// around the core's chunk size, and a few hundred KiB.
size_t SizeFor(int i) {
  static const size_t kSizes[] = {0, 1, 4095, 4096, 4097, 65536, 262143, 262144, 262145, 700001};
  return kSizes[static_cast<size_t>(i) % (sizeof kSizes / sizeof kSizes[0])];
}

std::string Content(size_t size, uint64_t seed) {
  std::string s(size, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

uint64_t Fnv1a(const std::string& data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "pail_crash_files: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

void WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) Die("write " + path);
    done += static_cast<size_t>(n);
  }
}

// Creates path with `content`; fsyncs it when asked.
void MakeFile(const std::string& path, const std::string& content, bool sync) {
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) Die("create " + path);
  WriteAll(fd, content, path);
  if (sync && fsync(fd) != 0) Die("fsync " + path);
  if (close(fd) != 0) Die("close " + path);
}

class Manifest {
 public:
  explicit Manifest(const std::string& path) : path_(path) {}
  void File(const std::string& rel, const std::string& content) {
    Append("file " + rel + " " + std::to_string(content.size()) + " " +
           std::to_string(Fnv1a(content)));
  }
  void Gone(const std::string& rel) { Append("gone " + rel); }

 private:
  void Append(const std::string& line) {
    std::ofstream out(path_, std::ios::app);
    out << line << "\n";
    if (!out) Die("append to manifest " + path_);
  }
  std::string path_;
};

struct Promise {
  bool exists = false;
  size_t size = 0;
  uint64_t hash = 0;
};

std::map<std::string, Promise> ReadManifest(const std::string& path) {
  std::map<std::string, Promise> promises;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind, rel;
    fields >> kind >> rel;
    Promise p;
    if (kind == "file") {
      p.exists = true;
      fields >> p.size >> p.hash;
    } else if (kind != "gone") {
      std::fprintf(stderr, "pail_crash_files: bad manifest line: %s\n", line.c_str());
      std::exit(1);
    }
    promises[rel] = p;
  }
  return promises;
}

int Write(const std::string& dir, const std::string& manifest_path, int round) {
  Manifest manifest(manifest_path);
  std::string rel_dir = "round_" + std::to_string(round);
  if (mkdir((dir + "/" + rel_dir).c_str(), 0755) != 0) Die("mkdir " + rel_dir);

  for (int i = 0; i < kFilesPerRound; ++i) {
    std::string rel = rel_dir + "/f" + std::to_string(i);
    uint64_t seed = static_cast<uint64_t>(round) * 1000 + static_cast<uint64_t>(i);
    bool sync = i % 2 == 0;
    std::string content = Content(SizeFor(i), seed);
    MakeFile(dir + "/" + rel, content, sync);
    if (sync) manifest.File(rel, content);
  }

  // Overwrite the middle of a file an earlier round synced, and sync again.
  if (round > 1) {
    std::string rel = "round_" + std::to_string(round - 1) + "/f8";  // 262144 bytes
    uint64_t seed = static_cast<uint64_t>(round - 1) * 1000 + 8;
    std::string content = Content(SizeFor(8), seed);
    std::string patch = Content(100000, seed + 500000);
    content.replace(50000, patch.size(), patch);
    int fd = open((dir + "/" + rel).c_str(), O_WRONLY);
    if (fd < 0) Die("open " + rel);
    if (pwrite(fd, patch.data(), patch.size(), 50000) != static_cast<ssize_t>(patch.size()))
      Die("pwrite " + rel);
    if (fsync(fd) != 0) Die("fsync " + rel);
    close(fd);
    manifest.File(rel, content);
  }

  // A rename made durable by fsync of the directory.
  std::string from = rel_dir + "/f2", to = rel_dir + "/f2.renamed";
  if (rename((dir + "/" + from).c_str(), (dir + "/" + to).c_str()) != 0) Die("rename " + from);
  int dfd = open((dir + "/" + rel_dir).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd < 0 || fsync(dfd) != 0) Die("fsync directory " + rel_dir);
  close(dfd);
  manifest.Gone(from);
  manifest.File(to, Content(SizeFor(2), static_cast<uint64_t>(round) * 1000 + 2));

  // Work that may or may not survive the crash.
  for (int i = 0; i < kUnsyncedFiles; ++i) {
    std::string rel = rel_dir + "/unsynced" + std::to_string(i);
    MakeFile(dir + "/" + rel, Content(SizeFor(i), 777), false);
  }
  std::printf("round %d: %d files written, %d fsynced\n", round, kFilesPerRound + kUnsyncedFiles,
              kFilesPerRound / 2);
  return 0;
}

bool ReadWhole(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

int Verify(const std::string& dir, const std::string& manifest_path) {
  int broken = 0, checked = 0;
  for (const auto& [rel, p] : ReadManifest(manifest_path)) {
    std::string path = dir + "/" + rel;
    ++checked;
    if (!p.exists) {
      struct stat st;
      if (lstat(path.c_str(), &st) == 0) {
        std::fprintf(stderr, "BROKEN: %s exists, but its removal was fsynced\n", rel.c_str());
        ++broken;
      }
      continue;
    }
    std::string data;
    if (!ReadWhole(path, &data)) {
      std::fprintf(stderr, "BROKEN: %s: %s\n", rel.c_str(), std::strerror(errno));
      ++broken;
    } else if (data.size() != p.size || Fnv1a(data) != p.hash) {
      std::fprintf(stderr, "BROKEN: %s: content differs (%zu bytes, want %zu)\n", rel.c_str(),
                   data.size(), p.size);
      ++broken;
    }
  }
  std::printf("verified %d fsync promises: %d broken\n", checked, broken);
  return broken == 0 && checked > 0 ? 0 : 1;
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: pail_crash_files write --dir D --manifest M --round R\n"
               "       pail_crash_files verify --dir D --manifest M\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage();
  std::string mode = argv[1], dir, manifest;
  int round = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--dir") {
      dir = v;
    } else if (a == "--manifest") {
      manifest = v;
    } else if (a == "--round") {
      round = std::atoi(v.c_str());
    } else {
      Usage();
    }
  }
  if (dir.empty() || manifest.empty()) Usage();
  if (mode == "write" && round >= 1) return Write(dir, manifest, round);
  if (mode == "verify") return Verify(dir, manifest);
  Usage();
}
