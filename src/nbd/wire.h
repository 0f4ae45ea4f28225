// Big-endian encoding and decoding of NBD messages (see protocol.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pail::nbd {

void PutU16(std::string* out, uint16_t v);
void PutU32(std::string* out, uint32_t v);
void PutU64(std::string* out, uint64_t v);

// Reads numbers and strings off a buffer; every read checks the bounds and
// a failed one leaves ok() false for good.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  uint16_t U16();
  uint32_t U32();
  uint64_t U64();
  std::string_view Bytes(size_t n);
  bool ok() const { return ok_; }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  bool Take(size_t n);
  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

struct OptionHeader {
  uint64_t magic = 0;
  uint32_t option = 0;
  uint32_t length = 0;
};
// `bytes` holds kOptionHeaderBytes.
OptionHeader DecodeOptionHeader(std::string_view bytes);

struct Request {
  uint32_t magic = 0;
  uint16_t flags = 0;
  uint16_t type = 0;
  uint64_t cookie = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
};
// `bytes` holds kRequestHeaderBytes.
Request DecodeRequest(std::string_view bytes);

// One option reply: header and `data`.
std::string OptionReply(uint32_t option, uint32_t type, std::string_view data = {});

std::string SimpleReplyHeader(uint32_t error, uint64_t cookie);
// A structured reply chunk's header; the payload (`length` bytes) follows.
std::string ChunkHeader(uint16_t flags, uint16_t type, uint64_t cookie, uint32_t length);
// A structured NBD_REPLY_TYPE_ERROR chunk ending the request.
std::string ErrorChunk(uint64_t cookie, uint32_t error, std::string_view message = {});

}  // namespace pail::nbd
