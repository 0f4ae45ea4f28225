#include "nfs/record_assembler.h"

#include <algorithm>
#include <utility>

namespace pail::nfs {

Result<size_t> RecordAssembler::Feed(const char* data, size_t size, bool* record_ready) {
  *record_ready = false;
  size_t used = 0;
  while (used < size && !record_ready_) {
    if (header_filled_ < 4) {
      size_t n = std::min(size - used, 4 - header_filled_);
      std::copy(data + used, data + used + n, header_ + header_filled_);
      header_filled_ += n;
      used += n;
      if (header_filled_ < 4) break;
      const auto* h = reinterpret_cast<const unsigned char*>(header_);
      uint32_t word = (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | h[3];
      last_fragment_ = (word & kLastFragmentBit) != 0;
      fragment_remaining_ = word & ~kLastFragmentBit;
      if (fragment_remaining_ > max_record_bytes_ - record_.size()) {
        return Status::InvalidArgument("RPC record larger than " + std::to_string(max_record_bytes_) +
                                       " bytes");
      }
      record_.reserve(record_.size() + fragment_remaining_);
      FinishFragmentIfDone();
      continue;
    }
    size_t n = std::min(size - used, fragment_remaining_);
    AppendBody(data + used, n);
    used += n;
  }
  *record_ready = record_ready_;
  return used;
}

bool RecordAssembler::AppendBody(const char* data, size_t size) {
  size = std::min(size, fragment_remaining_);
  record_.append(data, size);
  fragment_remaining_ -= size;
  return FinishFragmentIfDone();
}

bool RecordAssembler::FinishFragmentIfDone() {
  if (header_filled_ < 4 || fragment_remaining_ > 0) return false;
  header_filled_ = 0;
  if (last_fragment_) record_ready_ = true;
  return record_ready_;
}

std::string RecordAssembler::TakeRecord() {
  record_ready_ = false;
  last_fragment_ = false;
  return std::exchange(record_, std::string());
}

}  // namespace pail::nfs
