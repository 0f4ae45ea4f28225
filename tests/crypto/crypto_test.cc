#include <gtest/gtest.h>

#include <thread>

#include "crypto/encrypted_store.h"
#include "crypto/key_file.h"
#include "objstore/counting_store.h"
#include "objstore/memory_store.h"

namespace pail::crypto {
namespace {

// Cheap Argon2id settings so tests stay fast; one test uses the defaults.
const Argon2Params kFast{1, 8 * 1024, 1};

std::string Pattern(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 9)) & 0xff);
  return s;
}

TEST(KeyFile, CreatedOnceThenLoadedWithTheSamePassword) {
  auto store = std::make_shared<MemoryStore>();
  auto first = LoadOrCreateDataKey(*store, "secret", kFast);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = LoadOrCreateDataKey(*store, "secret", kFast);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*first, *again);
}

TEST(KeyFile, DefaultArgon2idParametersWork) {
  auto store = std::make_shared<MemoryStore>();
  auto key = LoadOrCreateDataKey(*store, "secret");
  ASSERT_TRUE(key.ok());
  auto body = store->Get(kKeyFileObject);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->substr(0, 8), "PAILKEY1");
  // passes=3, memory=64 MiB, lanes=4, little-endian.
  EXPECT_EQ(uint8_t((*body)[8]), 3);
  EXPECT_EQ(uint32_t(uint8_t((*body)[12])) | uint32_t(uint8_t((*body)[13])) << 8 |
                uint32_t(uint8_t((*body)[14])) << 16,
            65536u);
  EXPECT_EQ(uint8_t((*body)[16]), 4);
}

TEST(KeyFile, WrongPasswordIsRefusedAndWritesNothing) {
  auto counting = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  ASSERT_TRUE(LoadOrCreateDataKey(*counting, "right", kFast).ok());
  uint64_t writes_before = counting->Snapshot().bytes_written();
  auto wrong = LoadOrCreateDataKey(*counting, "wrong", kFast);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Status::Code::kPermissionDenied);
  EXPECT_NE(wrong.status().message().find("wrong encryption password"), std::string::npos);
  EXPECT_EQ(counting->Snapshot().bytes_written(), writes_before);
}

TEST(KeyFile, EmptyPasswordIsRefused) {
  MemoryStore store;
  EXPECT_EQ(LoadOrCreateDataKey(store, "", kFast).status().code(), Status::Code::kInvalidArgument);
}

TEST(KeyFile, ConcurrentFirstStartsAgreeOnOneKey) {
  auto store = std::make_shared<MemoryStore>();
  std::vector<Key> keys(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < keys.size(); ++i) {
    threads.emplace_back([&, i] {
      auto k = LoadOrCreateDataKey(*store, "pw", kFast);
      ASSERT_TRUE(k.ok());
      keys[i] = *k;
    });
  }
  for (auto& t : threads) t.join();
  for (auto& k : keys) EXPECT_EQ(k, keys[0]);
}

TEST(KeyFile, ChangePasswordKeepsTheDataKey) {
  auto store = std::make_shared<MemoryStore>();
  auto key = LoadOrCreateDataKey(*store, "old", kFast);
  ASSERT_TRUE(key.ok());
  EncryptedStore enc(store, *key);
  ASSERT_TRUE(enc.Put("data/x", "payload").ok());

  EXPECT_FALSE(ChangePassword(*store, "not-the-old-one", "new", kFast).ok());
  ASSERT_TRUE(ChangePassword(*store, "old", "new", kFast).ok());
  EXPECT_EQ(LoadOrCreateDataKey(*store, "old", kFast).status().code(),
            Status::Code::kPermissionDenied);
  auto rewrapped = LoadOrCreateDataKey(*store, "new", kFast);
  ASSERT_TRUE(rewrapped.ok());
  EXPECT_EQ(*rewrapped, *key);
  EncryptedStore again(store, *rewrapped);
  EXPECT_EQ(*again.Get("data/x"), "payload");
}

