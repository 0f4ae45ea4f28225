// The shape of the ten small-file workloads: their names and order, the
// names, sizes and contents of the files they make. Shared by
// workloads_bench (through a directory) and nfs_workloads_bench (through
// libnfs), so both run the same workloads and their numbers compare.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace workloads {

// In the order both programs run them.
inline constexpr const char* kNames[] = {
    "sequential-writes", "data-modifications", "single-file-append", "empty-files",
    "empty-dirs",        "random-reads",       "file-moves",         "file-deletion",
    "directory-traversal", "metadata-ops",
};

// Adds the options both programs share (--around, --only: names from
// kNames) to `app`, then parses the command line, exiting with CLI11's
// message on a bad one.
inline void ParseCommandLine(CLI::App& app, int argc, char** argv, std::string* around,
                             std::set<std::string>* only) {
  std::vector<std::string> names(std::begin(kNames), std::end(kNames)), listed;
  app.add_option("--around", *around, "shell command run as `CMD start|end WORKLOAD` around timed parts");
  app.add_option("--only", listed, "workloads to run (comma list)")->delimiter(',')->check(CLI::IsMember(names));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  only->insert(listed.begin(), listed.end());
}

// Shape of the directory-traversal tree: kTreeFanout subdirectories per
// level, kTreeDepth levels, kFilesPerDir small text files in each.
constexpr int kTreeDepth = 3;
constexpr int kTreeFanout = 6;
constexpr int kFilesPerDir = 3;
// Files the metadata workload stats in turn; file i holds (i + 1) KiB.
constexpr int kMetadataFiles = 100;
// The data-modification file is this many blocks long, the random-read one
// this many.
constexpr int kModifyFileBlocks = 10;
constexpr int kReadFileBlocks = 100;
constexpr uint64_t kRandomSeed = 42;

// prefix, i in six digits, suffix: "file_000042.dat".
inline std::string Name6(const char* prefix, int i, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%06d%s", prefix, i, suffix);
  return buf;
}

// What sequential-writes writes to each file: byte i is i mod 256.
inline std::string SequentialData(size_t size) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i % 256);
  return data;
}

// The random-read file: kReadFileBlocks blocks, byte i is i * 7 (mod 256).
inline std::string RandomReadFile(size_t block) {
  std::string content(block * kReadFileBlocks, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  return content;
}

// The block data-modifications writes again and again, drawn from `rng`
// (seeded with kRandomSeed) before the offsets are.
inline std::string ModifyPatch(std::mt19937_64& rng, size_t block) {
  std::string patch(block, '\0');
  for (char& ch : patch) ch = static_cast<char>(rng());
  return patch;
}

// Directory-traversal tree names and contents.
inline std::string TreeFileName(int j) { return "file_" + std::to_string(j) + ".txt"; }
inline std::string TreeFileContent(int j, int depth) {
  return "This is file " + std::to_string(j) + " at depth " + std::to_string(depth) + "\n";
}
inline std::string TreeDirName(int depth, int i) {
  char name[32];
  std::snprintf(name, sizeof name, "dir_%03d_%03d", depth, i);
  return name;
}

// metadata-ops file i: its name and size.
inline std::string MetadataFileName(int i) {
  char name[32];
  std::snprintf(name, sizeof name, "file_%03d.dat", i);
  return name;
}
inline size_t MetadataFileSize(int i) { return static_cast<size_t>(i + 1) * 1024; }

// p in [0, 1] of an ascending vector; 0 when empty.
inline double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace workloads
