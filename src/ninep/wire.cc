#include "ninep/wire.h"

#include <cstring>

namespace pail::ninep {

const char* WireReader::Take(size_t n) {
  if (!ok_ || data_.size() - pos_ < n) {
    ok_ = false;
    return nullptr;
  }
  const char* p = data_.data() + pos_;
  pos_ += n;
  return p;
}

namespace {
uint64_t LoadLE(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}
}  // namespace

uint8_t WireReader::U8() {
  const char* p = Take(1);
  return p ? static_cast<uint8_t>(*p) : 0;
}
uint16_t WireReader::U16() {
  const char* p = Take(2);
  return p ? static_cast<uint16_t>(LoadLE(p, 2)) : 0;
}
uint32_t WireReader::U32() {
  const char* p = Take(4);
  return p ? static_cast<uint32_t>(LoadLE(p, 4)) : 0;
}
uint64_t WireReader::U64() {
  const char* p = Take(8);
  return p ? LoadLE(p, 8) : 0;
}
std::string_view WireReader::String() { return Bytes(U16()); }
std::string_view WireReader::Bytes(size_t n) {
  const char* p = Take(n);
  return p ? std::string_view(p, n) : std::string_view();
}

WireWriter::WireWriter(uint8_t type, uint16_t tag) {
  out_.reserve(64);
  U32(0);
  U8(type);
  U16(tag);
}

void WireWriter::U16(uint16_t v) {
  char b[2] = {static_cast<char>(v), static_cast<char>(v >> 8)};
  out_.append(b, 2);
}
void WireWriter::U32(uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; i++) b[i] = static_cast<char>(v >> (8 * i));
  out_.append(b, 4);
}
void WireWriter::U64(uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; i++) b[i] = static_cast<char>(v >> (8 * i));
  out_.append(b, 8);
}
void WireWriter::String(std::string_view s) {
  U16(static_cast<uint16_t>(s.size()));
  out_.append(s);
}
void WireWriter::QidField(const Qid& q) {
  U8(q.type);
  U32(q.version);
  U64(q.path);
}
void WireWriter::Patch32(size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) out_[at + i] = static_cast<char>(v >> (8 * i));
}
std::string WireWriter::Finish() {
  Patch32(0, static_cast<uint32_t>(out_.size()));
  return std::move(out_);
}

}  // namespace pail::ninep
