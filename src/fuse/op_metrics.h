// FUSE requests as pailfs_protocol_* metrics (protocol "fuse"). The request
// loop times each request it hands to libfuse; the operations note the
// errno they reply with, in the same thread (every reply is synchronous).
#pragma once

#include "fuse/fuse_lowlevel_include.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pail::fuse {

// fuse_reply_err() that also notes `err` for the metrics of this request.
int ReplyErr(fuse_req_t req, int err);

// Times one request buffer (header as the kernel sent it) from construction
// to destruction, and counts it by opcode with the noted errno.
class RequestMetrics {
 public:
  RequestMetrics(const void* header, size_t size);
  ~RequestMetrics();
  RequestMetrics(const RequestMetrics&) = delete;
  RequestMetrics& operator=(const RequestMetrics&) = delete;

 private:
  std::string_view op_;
  int64_t start_ns_;
};

}  // namespace pail::fuse
