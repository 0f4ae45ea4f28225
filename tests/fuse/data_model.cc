// pail_fuse_data_model: random data operations on a few files through the
// system calls (pwrite, pread, ftruncate, fallocate in each mode,
// copy_file_range, lseek SEEK_DATA / SEEK_HOLE, fsync, and closing and
// reopening, which keeps or drops the kernel's page cache), each checked
// against a model in memory: the sizes after every step, the bytes a read
// returns, and the whole files every few steps.
//
//   pail_fuse_data_model --dir D [--files N] [--steps K] [--seed S] [--expect
//   E]
//
// With --expect, the model's final contents are written to E/f0 ... so a
// script can compare them with the files after a restart. Exit 1, saying
// where, at the first difference or unexpected error.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../fs/random_data_ops.h"

namespace {

using pail::testing::kModelChunkBytes;
using pail::testing::RandomBytes;
using pail::testing::RandomLength;
using pail::testing::RandomOffset;

constexpr uint64_t kChunk = kModelChunkBytes;
constexpr uint64_t kSpan = 48 * kChunk;  // files stay about this big

struct Options {
  std::string dir;
  std::string expect;
  int files = 3;
  int steps = 3000;
  uint64_t seed = 1;
};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "pail_fuse_data_model: %s\n", what.c_str());
  std::exit(1);
}

class Model {
 public:
  explicit Model(const Options& o) : o_(o), rng_(o.seed), files_(o.files) {
    for (int f = 0; f < o_.files; ++f) {
      files_[f].path = o_.dir + "/f" + std::to_string(f);
      files_[f].fd = open(files_[f].path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
      if (files_[f].fd < 0) Fail("create " + files_[f].path + ": " + std::strerror(errno));
    }
  }

  void Run() {
    for (step_ = 0; step_ < o_.steps; ++step_) {
      const int f = static_cast<int>(rng_() % files_.size());
      Step(f);
      CheckSize(f);
    }
    for (int f = 0; f < o_.files; ++f) {
      CheckContents(f);
      if (fsync(files_[f].fd) != 0) Error("fsync");
      close(files_[f].fd);
    }
    if (!o_.expect.empty()) {
      for (int f = 0; f < o_.files; ++f) {
        std::string path = o_.expect + "/f" + std::to_string(f);
        FILE* out = std::fopen(path.c_str(), "wb");
        if (out == nullptr) Fail("cannot write " + path);
        std::fwrite(files_[f].bytes.data(), 1, files_[f].bytes.size(), out);
        std::fclose(out);
      }
    }
  }

 private:
  struct File {
    std::string path;
    int fd = -1;
    std::string bytes;  // what the file must hold
  };

  void Error(const char* call) {
    Fail("step " + std::to_string(step_) + ": " + call + ": " + std::strerror(errno));
  }

  static bool Zeros(const std::string& m, uint64_t from, uint64_t to) {
    to = std::min<uint64_t>(to, m.size());
    return from >= to ||
           std::all_of(m.begin() + from, m.begin() + to, [](char c) { return c == 0; });
  }

  static void Zero(std::string& m, uint64_t off, uint64_t len) {
    if (off >= m.size()) return;
    std::fill(m.begin() + off, m.begin() + std::min<uint64_t>(m.size(), off + len), '\0');
  }

  void CheckSize(int f) {
    struct stat st;
    if (fstat(files_[f].fd, &st) != 0) Error("fstat");
    if (static_cast<uint64_t>(st.st_size) != files_[f].bytes.size()) {
      Fail("step " + std::to_string(step_) + ": f" + std::to_string(f) + " has size " +
           std::to_string(st.st_size) + ", the model " + std::to_string(files_[f].bytes.size()));
    }
  }

  std::string ReadAt(int f, uint64_t off, uint64_t len) {
    std::string got(len, '\0');
    size_t done = 0;
    while (done < len) {
      ssize_t n =
          pread(files_[f].fd, got.data() + done, len - done, static_cast<off_t>(off + done));
      if (n < 0) Error("pread");
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    got.resize(done);
    return got;
  }

  void CheckRange(int f, uint64_t off, uint64_t len) {
    const std::string& m = files_[f].bytes;
    std::string got = ReadAt(f, off, len);
    std::string want = off < m.size() ? m.substr(off, len) : std::string();
    if (got == want) return;
    size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i]) i++;
    Fail("step " + std::to_string(step_) + ": f" + std::to_string(f) + " read of " +
         std::to_string(len) + " at " + std::to_string(off) + " differs at byte " +
         std::to_string(off + i) + " (got " + std::to_string(got.size()) + " bytes, want " +
         std::to_string(want.size()) + ")");
  }

