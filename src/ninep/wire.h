// Bounds-checked little-endian reading and writing of 9P fields.
//
// WireReader never reads past its input: a short field sets a sticky error
// and yields zeros/empty strings, so a handler decodes every field and
// checks ok() once. Lengths come from the input, but nothing is allocated
// from them beyond the bytes actually present.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ninep/protocol.h"

namespace pail::ninep {

struct Qid {
  uint8_t type = 0;
  uint32_t version = 0;
  uint64_t path = 0;
};

class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  uint8_t U8();
  uint16_t U16();
  uint32_t U32();
  uint64_t U64();
  std::string_view String();
  // `n` raw bytes (a Twrite payload or xattr chunk).
  std::string_view Bytes(size_t n);

  bool ok() const { return ok_; }
  // Everything consumed and nothing short.
  bool done() const { return ok_ && pos_ == data_.size(); }
  size_t remaining() const { return ok_ ? data_.size() - pos_ : 0; }

 private:
  const char* Take(size_t n);

  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// Builds one message: Begin() reserves the header, Finish() fills in size.
class WireWriter {
 public:
  WireWriter(uint8_t type, uint16_t tag);

  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v);
  void U32(uint32_t v);
  void U64(uint64_t v);
  void String(std::string_view s);  // callers keep s under 65536 bytes
  void QidField(const Qid& q);
  void Bytes(std::string_view b) { out_.append(b); }

  size_t size() const { return out_.size(); }
  // Writes the size field and hands over the message.
  std::string Finish();
  // Position/patching for fields filled in after their payload (Rread count).
  size_t Reserve32() { size_t at = out_.size(); U32(0); return at; }
  void Patch32(size_t at, uint32_t v);

 private:
  std::string out_;
};

// Size of a qid on the wire and of a string field carrying `n` bytes.
inline constexpr size_t kQidBytes = 13;
inline constexpr size_t StringBytes(size_t n) { return 2 + n; }

}  // namespace pail::ninep
