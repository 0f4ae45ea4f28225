// Small helpers shared by ObjectStore backends.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace pail {

// Longest key any supported store accepts (S3 and Azure both allow 1024).
constexpr size_t kMaxKeyBytes = 1024;

inline Status ValidateKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxKeyBytes || key.find('\0') != std::string::npos) {
    return Status::InvalidArgument("invalid object key (empty, NUL or over 1024 bytes)");
  }
  return Status::OK();
}

// The bytes of `body` in [offset, offset + length), clipped to its end.
inline std::string SliceRange(std::string_view body, uint64_t offset, uint64_t length) {
  if (offset >= body.size()) return {};
  return std::string(body.substr(offset, length));
}

}  // namespace pail
