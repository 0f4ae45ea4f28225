// FUSE requests as pailfs_protocol_* metrics (protocol "fuse"). The request
// loop times each request it hands to libfuse; the operations note the
// errno they reply with, in the same thread. A request answered later on
// another thread (an fsync, see fuse_ops.cc) is timed there instead.
#pragma once

#include "fuse/fuse_lowlevel_include.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pail::fuse {

// fuse_reply_err() that also notes `err` for the metrics of this request.
int ReplyErr(fuse_req_t req, int err);

// Says that the current request's reply will come from another thread,
// which times it with a RequestMetrics of its own: the loop's does not count it.
void ReplyElsewhere();

// Times one request from construction to destruction, and counts it by
// opcode with the noted errno: the opcode of the buffer the kernel sent
// (header first), or, on the thread that answers a request later, as given.
class RequestMetrics {
 public:
  RequestMetrics(const void* header, size_t size);
  explicit RequestMetrics(uint32_t opcode);
  ~RequestMetrics();
  RequestMetrics(const RequestMetrics&) = delete;
  RequestMetrics& operator=(const RequestMetrics&) = delete;

 private:
  std::string_view op_;
  int64_t start_ns_;
};

}  // namespace pail::fuse
