// LocalStore's own files: what a put leaves in the bucket directory besides
// the object (spare files made ahead, at most a few, gone with the store),
// and a key whose directories went away after its first put.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "objstore/local_store.h"

namespace pail {
namespace {

namespace fs = std::filesystem;

class LocalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("pail-local-store-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    auto opened = LocalStore::Open(root_.string());
    ASSERT_TRUE(opened.ok());
    store_ = std::move(*opened);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(root_);
  }

  // The files in the temp directory: spares while the store is open (a
  // few), none once it is closed.
  size_t TempFiles() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_ / ".tmp")) ++n;
    return n;
  }

  fs::path root_;
  std::unique_ptr<LocalStore> store_;
};

TEST_F(LocalStoreTest, WritesOfEveryKindLeaveNoTemporaryFile) {
  ASSERT_TRUE(store_->Put("a/b/c", "1").ok());
  ASSERT_TRUE(store_->Put("a/b/c", "2").ok());
  ASSERT_TRUE(store_->PutIfAbsent("a/b/d", "3").ok());
  EXPECT_TRUE(store_->PutIfAbsent("a/b/d", "4").status().IsPreconditionFailed());
  auto etag = store_->Head("a/b/d");
  ASSERT_TRUE(etag.ok());
  EXPECT_TRUE(store_->PutIfMatch("a/b/d", "5", "stale").status().IsPreconditionFailed());
  EXPECT_TRUE(store_->PutIfMatch("a/b/e", "6", etag->etag).status().IsPreconditionFailed());
  ASSERT_TRUE(store_->PutIfMatch("a/b/d", "7", etag->etag).ok());
  EXPECT_EQ(*store_->Get("a/b/c"), "2");
  EXPECT_EQ(*store_->Get("a/b/d"), "7");
  EXPECT_TRUE(store_->Get("a/b/e").status().IsNotFound());
  EXPECT_LE(TempFiles(), 4u);
  store_.reset();
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(LocalStoreTest, PutsWriteIntoSpareFilesMadeAhead) {
  // The first put starts the maker; the next ones write into its files.
  ASSERT_TRUE(store_->Put("first", "0").ok());
  for (int i = 0; i < 20; ++i) {
    // Wait until all the spares are ready, and note their inodes.
    std::set<std::string> spares;
    for (int tries = 0; tries < 5000 && spares.size() < 4; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      spares.clear();
      for (const auto& e : fs::directory_iterator(root_ / ".tmp")) {
        struct stat st;
        ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
        spares.insert(std::to_string(st.st_ino));
      }
    }
    ASSERT_EQ(spares.size(), 4u);
    const std::string key = "k" + std::to_string(i);
    auto etag = store_->PutIfAbsent(key, std::string(i, 'x'));
    ASSERT_TRUE(etag.ok());
    // A file:// etag starts with the object's inode.
    EXPECT_TRUE(spares.count(etag->substr(0, etag->find('-')))) << *etag;
    EXPECT_EQ(*store_->Get(key), std::string(i, 'x'));
  }
  store_.reset();
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(LocalStoreTest, SparesSomeoneRemovedAreNotUsed) {
  // Another machine's cleanup sees our spares as a dead process's files.
  ASSERT_TRUE(store_->Put("first", "0").ok());
  for (int tries = 0; tries < 5000 && TempFiles() < 4; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(TempFiles(), 4u);
  for (const auto& e : fs::directory_iterator(root_ / ".tmp")) fs::remove(e.path());
  for (int i = 0; i < 6; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_TRUE(store_->PutIfAbsent(key, key).ok()) << key;
    EXPECT_EQ(*store_->Get(key), key);
  }
}

TEST_F(LocalStoreTest, KeyWhoseDirectoriesWentAwayIsWrittenAgain) {
  // A put tries the object's name first and makes its directories only when
  // they are missing: once made, and again after someone removed them.
  ASSERT_TRUE(store_->PutIfAbsent("x/y/1", "a").ok());
  ASSERT_TRUE(store_->Put("x/y/2", "b").ok());
  fs::remove_all(root_ / "x.d");
  ASSERT_TRUE(store_->PutIfAbsent("x/y/1", "c").ok());
  ASSERT_TRUE(store_->Put("x/y/2", "d").ok());
  EXPECT_EQ(*store_->Get("x/y/1"), "c");
  EXPECT_EQ(*store_->Get("x/y/2"), "d");
  store_.reset();
  EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(LocalStoreTest, OpeningRemovesTemporaryFilesOfProcessesThatAreGone) {
  store_.reset();
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  const fs::path tmp = root_ / ".tmp";
  auto make = [&](const std::string& name, std::chrono::hours age) {
    std::ofstream(tmp / name) << "partial";
    fs::last_write_time(tmp / name, fs::file_time_type::clock::now() - age);
  };
  const std::string dead = std::to_string(gone);
  make(dead + "-1-2", std::chrono::hours(2));  // a leftover
  make(dead + "-3-4", std::chrono::hours(0));  // too recent to tell
  make("1-5-6", std::chrono::hours(2));        // init runs
  make(std::to_string(::getpid()) + "-7-8", std::chrono::hours(2));  // ours
  make("notes", std::chrono::hours(2));         // not a name of ours
  auto opened = LocalStore::Open(root_.string());
  ASSERT_TRUE(opened.ok());
  EXPECT_FALSE(fs::exists(tmp / (dead + "-1-2")));
  EXPECT_TRUE(fs::exists(tmp / (dead + "-3-4")));
  EXPECT_TRUE(fs::exists(tmp / "1-5-6"));
  EXPECT_TRUE(fs::exists(tmp / (std::to_string(::getpid()) + "-7-8")));
  EXPECT_TRUE(fs::exists(tmp / "notes"));
}

}  // namespace
}  // namespace pail