  void CheckContents(int f) { CheckRange(f, 0, files_[f].bytes.size() + kChunk); }

  void CheckSeek(int f) {
    const std::string& m = files_[f].bytes;
    const uint64_t at = RandomOffset(rng_, m.size() + kChunk);
    errno = 0;
    off_t data = lseek(files_[f].fd, static_cast<off_t>(at), SEEK_DATA);
    int data_errno = errno;
    errno = 0;
    off_t hole = lseek(files_[f].fd, static_cast<off_t>(at), SEEK_HOLE);
    int hole_errno = errno;
    const std::string where = "step " + std::to_string(step_) + ": f" + std::to_string(f) + " at " +
                              std::to_string(at) + " of " + std::to_string(m.size());
    if (at >= m.size()) {
      if (data != -1 || data_errno != ENXIO || hole != -1 || hole_errno != ENXIO) {
        Fail(where + ": SEEK_DATA/SEEK_HOLE past the end must be ENXIO");
      }
      return;
    }
    if (data >= 0) {
      if (static_cast<uint64_t>(data) < at || static_cast<uint64_t>(data) >= m.size() ||
          !Zeros(m, at, static_cast<uint64_t>(data))) {
        Fail(where + ": SEEK_DATA gave " + std::to_string(data));
      }
    } else if (data_errno != ENXIO || !Zeros(m, at, m.size())) {
      Fail(where + ": SEEK_DATA failed: " + std::strerror(data_errno));
    }
    if (hole < 0) Fail(where + ": SEEK_HOLE failed: " + std::strerror(hole_errno));
    const uint64_t h = static_cast<uint64_t>(hole);
    // A hole reads as zeros up to the next data (or the end).
    off_t after = lseek(files_[f].fd, hole, SEEK_DATA);
    const uint64_t hole_end = after < 0 ? m.size() : static_cast<uint64_t>(after);
    if (h < at || h > m.size() || !Zeros(m, h, hole_end)) {
      Fail(where + ": SEEK_HOLE gave " + std::to_string(hole) + ", data again at " +
           std::to_string(hole_end));
    }
  }

