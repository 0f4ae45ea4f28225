#include "nbd/wire.h"

#include "nbd/protocol.h"

namespace pail::nbd {

void PutU16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}
void PutU32(std::string* out, uint32_t v) {
  PutU16(out, static_cast<uint16_t>(v >> 16));
  PutU16(out, static_cast<uint16_t>(v));
}
void PutU64(std::string* out, uint64_t v) {
  PutU32(out, static_cast<uint32_t>(v >> 32));
  PutU32(out, static_cast<uint32_t>(v));
}

bool WireReader::Take(size_t n) {
  if (!ok_ || data_.size() - pos_ < n) {
    ok_ = false;
    return false;
  }
  return true;
}

uint16_t WireReader::U16() {
  if (!Take(2)) return 0;
  auto b = reinterpret_cast<const unsigned char*>(data_.data() + pos_);
  pos_ += 2;
  return static_cast<uint16_t>(b[0] << 8 | b[1]);
}
uint32_t WireReader::U32() {
  uint32_t hi = U16();
  return hi << 16 | U16();
}
uint64_t WireReader::U64() {
  uint64_t hi = U32();
  return hi << 32 | U32();
}
std::string_view WireReader::Bytes(size_t n) {
  if (!Take(n)) return {};
  std::string_view out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

OptionHeader DecodeOptionHeader(std::string_view bytes) {
  WireReader r(bytes);
  OptionHeader h;
  h.magic = r.U64();
  h.option = r.U32();
  h.length = r.U32();
  return h;
}

Request DecodeRequest(std::string_view bytes) {
  WireReader r(bytes);
  Request q;
  q.magic = r.U32();
  q.flags = r.U16();
  q.type = r.U16();
  q.cookie = r.U64();
  q.offset = r.U64();
  q.length = r.U32();
  return q;
}

std::string OptionReply(uint32_t option, uint32_t type, std::string_view data) {
  std::string out;
  out.reserve(20 + data.size());
  PutU64(&out, kOptionReplyMagic);
  PutU32(&out, option);
  PutU32(&out, type);
  PutU32(&out, static_cast<uint32_t>(data.size()));
  out.append(data);
  return out;
}

std::string SimpleReplyHeader(uint32_t error, uint64_t cookie) {
  std::string out;
  PutU32(&out, kSimpleReplyMagic);
  PutU32(&out, error);
  PutU64(&out, cookie);
  return out;
}

std::string ChunkHeader(uint16_t flags, uint16_t type, uint64_t cookie, uint32_t length) {
  std::string out;
  PutU32(&out, kStructuredReplyMagic);
  PutU16(&out, flags);
  PutU16(&out, type);
  PutU64(&out, cookie);
  PutU32(&out, length);
  return out;
}

std::string ErrorChunk(uint64_t cookie, uint32_t error, std::string_view message) {
  std::string out = ChunkHeader(kReplyFlagDone, kReplyTypeError, cookie,
                                static_cast<uint32_t>(6 + message.size()));
  PutU32(&out, error);
  PutU16(&out, static_cast<uint16_t>(message.size()));
  out.append(message);
  return out;
}

}  // namespace pail::nbd
