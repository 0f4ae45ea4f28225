// A filesystem on a fresh in-memory bucket, and helpers to keep tests short.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fs/filesystem.h"
#include "fs/fsck.h"
#include "fs/key_codec.h"
#include "objstore/memory_store.h"

namespace pail::fs::testing {

inline Credentials Root() { return Credentials::Root(); }
inline Credentials User(uint32_t uid, uint32_t gid, std::vector<uint32_t> groups = {}) {
  return Credentials{uid, gid, std::move(groups)};
}

// Pseudo-random bytes, never zero (zeros would be trimmed from chunks).
inline std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = static_cast<char>(x | 1);  // never zero: zeros would be trimmed
  }
  return s;
}

#define EXPECT_ERRNO(expr, err) EXPECT_EQ((expr).error(), (err))
#define ASSERT_FS_OK(expr)                                        \
  do {                                                            \
    auto&& _r = (expr);                                           \
    ASSERT_TRUE(_r.ok()) << #expr << " failed with errno " << _r.error(); \
  } while (0)

// Forwards everything to a real engine; a test overrides what it watches
// or breaks.
class ForwardingEngine : public engine::Engine {
 public:
  explicit ForwardingEngine(engine::Engine& inner) : inner_(inner) {}
  rocksdb::DB* db() override { return inner_.db(); }
  rocksdb::ColumnFamilyHandle* column_family(const std::string& name) override {
    return inner_.column_family(name);
  }
  engine::DataObjects& data_objects() override { return inner_.data_objects(); }
  Status Write(rocksdb::WriteBatch* batch) override { return inner_.Write(batch); }
  Status SyncThrough(uint64_t sequence) override { return inner_.SyncThrough(sequence); }
  Status CollectGarbage() override { return inner_.CollectGarbage(); }
  Status Close() override { return inner_.Close(); }
  bool fenced() const override { return inner_.fenced(); }
  engine::EngineStats stats() const override { return inner_.stats(); }

 private:
  engine::Engine& inner_;
};

class FsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = MakeStore();
    Mount();
  }

  // The bucket the tests run on.
  virtual std::shared_ptr<ObjectStore> MakeStore() { return std::make_shared<MemoryStore>(); }

  void TearDown() override {
    Unmount();
    for (const auto& d : cache_dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }

  virtual FsOptions Options() {
    FsOptions o;
    o.max_size_bytes = 1ull << 34;
    o.write_back_bytes = 16ull << 20;
    o.write_back_file_bytes = 1ull << 20;
    o.write_back_interval = std::chrono::milliseconds(200);
    return o;
  }

  // Opens engine and filesystem on store_ with a fresh, empty cache dir (a
  // new machine: everything must come from the bucket).
  void Mount() {
    std::random_device rd;
    std::string dir = (std::filesystem::temp_directory_path() /
                       ("pailfs-fs-test-" + std::to_string(rd()) + std::to_string(rd())))
                          .string();
    std::filesystem::create_directories(dir);
    cache_dirs_.push_back(dir);
    engine::EngineOptions eo;
    eo.store = store_;
    eo.cache_dir = dir;
    eo.disk_cache_bytes = 256 << 20;
    // A quarter of it holds segments just uploaded: room for one full one.
    eo.memory_cache_bytes = 128 << 20;
    eo.compression = "lz4";
    eo.flush_interval = engine_flush_interval_;
    eo.column_families = FileSystem::ColumnFamilies();
    auto e = engine::Engine::Open(eo);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    auto f = FileSystem::Open(FsEngine(), Options());
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    fs_ = std::move(f).value();
  }

  // The engine the filesystem runs on; a test may interpose a wrapper.
  virtual engine::Engine& FsEngine() { return *engine_; }

  void Unmount() {
    if (fs_) {
      Status s = fs_->Close();
      EXPECT_TRUE(s.ok()) << s.ToString();
      fs_.reset();
    }
    if (engine_) {
      EXPECT_TRUE(engine_->Close().ok());
      engine_.reset();
    }
  }

  void Remount() {
    Unmount();
    Mount();
  }

  Ino MakeFile(Ino parent, const std::string& name, uint32_t mode = 0644,
               const Credentials& cred = Root()) {
    auto r = fs_->Create(cred, parent, name, mode, CreateOptions{true, false, std::nullopt});
    EXPECT_TRUE(r.ok()) << "create " << name << ": errno " << r.error();
    return r.ok() ? r->attr.ino : 0;
  }

  Ino MakeDir(Ino parent, const std::string& name, uint32_t mode = 0755,
              const Credentials& cred = Root()) {
    auto r = fs_->Mkdir(cred, parent, name, mode);
    EXPECT_TRUE(r.ok()) << "mkdir " << name << ": errno " << r.error();
    return r.ok() ? r->ino : 0;
  }

  void WriteAt(Ino ino, uint64_t offset, std::string_view data, const Credentials& cred = Root()) {
    auto r = fs_->Write(cred, ino, offset, data);
    ASSERT_TRUE(r.ok()) << "write errno " << r.error();
    ASSERT_EQ(r->written, data.size());
  }

  std::string ReadAt(Ino ino, uint64_t offset, uint32_t length, const Credentials& cred = Root()) {
    auto r = fs_->Read(cred, ino, offset, length);
    EXPECT_TRUE(r.ok()) << "read errno " << r.error();
    return r.ok() ? std::string(r->data.view()) : std::string();
  }

  Attr Stat(Ino ino) {
    auto r = fs_->GetAttr(Root(), ino);
    EXPECT_TRUE(r.ok()) << "getattr errno " << r.error();
    return r.ok() ? *r : Attr{};
  }

  void Chmod(Ino ino, uint32_t mode) {
    SetAttrRequest req;
    req.mode = mode;
    ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  }

  void Chown(Ino ino, uint32_t uid, uint32_t gid) {
    SetAttrRequest req;
    req.uid = uid;
    req.gid = gid;
    ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
  }

  // Stored data chunks of `ino`, counted in the engine.
  size_t CountChunks(Ino ino) {
    auto* cf = engine_->column_family(kDataColumnFamily);
    std::unique_ptr<rocksdb::Iterator> it(engine_->db()->NewIterator(rocksdb::ReadOptions(), cf));
    std::string prefix = ChunkKey(ino, 0).substr(0, 8);
    size_t n = 0;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) n++;
    return n;
  }

  // Runs fsck on the engine with the filesystem closed, then reopens it.
  FsckReport RunFsck() {
    if (fs_) {
      EXPECT_TRUE(fs_->Close().ok());
      fs_.reset();
    }
    auto report = Fsck(*engine_);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    auto f = FileSystem::Open(*engine_, Options());
    EXPECT_TRUE(f.ok());
    if (f.ok()) fs_ = std::move(f).value();
    return report.ok() ? *report : FsckReport{};
  }

  void ExpectFsckClean() {
    FsckReport report = RunFsck();
    EXPECT_TRUE(report.clean());
    for (const auto& p : report.problems) ADD_FAILURE() << "fsck: " << p;
  }

  // How often the engine uploads on its own (a test counting uploads sets
  // it beyond its length).
  std::chrono::milliseconds engine_flush_interval_{500};
  std::shared_ptr<ObjectStore> store_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<FileSystem> fs_;
  std::vector<std::string> cache_dirs_;
};

inline bool operator==(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}
inline bool operator<(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}
inline bool operator<=(const struct timespec& a, const struct timespec& b) { return !(b < a); }

}  // namespace pail::fs::testing