  void Step(int f) {
    File& file = files_[f];
    std::string& m = file.bytes;
    const int kind = static_cast<int>(rng_() % 100);
    if (kind < 35) {
      const uint64_t off = RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunk, kSpan));
      std::string data = RandomBytes(rng_, RandomLength(rng_));
      if (pwrite(file.fd, data.data(), data.size(), static_cast<off_t>(off)) !=
          static_cast<ssize_t>(data.size())) {
        Error("pwrite");
      }
      if (m.size() < off + data.size()) m.resize(off + data.size(), '\0');
      m.replace(off, data.size(), data);
    } else if (kind < 45) {
      CheckRange(f, RandomOffset(rng_, m.size() + 100), RandomLength(rng_));
    } else if (kind < 52) {
      const uint64_t size =
          rng_() % 3 == 0 ? RandomOffset(rng_, kSpan) : RandomOffset(rng_, m.size());
      if (ftruncate(file.fd, static_cast<off_t>(size)) != 0) Error("ftruncate");
      m.resize(size, '\0');
    } else if (kind < 58) {
      const uint64_t off = RandomOffset(rng_, m.size() + kChunk), len = RandomLength(rng_);
      if (fallocate(file.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                    static_cast<off_t>(len)) != 0) {
        Error("fallocate(PUNCH_HOLE)");
      }
      Zero(m, off, len);
    } else if (kind < 63) {
      const bool keep = rng_() % 2 == 0;
      const uint64_t off = RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunk, kSpan)),
                     len = RandomLength(rng_);
      if (fallocate(file.fd, FALLOC_FL_ZERO_RANGE | (keep ? FALLOC_FL_KEEP_SIZE : 0),
                    static_cast<off_t>(off), static_cast<off_t>(len)) != 0) {
        Error("fallocate(ZERO_RANGE)");
      }
      if (!keep && m.size() < off + len) m.resize(off + len, '\0');
      Zero(m, off, len);
    } else if (kind < 67) {
      const bool keep = rng_() % 2 == 0;
      const uint64_t off = RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunk, kSpan)),
                     len = RandomLength(rng_);
      if (fallocate(file.fd, keep ? FALLOC_FL_KEEP_SIZE : 0, static_cast<off_t>(off),
                    static_cast<off_t>(len)) != 0) {
        Error("fallocate");
      }
      if (!keep && m.size() < off + len) m.resize(off + len, '\0');
    } else if (kind < 77) {
      const int from = static_cast<int>(rng_() % files_.size());
      const std::string src = files_[from].bytes;
      loff_t in = static_cast<loff_t>(RandomOffset(rng_, src.size() + 100));
      loff_t out =
          static_cast<loff_t>(RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunk, kSpan)));
      const uint64_t len = RandomLength(rng_);
      const uint64_t in_at = static_cast<uint64_t>(in), out_at = static_cast<uint64_t>(out);
      // Linux cuts the length at the source's end, then refuses ranges of
      // one file that overlap.
      const uint64_t want = in_at >= src.size() ? 0 : std::min<uint64_t>(len, src.size() - in_at);
      const bool overlap = from == f && in_at < out_at + want && out_at < in_at + want;
      ssize_t n = copy_file_range(files_[from].fd, &in, file.fd, &out, len, 0);
      if (overlap) {
        if (n != -1 || errno != EINVAL)
          Fail("step " + std::to_string(step_) + ": overlapping copy_file_range was not EINVAL");
        return;
      }
      if (n < 0) Error("copy_file_range");
      // A short copy is allowed; the model follows what was copied.
      if (static_cast<uint64_t>(n) > want)
        Fail("step " + std::to_string(step_) + ": copy_file_range copied too much");
      if (n > 0) {
        if (m.size() < out_at + n) m.resize(out_at + n, '\0');
        m.replace(out_at, n, src.substr(in_at, n));
      }
    } else if (kind < 85) {
      CheckSeek(f);
    } else if (kind < 89) {
      if (fsync(file.fd) != 0) Error("fsync");
    } else if (kind < 93) {
      CheckContents(f);
    } else {
      // A new descriptor: the kernel may keep the cached pages (the server
      // asks it to) or drop them; either way the bytes must be the same.
      close(file.fd);
      file.fd = open(file.path.c_str(), O_RDWR);
      if (file.fd < 0) Error("open");
    }
  }

  Options o_;
  std::mt19937_64 rng_;
  std::vector<File> files_;
  int step_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--dir") {
      o.dir = value;
    } else if (flag == "--expect") {
      o.expect = value;
    } else if (flag == "--files") {
      o.files = std::atoi(value.c_str());
    } else if (flag == "--steps") {
      o.steps = std::atoi(value.c_str());
    } else if (flag == "--seed") {
      o.seed = std::strtoull(value.c_str(), nullptr, 10);
    } else {
      Fail("unknown flag " + flag);
    }
  }
  if (o.dir.empty() || o.files < 1)
    Fail("usage: --dir D [--files N] [--steps K] [--seed S] [--expect E]");
  Model(o).Run();
  std::printf(
      "pail_fuse_data_model: %d steps on %d files (seed %llu) matched "
      "the model\n",
      o.steps, o.files, static_cast<unsigned long long>(o.seed));
  return 0;
}
