// Key derivation: Argon2id for the password, HKDF-SHA256 for per-domain
// subkeys of the data key.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace pail::crypto {

constexpr size_t kKeyBytes = 32;
using Key = std::array<uint8_t, kKeyBytes>;

// Argon2id cost; written into the key file so that old files stay readable
// when the defaults change.
struct Argon2Params {
  uint32_t passes = 3;
  uint32_t memory_kib = 64 * 1024;  // 64 MiB
  uint32_t lanes = 4;
};

Result<Key> DeriveKeyFromPassword(std::string_view password, std::string_view salt,
                                  const Argon2Params& params);

// HKDF-SHA256 (RFC 5869) with an empty salt: a subkey of `key` for one
// purpose, so that no two uses ever share key material.
Key DeriveSubkey(const Key& key, std::string_view purpose);

// Secure random bytes.
std::string RandomBytes(size_t n);

}  // namespace pail::crypto