TEST(KeyFile, TamperedKeyFileIsDetected) {
  auto store = std::make_shared<MemoryStore>();
  ASSERT_TRUE(LoadOrCreateDataKey(*store, "pw", kFast).ok());
  std::string body = *store->Get(kKeyFileObject);
  body[30] ^= 1;  // inside the salt, covered by the associated data
  ASSERT_TRUE(store->Put(kKeyFileObject, body).ok());
  EXPECT_FALSE(LoadOrCreateDataKey(*store, "pw", kFast).ok());
  ASSERT_TRUE(store->Put(kKeyFileObject, "short").ok());
  EXPECT_EQ(LoadOrCreateDataKey(*store, "pw", kFast).status().code(), Status::Code::kCorruption);
}

class EncryptedStoreTest : public ::testing::Test {
 protected:
  EncryptedStoreTest() : raw_(std::make_shared<MemoryStore>()), store_(raw_, MakeKey()) {}
  static Key MakeKey() {
    Key k;
    for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 3 + 1);
    return k;
  }
  std::shared_ptr<MemoryStore> raw_;
  EncryptedStore store_;
};

TEST_F(EncryptedStoreTest, RoundTripsAtPageEdges) {
  for (size_t n : {size_t(0), size_t(1), size_t(kPagePlainBytes - 1), size_t(kPagePlainBytes),
                   size_t(kPagePlainBytes + 1), size_t(3 * kPagePlainBytes + 77)}) {
    std::string key = "obj/" + std::to_string(n);
    std::string plain = Pattern(n, n);
    ASSERT_TRUE(store_.Put(key, plain).ok());
    EXPECT_EQ(*store_.Get(key), plain) << n;
    auto meta = store_.Head(key);
    ASSERT_TRUE(meta.ok());
    EXPECT_EQ(meta->size, n);
    EXPECT_EQ(raw_->Head(key)->size, CipherSize(n));
    EXPECT_EQ(*PlainSize(CipherSize(n), key), n);
  }
  auto listed = ListAll(store_, "obj/");
  ASSERT_TRUE(listed.ok());
  for (auto& m : *listed) EXPECT_EQ(m.size, std::stoull(m.key.substr(4)));
}

// Every kind of PUT encrypts into its own buffer: each object decrypts to
// its own bytes, with the size Encrypt gives, at and across page edges.
TEST_F(EncryptedStoreTest, EveryPutFlavourRoundTrips) {
  for (size_t n : {size_t(0), size_t(kPagePlainBytes), size_t(2 * kPagePlainBytes + 5)}) {
    const std::string a = Pattern(n, 100 + n), b = Pattern(n, 200 + n);
    const std::string key = "flavour/" + std::to_string(n);
    ASSERT_TRUE(store_.PutIfAbsent(key, a).ok());
    EXPECT_FALSE(store_.PutIfAbsent(key, b).ok());
    EXPECT_EQ(*store_.Get(key), a);
    auto meta = raw_->Head(key);
    ASSERT_TRUE(meta.ok());
    EXPECT_EQ(meta->size, CipherSize(a.size()));
    ASSERT_TRUE(store_.PutIfMatch(key, b, meta->etag).ok());
    EXPECT_EQ(*store_.Get(key), b);
    ASSERT_TRUE(store_.Put(key, a).ok());
    EXPECT_EQ(*store_.Get(key), a);
  }
}

TEST_F(EncryptedStoreTest, RangedReadsMatchThePlaintext) {
  const std::string plain = Pattern(3 * kPagePlainBytes + 1000, 9);
  ASSERT_TRUE(store_.Put("r", plain).ok());
  const uint64_t P = kPagePlainBytes;
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 1},         {0, P},         {P - 1, 2},          {P, P},         {P + 5, 2 * P},
      {3 * P, 1000},  {3 * P + 999, 10}, {3 * P + 1000, 5}, {5 * P, 10},   {10, UINT64_MAX},
      {2 * P - 3, 7}, {0, plain.size()}};
  for (auto [off, len] : ranges) {
    auto got = store_.GetRange("r", off, len);
    ASSERT_TRUE(got.ok()) << off << "+" << len << ": " << got.status().ToString();
    std::string want = off >= plain.size() ? "" : plain.substr(off, len);
    EXPECT_EQ(*got, want) << off << "+" << len;
  }
}

