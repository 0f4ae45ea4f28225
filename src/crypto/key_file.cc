#include "crypto/key_file.h"

#include <sodium.h>

#include <cstring>

namespace pail::crypto {
namespace {

constexpr char kMagic[] = "PAILKEY1";
constexpr size_t kMagicBytes = 8;
constexpr size_t kSaltBytes = 16;
constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
constexpr size_t kTagBytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kHeaderBytes = kMagicBytes + 3 * 4 + kSaltBytes + kNonceBytes;
constexpr size_t kFileBytes = kHeaderBytes + kKeyBytes + kTagBytes;

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(p[i])) << (8 * i);
  return v;
}

Result<std::string> Wrap(const Key& data_key, std::string_view password,
                         const Argon2Params& params) {
  std::string file(kMagic, kMagicBytes);
  PutU32(file, params.passes);
  PutU32(file, params.memory_kib);
  PutU32(file, params.lanes);
  std::string salt = RandomBytes(kSaltBytes);
  file += salt;
  file += RandomBytes(kNonceBytes);
  PAIL_ASSIGN_OR_RETURN(Key kek, DeriveKeyFromPassword(password, salt, params));
  std::string wrapped(kKeyBytes + kTagBytes, '\0');
  unsigned long long len = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      reinterpret_cast<uint8_t*>(wrapped.data()), &len, data_key.data(), data_key.size(),
      reinterpret_cast<const uint8_t*>(file.data()), file.size(), nullptr,
      reinterpret_cast<const uint8_t*>(file.data() + kHeaderBytes - kNonceBytes), kek.data());
  sodium_memzero(kek.data(), kek.size());
  return file + wrapped;
}

Result<Key> Unwrap(const std::string& file, std::string_view password) {
  if (file.size() != kFileBytes || std::memcmp(file.data(), kMagic, kMagicBytes) != 0) {
    return Status::Corruption(std::string("key file ") + kKeyFileObject +
                              " is not a pailfs key file (bad magic or size)");
  }
  Argon2Params params{GetU32(file.data() + 8), GetU32(file.data() + 12), GetU32(file.data() + 16)};
  // Refuse absurd costs from a tampered file before spending them.
  if (params.memory_kib > (4u << 20) || params.passes > 64 || params.lanes > 64) {
    return Status::Corruption("key file has implausible Argon2id parameters");
  }
  std::string salt = file.substr(20, kSaltBytes);
  PAIL_ASSIGN_OR_RETURN(Key kek, DeriveKeyFromPassword(password, salt, params));
  Key data_key;
  unsigned long long len = 0;
  int rc = crypto_aead_xchacha20poly1305_ietf_decrypt(
      data_key.data(), &len, nullptr,
      reinterpret_cast<const uint8_t*>(file.data() + kHeaderBytes), kKeyBytes + kTagBytes,
      reinterpret_cast<const uint8_t*>(file.data()), kHeaderBytes,
      reinterpret_cast<const uint8_t*>(file.data() + kHeaderBytes - kNonceBytes), kek.data());
  sodium_memzero(kek.data(), kek.size());
  if (rc != 0) {
    return Status::PermissionDenied(
        "wrong encryption password: it does not unlock this bucket's key file (" +
        std::string(kKeyFileObject) + "); check [storage] encryption_password");
  }
  return data_key;
}

}  // namespace

Result<Key> LoadOrCreateDataKey(ObjectStore& store, std::string_view password,
                                const Argon2Params& params) {
  if (sodium_init() < 0) return Status::Permanent("libsodium failed to initialise");
  if (password.empty()) {
    return Status::InvalidArgument("[storage] encryption_password must not be empty");
  }
  auto existing = store.Get(kKeyFileObject);
  if (existing.ok()) return Unwrap(*existing, password);
  if (!existing.status().IsNotFound()) return existing.status().WithContext("reading key file");

  Key data_key;
  randombytes_buf(data_key.data(), data_key.size());
  PAIL_ASSIGN_OR_RETURN(std::string file, Wrap(data_key, password, params));
  auto put = store.PutIfAbsent(kKeyFileObject, file);
  if (put.ok()) return data_key;
  if (!put.status().IsPreconditionFailed()) return put.status().WithContext("writing key file");
  // Another first start won the race: use its key.
  PAIL_ASSIGN_OR_RETURN(std::string winner, store.Get(kKeyFileObject));
  return Unwrap(winner, password);
}

Status ChangePassword(ObjectStore& store, std::string_view old_password,
                      std::string_view new_password, const Argon2Params& params) {
  if (sodium_init() < 0) return Status::Permanent("libsodium failed to initialise");
  if (new_password.empty()) return Status::InvalidArgument("the new password must not be empty");
  PAIL_ASSIGN_OR_RETURN(ObjectMeta meta, store.Head(kKeyFileObject));
  PAIL_ASSIGN_OR_RETURN(std::string file, store.Get(kKeyFileObject));
  PAIL_ASSIGN_OR_RETURN(Key data_key, Unwrap(file, old_password));
  PAIL_ASSIGN_OR_RETURN(std::string rewrapped, Wrap(data_key, new_password, params));
  sodium_memzero(data_key.data(), data_key.size());
  auto put = store.PutIfMatch(kKeyFileObject, rewrapped, meta.etag);
  if (put.status().IsPreconditionFailed()) {
    return Status::PreconditionFailed("the key file changed while rewrapping; run again");
  }
  return put.status();
}

}  // namespace pail::crypto
