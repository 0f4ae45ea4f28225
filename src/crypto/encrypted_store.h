// EncryptedStore: encrypts every object body in pages before it reaches the
// store below, and authenticates every page it reads back.
//
// Object format:
//   header  8 bytes  kPageMagic ("PAILENC1")
//   page*            at least one; every page but the last holds exactly
//                    kPagePlainBytes of plaintext, the last 0..kPagePlainBytes
//                    (0 only when the object is empty)
//   page   := nonce (24 random bytes) || ciphertext || tag (16 bytes)
// Pages are XChaCha20-Poly1305 under a subkey of the data key (HKDF purpose
// "pailfs/pages/v1"). Each page's associated data is
//   object key || u64 little-endian page index || u8 is_last
// so a page cannot be moved to another object or position, and an object
// cut short at a page boundary is detected (its new last page was not
// written as last). A ranged read fetches and decrypts only the pages it
// touches, in one ranged GET.
//
// Sizes reported by Head and List are plaintext sizes; etags pass through.
// Decryption failures are Status::kCorruption naming the object.
#pragma once

#include <memory>
#include <string_view>

#include "crypto/keys.h"
#include "objstore/forwarding_store.h"
#include "util/buffer_pool.h"

namespace pail::crypto {

constexpr char kPageMagic[] = "PAILENC1";
constexpr uint64_t kPageHeaderBytes = 8;
constexpr uint64_t kPagePlainBytes = 64 * 1024;
constexpr uint64_t kPageOverheadBytes = 24 + 16;  // nonce + tag
constexpr uint64_t kPageCipherBytes = kPagePlainBytes + kPageOverheadBytes;

// Stored size of an object holding `plain` bytes, and the inverse (an error
// for a size no encrypted object can have).
uint64_t CipherSize(uint64_t plain);
Result<uint64_t> PlainSize(uint64_t cipher, const std::string& key);

class EncryptedStore : public ForwardingStore {
 public:
  EncryptedStore(std::shared_ptr<ObjectStore> target, const Key& data_key);
  ~EncryptedStore() override;

  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;

 private:
  // An object's ciphertext for a PUT, in a buffer nothing zeroes first
  // (a std::string of the size would clear every segment once more before
  // encryption overwrites it).
  // Page-aligned, so a local store can hand it to the disk without a copy
  // (O_DIRECT needs aligned memory), and reused (util/buffer_pool.h).
  struct Cipher {
    AlignedBuffer bytes;
    size_t size = 0;
    std::string_view view() const { return {bytes.data(), size}; }
  };
  Cipher EncryptForPut(const std::string& key, std::string_view plain) const;
  // Writes the CipherSize(plain.size()) bytes of the object to `out`.
  void EncryptInto(const std::string& key, std::string_view plain, char* out) const;

  // Decrypts the pages in `cipher`, which starts at page `first_page`.
  // `reaches_end`: the fetched bytes run to the end of the object.
  Result<std::string> DecryptPages(const std::string& key, std::string_view cipher,
                                   uint64_t first_page, bool reaches_end) const;

  Key page_key_;
};

}  // namespace pail::crypto
