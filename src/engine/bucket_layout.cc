#include "engine/bucket_layout.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace pail::engine {
namespace {

std::optional<uint64_t> ParseNumber(std::string_view s) {
  if (s.size() != kNumberDigits) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string PadNumber(uint64_t n) {
  std::string s = std::to_string(n);
  return std::string(kNumberDigits - s.size(), '0') + s;
}

std::string FenceKey(uint64_t epoch) { return kFencePrefix + PadNumber(epoch); }

std::string FileKey(uint64_t epoch, const std::string& file) {
  return kDbPrefix + PadNumber(epoch) + "/" + file;
}

std::string WalPartKey(uint64_t epoch, uint64_t seq) {
  return kDbPrefix + PadNumber(epoch) + "/" + kWalDir + PadNumber(seq);
}

std::optional<DbKey> ParseDbKey(const std::string& key) {
  std::string_view k(key);
  const std::string_view db(kDbPrefix);
  if (k.substr(0, db.size()) != db) return std::nullopt;
  k.remove_prefix(db.size());
  if (k.size() < kNumberDigits + 2 || k[kNumberDigits] != '/') return std::nullopt;
  auto epoch = ParseNumber(k.substr(0, kNumberDigits));
  if (!epoch) return std::nullopt;
  k.remove_prefix(kNumberDigits + 1);
  DbKey out;
  out.epoch = *epoch;
  const std::string_view wal(kWalDir);
  if (k.substr(0, wal.size()) == wal) {
    auto seq = ParseNumber(k.substr(wal.size()));
    if (!seq) return std::nullopt;
    out.is_wal_part = true;
    out.wal_seq = *seq;
    return out;
  }
  if (k.empty() || k.find('/') != std::string_view::npos) return std::nullopt;
  out.file = std::string(k);
  return out;
}

std::optional<uint64_t> ParseFenceKey(const std::string& key) {
  std::string_view k(key);
  const std::string_view fence(kFencePrefix);
  if (k.substr(0, fence.size()) != fence) return std::nullopt;
  return ParseNumber(k.substr(fence.size()));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<uint64_t> LogNumberOf(const std::string& name) {
  if (!EndsWith(name, kLogSuffix)) return std::nullopt;
  std::string_view digits(name.data(), name.size() - std::strlen(kLogSuffix));
  if (digits.empty() || digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  uint64_t v = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return v;
}

std::string LogFileName(uint64_t number) {
  std::string digits = std::to_string(number);
  return std::string(6 - std::min<size_t>(6, digits.size()), '0') + digits + kLogSuffix;
}

bool IsTableOrBlob(const std::string& file) { return EndsWith(file, ".sst") || EndsWith(file, ".blob"); }

}  // namespace pail::engine
