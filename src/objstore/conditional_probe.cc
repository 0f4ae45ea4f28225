#include "objstore/conditional_probe.h"

#include <spdlog/spdlog.h>

#include "objstore/digest.h"

namespace pail {
namespace {

Status Unsupported(ObjectStore& store, const std::string& what, bool allow_unsafe) {
  std::string message = store.Describe() + " does not honour " + what +
                        ": writer fencing needs atomic conditional writes, or two pailfs "
                        "processes could both write the bucket and corrupt it. Use a store "
                        "that supports them, or, only if exactly one writer will ever run, set "
                        "allow_unsafe_no_conditional_writes = true";
  if (!allow_unsafe) return Status::Permanent(message);
  spdlog::warn("{} (continuing: allow_unsafe_no_conditional_writes is set)", message);
  return Status::OK();
}

}  // namespace

Status ProbeConditionalWrites(ObjectStore& store, bool allow_unsafe) {
  const std::string key = std::string(kProbePrefix) + RandomHex(12);
  auto first = store.PutIfAbsent(key, "probe-1");
  if (!first.ok()) return first.status().WithContext("conditional-write probe");

  Status verdict;
  auto second = store.PutIfAbsent(key, "probe-2");
  if (second.ok()) {
    verdict = Unsupported(store, "put-if-absent (If-None-Match: *)", allow_unsafe);
  } else if (!second.status().IsPreconditionFailed()) {
    verdict = second.status().WithContext("conditional-write probe");
  } else {
    // Only the stored etag may match; one from another object never does.
    auto stale = store.PutIfMatch(key, "probe-3", first.value() + "0");
    if (stale.ok()) {
      verdict = Unsupported(store, "put-if-match (If-Match)", allow_unsafe);
    } else if (!stale.status().IsPreconditionFailed()) {
      verdict = stale.status().WithContext("conditional-write probe");
    } else {
      auto current = store.PutIfMatch(key, "probe-4", first.value());
      if (!current.ok()) {
        verdict = current.status().IsPreconditionFailed()
                      ? Unsupported(store, "put-if-match with the current etag", allow_unsafe)
                      : current.status().WithContext("conditional-write probe");
      }
    }
  }
  Status deleted = store.Delete(key);
  if (!verdict.ok()) return verdict;
  return deleted.WithContext("deleting the conditional-write probe");
}

}  // namespace pail
