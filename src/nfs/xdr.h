// XDR (RFC 4506): the big-endian, 4-byte-aligned encoding every ONC RPC
// message uses.
//
// XdrDecoder reads from a borrowed byte range and never reads past it: the
// first short read latches a failure, every later call returns a zero value,
// and ok() tells the caller to answer GARBAGE_ARGS. Variable-length items
// carry a caller-supplied maximum, checked before anything is copied, so a
// hostile length never allocates.
//
// XdrEncoder appends to a std::string the caller owns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pail::nfs {

class XdrDecoder {
 public:
  XdrDecoder(const char* data, size_t size) : data_(data), size_(size) {}
  explicit XdrDecoder(std::string_view bytes) : XdrDecoder(bytes.data(), bytes.size()) {}

  uint32_t U32();
  int32_t I32() { return static_cast<int32_t>(U32()); }
  uint64_t U64();
  bool Bool();
  // Variable-length opaque (length word, bytes, padding), at most `max` bytes.
  std::string_view Opaque(uint32_t max);
  // Fixed-length opaque of exactly `length` bytes plus padding.
  std::string_view FixedOpaque(uint32_t length);
  std::string_view String(uint32_t max) { return Opaque(max); }

  bool ok() const { return ok_; }
  void Fail() { ok_ = false; }
  size_t remaining() const { return ok_ ? size_ - pos_ : 0; }
  size_t position() const { return pos_; }

 private:
  bool Take(size_t n, const char** out);

  const char* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

class XdrEncoder {
 public:
  explicit XdrEncoder(std::string* out) : out_(out) {}

  void U32(uint32_t v);
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void U64(uint64_t v);
  void Bool(bool v) { U32(v ? 1 : 0); }
  void Opaque(std::string_view bytes);
  void FixedOpaque(std::string_view bytes);
  void String(std::string_view s) { Opaque(s); }

  // Reserves a word to fill in later (counts known only after encoding).
  size_t ReserveU32();
  void PatchU32(size_t offset, uint32_t v);
  size_t size() const { return out_->size(); }
  std::string* buffer() { return out_; }

 private:
  std::string* out_;
};

// Padding that brings `n` bytes up to a multiple of four.
inline size_t XdrPadding(size_t n) { return (4 - (n & 3)) & 3; }

}  // namespace pail::nfs
