#include "crypto/keys.h"

#include <argon2.h>
#include <sodium.h>

#include <cstring>

namespace pail::crypto {

Result<Key> DeriveKeyFromPassword(std::string_view password, std::string_view salt,
                                  const Argon2Params& params) {
  Key key;
  int rc = argon2id_hash_raw(params.passes, params.memory_kib, params.lanes, password.data(),
                             password.size(), salt.data(), salt.size(), key.data(), key.size());
  if (rc != ARGON2_OK) {
    return Status::Permanent(std::string("argon2id failed: ") + argon2_error_message(rc));
  }
  return key;
}

Key DeriveSubkey(const Key& key, std::string_view purpose) {
  // Extract with a zero salt, then one Expand block (32 bytes is all we need).
  uint8_t zero_salt[crypto_auth_hmacsha256_KEYBYTES] = {};
  uint8_t prk[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, zero_salt, sizeof zero_salt);
  crypto_auth_hmacsha256_update(&st, key.data(), key.size());
  crypto_auth_hmacsha256_final(&st, prk);

  Key out;
  const uint8_t counter = 1;
  crypto_auth_hmacsha256_init(&st, prk, sizeof prk);
  crypto_auth_hmacsha256_update(&st, reinterpret_cast<const uint8_t*>(purpose.data()),
                                purpose.size());
  crypto_auth_hmacsha256_update(&st, &counter, 1);
  crypto_auth_hmacsha256_final(&st, out.data());
  sodium_memzero(prk, sizeof prk);
  return out;
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  randombytes_buf(out.data(), n);
  return out;
}

}  // namespace pail::crypto
