// Status and Result<T>: the cheap error type every fallible call returns.
//
// Codes mirror how callers must react, the way rocksdb::IOStatus does:
// kNotFound and kPreconditionFailed are answers, kRetryable may succeed if
// tried again, kFenced means another writer owns the bucket now and nothing
// more may be written, everything else is final.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace pail {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kNotFound,            // object, file or key does not exist
    kPreconditionFailed,  // conditional write lost (exists / etag mismatch)
    kRetryable,           // transient: network, 5xx, throttling, timeouts
    kPermanent,           // will fail again: bad request, unsupported
    kFenced,              // a newer writer has taken over the bucket
    kCorruption,          // data failed authentication or parsing
    kInvalidArgument,     // caller error: bad config, bad name
    kPermissionDenied,    // credentials refused, wrong password
    kIOError,             // local disk trouble
    kNoSpace,             // the bucket's disk (a file:// bucket) or quota is full
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status PreconditionFailed(std::string m) { return {Code::kPreconditionFailed, std::move(m)}; }
  static Status Retryable(std::string m) { return {Code::kRetryable, std::move(m)}; }
  static Status Permanent(std::string m) { return {Code::kPermanent, std::move(m)}; }
  static Status Fenced(std::string m) { return {Code::kFenced, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
  static Status IOError(std::string m) { return {Code::kIOError, std::move(m)}; }
  static Status NoSpace(std::string m) { return {Code::kNoSpace, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsPreconditionFailed() const { return code_ == Code::kPreconditionFailed; }
  bool IsRetryable() const { return code_ == Code::kRetryable; }
  bool IsFenced() const { return code_ == Code::kFenced; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsNoSpace() const { return code_ == Code::kNoSpace; }
  const std::string& message() const { return message_; }

  // "NotFound: <message>", for logs and user-facing errors.
  std::string ToString() const;
  static const char* CodeName(Code code);

  // Adds context in front of the message, keeping the code.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace pail

// Early-return helpers; keep call sites flat.
#define PAIL_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::pail::Status _pail_s = (expr);        \
    if (!_pail_s.ok()) return _pail_s;      \
  } while (0)

#define PAIL_CONCAT_INNER(a, b) a##b
#define PAIL_CONCAT(a, b) PAIL_CONCAT_INNER(a, b)
#define PAIL_ASSIGN_OR_RETURN(lhs, expr) \
  PAIL_ASSIGN_OR_RETURN_IMPL(PAIL_CONCAT(_pail_r_, __LINE__), lhs, expr)
#define PAIL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