TEST_F(EncryptedStoreTest, MarkerNeverReachesTheStore) {
  const std::string marker = "PAILFS-MARKER-7f3a9c";
  std::string plain;
  for (int i = 0; i < 5000; ++i) plain += marker;
  ASSERT_TRUE(store_.Put("m", plain).ok());
  EXPECT_EQ(raw_->Get("m")->find(marker), std::string::npos);
  EXPECT_EQ(raw_->Get("m")->find("MARKER"), std::string::npos);
}

TEST_F(EncryptedStoreTest, EveryFlippedByteIsDetected) {
  const std::string plain = Pattern(kPagePlainBytes + 300, 4);
  ASSERT_TRUE(store_.Put("t", plain).ok());
  const std::string cipher = *raw_->Get("t");
  // Every byte of a small object, and a sample across a larger one.
  for (size_t i = 0; i < cipher.size(); i += (i < 200 ? 1 : 997)) {
    std::string bad = cipher;
    bad[i] ^= 0x20;
    ASSERT_TRUE(raw_->Put("t", bad).ok());
    auto whole = store_.Get("t");
    EXPECT_FALSE(whole.ok()) << "flip at " << i;
    if (!whole.ok()) {
      EXPECT_EQ(whole.status().code(), Status::Code::kCorruption);
      EXPECT_NE(whole.status().message().find("'t'"), std::string::npos);
    }
    // A ranged read of the page holding the byte fails too.
    uint64_t page = i < kPageHeaderBytes ? 0 : (i - kPageHeaderBytes) / kPageCipherBytes;
    if (i >= kPageHeaderBytes) {
      EXPECT_FALSE(store_.GetRange("t", page * kPagePlainBytes, 10).ok()) << "flip at " << i;
    }
  }
}

TEST_F(EncryptedStoreTest, TruncatedSwappedOrMovedPagesAreDetected) {
  const std::string plain = Pattern(3 * kPagePlainBytes, 5);
  ASSERT_TRUE(store_.Put("a", plain).ok());
  ASSERT_TRUE(store_.Put("b", plain).ok());
  const std::string a = *raw_->Get("a");
  // Cut after two whole pages: the new last page was not written as last.
  ASSERT_TRUE(raw_->Put("a", a.substr(0, kPageHeaderBytes + 2 * kPageCipherBytes)).ok());
  EXPECT_FALSE(store_.Get("a").ok());
  EXPECT_FALSE(store_.GetRange("a", kPagePlainBytes, 2 * kPagePlainBytes).ok());
  // Pages 0 and 1 swapped.
  std::string swapped = a.substr(0, kPageHeaderBytes) + a.substr(kPageHeaderBytes + kPageCipherBytes, kPageCipherBytes) +
                        a.substr(kPageHeaderBytes, kPageCipherBytes) + a.substr(kPageHeaderBytes + 2 * kPageCipherBytes);
  ASSERT_TRUE(raw_->Put("a", swapped).ok());
  EXPECT_FALSE(store_.Get("a").ok());
  EXPECT_FALSE(store_.GetRange("a", 0, 10).ok());
  // A whole object moved under another name.
  ASSERT_TRUE(raw_->Put("c", *raw_->Get("b")).ok());
  EXPECT_FALSE(store_.Get("c").ok());
  // Another key's store cannot read it.
  Key other = MakeKey();
  other[0] ^= 1;
  EncryptedStore stranger(raw_, other);
  EXPECT_FALSE(stranger.Get("b").ok());
}

TEST(Subkeys, DifferByPurposeAndAreStable) {
  Key k{};
  EXPECT_EQ(DeriveSubkey(k, "a"), DeriveSubkey(k, "a"));
  EXPECT_NE(DeriveSubkey(k, "a"), DeriveSubkey(k, "b"));
}

}  // namespace
}  // namespace pail::crypto
