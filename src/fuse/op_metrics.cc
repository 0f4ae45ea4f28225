#include "fuse/op_metrics.h"

#include <linux/fuse.h>

#include <chrono>
#include <cstring>

#include "metrics/protocol_metrics.h"
#include "util/clock.h"

namespace pail::fuse {
namespace {

thread_local int reply_errno = 0;
thread_local bool replied_elsewhere = false;

std::string_view OpcodeName(uint32_t opcode) {
  switch (opcode) {
    case FUSE_LOOKUP: return "lookup";
    case FUSE_FORGET: return "forget";
    case FUSE_BATCH_FORGET: return "batch_forget";
    case FUSE_GETATTR: return "getattr";
    case FUSE_SETATTR: return "setattr";
    case FUSE_READLINK: return "readlink";
    case FUSE_SYMLINK: return "symlink";
    case FUSE_MKNOD: return "mknod";
    case FUSE_MKDIR: return "mkdir";
    case FUSE_UNLINK: return "unlink";
    case FUSE_RMDIR: return "rmdir";
    case FUSE_RENAME: return "rename";
    case FUSE_RENAME2: return "rename2";
    case FUSE_LINK: return "link";
    case FUSE_OPEN: return "open";
    case FUSE_READ: return "read";
    case FUSE_WRITE: return "write";
    case FUSE_STATFS: return "statfs";
    case FUSE_RELEASE: return "release";
    case FUSE_FSYNC: return "fsync";
    case FUSE_SETXATTR: return "setxattr";
    case FUSE_GETXATTR: return "getxattr";
    case FUSE_LISTXATTR: return "listxattr";
    case FUSE_REMOVEXATTR: return "removexattr";
    case FUSE_FLUSH: return "flush";
    case FUSE_INIT: return "init";
    case FUSE_OPENDIR: return "opendir";
    case FUSE_READDIR: return "readdir";
    case FUSE_READDIRPLUS: return "readdirplus";
    case FUSE_RELEASEDIR: return "releasedir";
    case FUSE_FSYNCDIR: return "fsyncdir";
    case FUSE_ACCESS: return "access";
    case FUSE_CREATE: return "create";
    case FUSE_INTERRUPT: return "interrupt";
    case FUSE_DESTROY: return "destroy";
    case FUSE_FALLOCATE: return "fallocate";
    case FUSE_LSEEK: return "lseek";
    case FUSE_COPY_FILE_RANGE: return "copy_file_range";
    default: return "other";
  }
}

uint32_t OpcodeOf(const void* header, size_t size) {
  uint32_t opcode = 0;
  if (header != nullptr && size >= sizeof(fuse_in_header)) {
    std::memcpy(&opcode, static_cast<const char*>(header) + offsetof(fuse_in_header, opcode),
                sizeof(opcode));
  }
  return opcode;
}

metrics::ProtocolMetrics& Fuse() {
  static metrics::ProtocolMetrics& m = metrics::ProtocolMetrics::For("fuse");
  return m;
}

}  // namespace

int ReplyErr(fuse_req_t req, int err) {
  reply_errno = err;
  return fuse_reply_err(req, err);
}

RequestMetrics::RequestMetrics(const void* header, size_t size)
    : RequestMetrics(OpcodeOf(header, size)) {}

RequestMetrics::RequestMetrics(uint32_t opcode)
    : op_(OpcodeName(opcode)), start_ns_(SteadyNowNs()) {
  reply_errno = 0;
  replied_elsewhere = false;
}

RequestMetrics::~RequestMetrics() {
  if (replied_elsewhere) return;
  Fuse().Observe(op_, std::chrono::nanoseconds(SteadyNowNs() - start_ns_), reply_errno);
}

void ReplyElsewhere() { replied_elsewhere = true; }

}  // namespace pail::fuse
