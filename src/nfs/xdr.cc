#include "nfs/xdr.h"

#include <cstring>

namespace pail::nfs {

bool XdrDecoder::Take(size_t n, const char** out) {
  if (!ok_ || n > size_ - pos_) {
    ok_ = false;
    return false;
  }
  *out = data_ + pos_;
  pos_ += n;
  return true;
}

uint32_t XdrDecoder::U32() {
  const char* p;
  if (!Take(4, &p)) return 0;
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

uint64_t XdrDecoder::U64() {
  uint64_t high = U32();
  uint64_t low = U32();
  return (high << 32) | low;
}

bool XdrDecoder::Bool() {
  uint32_t v = U32();
  // RFC 4506 booleans are exactly 0 or 1; anything else is malformed.
  if (v > 1) ok_ = false;
  return v == 1;
}

std::string_view XdrDecoder::Opaque(uint32_t max) {
  uint32_t length = U32();
  if (!ok_) return {};
  if (length > max) {
    ok_ = false;
    return {};
  }
  return FixedOpaque(length);
}

std::string_view XdrDecoder::FixedOpaque(uint32_t length) {
  const char* p;
  size_t padded = size_t{length} + XdrPadding(length);
  if (!Take(padded, &p)) return {};
  return std::string_view(p, length);
}

void XdrEncoder::U32(uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  out_->append(b, 4);
}

void XdrEncoder::U64(uint64_t v) {
  U32(static_cast<uint32_t>(v >> 32));
  U32(static_cast<uint32_t>(v));
}

void XdrEncoder::Opaque(std::string_view bytes) {
  U32(static_cast<uint32_t>(bytes.size()));
  FixedOpaque(bytes);
}

void XdrEncoder::FixedOpaque(std::string_view bytes) {
  out_->append(bytes.data(), bytes.size());
  out_->append(XdrPadding(bytes.size()), '\0');
}

size_t XdrEncoder::ReserveU32() {
  size_t offset = out_->size();
  U32(0);
  return offset;
}

void XdrEncoder::PatchU32(size_t offset, uint32_t v) {
  (*out_)[offset] = static_cast<char>(v >> 24);
  (*out_)[offset + 1] = static_cast<char>(v >> 16);
  (*out_)[offset + 2] = static_cast<char>(v >> 8);
  (*out_)[offset + 3] = static_cast<char>(v);
}

}  // namespace pail::nfs
