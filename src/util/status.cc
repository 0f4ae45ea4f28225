#include "util/status.h"

namespace pail {

const char* Status::CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "NotFound";
    case Code::kPreconditionFailed: return "PreconditionFailed";
    case Code::kRetryable: return "Retryable";
    case Code::kPermanent: return "Permanent";
    case Code::kFenced: return "Fenced";
    case Code::kCorruption: return "Corruption";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kIOError: return "IOError";
    case Code::kNoSpace: return "NoSpace";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace pail
