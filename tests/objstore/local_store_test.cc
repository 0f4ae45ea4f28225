// LocalStore's own files: what a put leaves in the bucket directory besides
// the object, and a key whose directories went away after its first put.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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
  void TearDown() override { fs::remove_all(root_); }

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
  EXPECT_EQ(TempFiles(), 0u);
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
  EXPECT_EQ(TempFiles(), 0u);
}

}  // namespace
}  // namespace pail
