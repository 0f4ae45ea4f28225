#include "engine/wal_part.h"

#include <cstring>

namespace pail::engine {
namespace {

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

}  // namespace

std::string EncodeWalPart(uint64_t log_number, uint64_t offset, std::string_view bytes) {
  std::string out(kWalPartMagic, kWalMagicBytes);
  PutU64(out, log_number);
  PutU64(out, offset);
  out.append(bytes);
  return out;
}

std::string EncodeWalSeal(uint64_t sealing_epoch, bool closing) {
  std::string out(kWalSealMagic, kWalMagicBytes);
  PutU64(out, sealing_epoch);
  if (closing) out.push_back(1);
  return out;
}

Result<WalPart> DecodeWalPart(std::string body, const std::string& key) {
  WalPart part;
  if (IsSealSize(body.size()) && std::memcmp(body.data(), kWalSealMagic, kWalMagicBytes) == 0) {
    part.is_seal = true;
    part.sealing_epoch = GetU64(body.data() + kWalMagicBytes);
    part.closing = body.size() == kWalClosingSealBytes;
    if (part.closing && body.back() != 1) return Status::Corruption("WAL part " + key + " is a bad seal");
    return part;
  }
  if (body.size() < kWalPartHeaderBytes || std::memcmp(body.data(), kWalPartMagic, kWalMagicBytes) != 0) {
    return Status::Corruption("WAL part " + key + " has a bad header");
  }
  part.log_number = GetU64(body.data() + kWalMagicBytes);
  part.offset = GetU64(body.data() + kWalMagicBytes + 8);
  body.erase(0, kWalPartHeaderBytes);
  part.bytes = std::move(body);
  return part;
}

Result<bool> WalContinuity::Accept(const WalPart& part, const std::string& key) {
  auto at = next_offset_.find(part.log_number);
  if (at == next_offset_.end()) {
    if (part.offset != 0) dropped_.insert(part.log_number);
    at = next_offset_.emplace(part.log_number, 0).first;
  }
  if (dropped_.count(part.log_number)) return false;
  if (part.offset != at->second) {
    return Status::Corruption("WAL part " + key + " starts at byte " + std::to_string(part.offset) +
                              " of log " + std::to_string(part.log_number) +
                              ", but the log's earlier parts end at byte " + std::to_string(at->second) +
                              ": a part in its middle is missing from the bucket");
  }
  at->second += part.bytes.size();
  return true;
}

}  // namespace pail::engine
