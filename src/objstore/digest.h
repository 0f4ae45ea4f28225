// Hashes, MACs and encodings for request signing, on libsodium.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace pail {

// Raw 32-byte SHA-256 of `data`.
std::string Sha256(std::string_view data);

// Lowercase hex SHA-256 of `data`, as SigV4's x-amz-content-sha256 wants.
std::string Sha256Hex(std::string_view data);

// Raw 32-byte HMAC-SHA256 of `message` under `key` (any length).
std::string HmacSha256(std::string_view key, std::string_view message);

std::string Base64Encode(std::string_view data);
// Fails with InvalidArgument on malformed input; the message never echoes
// the input, since it is usually a secret key.
Result<std::string> Base64Decode(std::string_view text);

// `bytes` random bytes as lowercase hex.
std::string RandomHex(size_t bytes);

}  // namespace pail
