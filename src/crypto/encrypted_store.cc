#include "crypto/encrypted_store.h"

#include <spdlog/spdlog.h>

#include <sodium.h>

#include <cstring>

namespace pail::crypto {
namespace {

std::string PageAad(const std::string& key, uint64_t index, bool is_last) {
  std::string aad = key;
  for (int i = 0; i < 8; ++i) aad.push_back(static_cast<char>(index >> (8 * i)));
  aad.push_back(is_last ? 1 : 0);
  return aad;
}

Status Tampered(const std::string& key, const std::string& why) {
  return Status::Corruption("object '" + key + "' failed authentication (" + why +
                            "): it was altered, truncated or written with another key");
}

}  // namespace

uint64_t CipherSize(uint64_t plain) {
  uint64_t pages = plain == 0 ? 1 : (plain + kPagePlainBytes - 1) / kPagePlainBytes;
  return kPageHeaderBytes + pages * kPageOverheadBytes + plain;
}

Result<uint64_t> PlainSize(uint64_t cipher, const std::string& key) {
  if (cipher < kPageHeaderBytes + kPageOverheadBytes) return Tampered(key, "too short");
  uint64_t body = cipher - kPageHeaderBytes;
  uint64_t full = body / kPageCipherBytes;
  uint64_t rest = body % kPageCipherBytes;
  if (rest == 0) return full * kPagePlainBytes;
  if (rest < kPageOverheadBytes) return Tampered(key, "impossible size");
  return full * kPagePlainBytes + rest - kPageOverheadBytes;
}

EncryptedStore::EncryptedStore(std::shared_ptr<ObjectStore> target, const Key& data_key)
    : ForwardingStore(std::move(target)), page_key_(DeriveSubkey(data_key, "pailfs/pages/v1")) {}

EncryptedStore::~EncryptedStore() { sodium_memzero(page_key_.data(), page_key_.size()); }

void EncryptedStore::EncryptInto(const std::string& key, std::string_view plain, char* out) const {
  std::memcpy(out, kPageMagic, kPageHeaderBytes);
  uint64_t pages = plain.empty() ? 1 : (plain.size() + kPagePlainBytes - 1) / kPagePlainBytes;
  size_t at = kPageHeaderBytes;
  for (uint64_t i = 0; i < pages; ++i) {
    std::string_view chunk = plain.substr(i * kPagePlainBytes, kPagePlainBytes);
    std::string aad = PageAad(key, i, i + 1 == pages);
    auto* p = reinterpret_cast<uint8_t*>(out + at);
    randombytes_buf(p, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
    unsigned long long len = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(
        p + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, &len,
        reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size(),
        reinterpret_cast<const uint8_t*>(aad.data()), aad.size(), nullptr, p, page_key_.data());
    at += kPageOverheadBytes + chunk.size();
  }
}

EncryptedStore::Cipher EncryptedStore::EncryptForPut(const std::string& key,
                                                     std::string_view plain) const {
  Cipher c;
  c.size = CipherSize(plain.size());
  c.bytes = AlignedBuffer(c.size);  // not zeroed: every byte is written
  EncryptInto(key, plain, c.bytes.data());
  return c;
}

Result<std::string> EncryptedStore::DecryptPages(const std::string& key, std::string_view cipher,
                                                 uint64_t first_page, bool reaches_end) const {
  std::string plain;
  plain.reserve(cipher.size());
  uint64_t index = first_page;
  size_t pos = 0;
  bool saw_last = false;
  while (pos < cipher.size()) {
    if (saw_last) return Tampered(key, "data after the last page");
    size_t page_len = std::min<uint64_t>(kPageCipherBytes, cipher.size() - pos);
    if (page_len < kPageOverheadBytes) return Tampered(key, "torn page");
    const auto* p = reinterpret_cast<const uint8_t*>(cipher.data() + pos);
    size_t at = plain.size();
    plain.resize(at + page_len - kPageOverheadBytes);
    auto try_open = [&](bool is_last) {
      std::string aad = PageAad(key, index, is_last);
      unsigned long long len = 0;
      return crypto_aead_xchacha20poly1305_ietf_decrypt(
                 reinterpret_cast<uint8_t*>(plain.data() + at), &len, nullptr,
                 p + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
                 page_len - crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
                 reinterpret_cast<const uint8_t*>(aad.data()), aad.size(), p,
                 page_key_.data()) == 0;
    };
    // A short page can only be the last; a full page is usually not.
    bool full = page_len == kPageCipherBytes;
    if (full && try_open(false)) {
    } else if (try_open(true)) {
      saw_last = true;
    } else {
      return Tampered(key, "page " + std::to_string(index));
    }
    pos += page_len;
    ++index;
  }
  if (reaches_end && !saw_last) return Tampered(key, "missing final page");
  return plain;
}

Result<std::string> EncryptedStore::Get(const std::string& key) {
  PAIL_ASSIGN_OR_RETURN(std::string cipher, target_->Get(key));
  if (cipher.size() < kPageHeaderBytes || std::memcmp(cipher.data(), kPageMagic, kPageHeaderBytes) != 0) {
    return Tampered(key, "bad header");
  }
  return DecryptPages(key, std::string_view(cipher).substr(kPageHeaderBytes), 0, true);
}

Result<std::string> EncryptedStore::GetRange(const std::string& key, uint64_t offset,
                                             uint64_t length) {
  if (length == 0) return std::string();
  uint64_t first = offset / kPagePlainBytes;
  uint64_t end = offset + std::min(length, UINT64_MAX - offset);
  uint64_t last = (end - 1) / kPagePlainBytes;
  uint64_t cipher_off = kPageHeaderBytes + first * kPageCipherBytes;
  uint64_t cipher_len = (last - first + 1) * kPageCipherBytes;
  PAIL_ASSIGN_OR_RETURN(std::string cipher, target_->GetRange(key, cipher_off, cipher_len));
  bool reaches_end = cipher.size() < cipher_len;
  if (cipher.empty()) {
    // The range starts past the last page; prove the object is intact that far.
    PAIL_ASSIGN_OR_RETURN(ObjectMeta meta, Head(key));
    if (offset < meta.size) return Tampered(key, "shorter than its listed size");
    return std::string();
  }
  PAIL_ASSIGN_OR_RETURN(std::string plain, DecryptPages(key, cipher, first, reaches_end));
  uint64_t skip = offset - first * kPagePlainBytes;
  if (skip >= plain.size()) return std::string();
  // Trimmed in place: a copy would cost a second buffer of the whole range.
  plain.erase(0, skip);
  if (plain.size() > length) plain.resize(length);
  return plain;
}

Result<ObjectMeta> EncryptedStore::Head(const std::string& key) {
  PAIL_ASSIGN_OR_RETURN(ObjectMeta meta, target_->Head(key));
  PAIL_ASSIGN_OR_RETURN(meta.size, PlainSize(meta.size, key));
  return meta;
}

Result<std::string> EncryptedStore::Put(const std::string& key, std::string_view body) {
  const Cipher c = EncryptForPut(key, body);
  return target_->Put(key, c.view());
}

Result<std::string> EncryptedStore::PutIfAbsent(const std::string& key, std::string_view body) {
  const Cipher c = EncryptForPut(key, body);
  return target_->PutIfAbsent(key, c.view());
}

Result<std::string> EncryptedStore::PutIfMatch(const std::string& key, std::string_view body,
                                               const std::string& etag) {
  const Cipher c = EncryptForPut(key, body);
  return target_->PutIfMatch(key, c.view(), etag);
}

Result<ListPage> EncryptedStore::List(const std::string& prefix, const std::string& token,
                                      int max_keys) {
  PAIL_ASSIGN_OR_RETURN(ListPage page, target_->List(prefix, token, max_keys));
  // An object no encryption of ours can have produced (a zero-byte "folder
  // marker" such as "db/" that consoles create, or a foreign file) is left
  // out of the listing with a warning: one such object must not make every
  // listing, and so the bucket, fail. Reading it still fails as tampered.
  std::vector<ObjectMeta> ours;
  ours.reserve(page.objects.size());
  for (auto& meta : page.objects) {
    auto plain = PlainSize(meta.size, meta.key);
    if (!plain.ok()) {
      spdlog::warn("bucket {}: ignoring '{}' ({} bytes), which is not an object pailfs wrote",
                   Describe(), meta.key, meta.size);
      continue;
    }
    meta.size = *plain;
    ours.push_back(std::move(meta));
  }
  page.objects = std::move(ours);
  return page;
}

}  // namespace pail::crypto
