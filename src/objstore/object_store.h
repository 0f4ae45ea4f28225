// ObjectStore: the one seam between pailfs and a bucket.
//
// Every backend (local directory, memory, S3, Azure Blob) and every wrapper
// (retries, fault injection, request counting, encryption) implements this
// interface, so the layers above never know where their bytes live.
//
// Contract, checked by tests/objstore/contract_test.cc for every backend:
//  - Keys are non-empty byte strings of at most 1024 bytes without NUL; '/'
//    separates "folders" only by convention (listing is by plain prefix).
//  - Get/GetRange/Head on a missing key: Status::NotFound.
//  - GetRange(key, offset, length) returns the bytes in
//    [offset, min(offset + length, size)); an offset at or past the end
//    returns an empty string.
//  - Put replaces atomically: readers see the old or the new body, never a mix.
//  - PutIfAbsent: exactly one of several concurrent callers wins; the others
//    get Status::PreconditionFailed.
//  - PutIfMatch(key, body, etag) writes only when the stored etag is `etag`;
//    otherwise (or when the key is missing) Status::PreconditionFailed.
//  - List returns keys with the prefix in ascending byte order, at most
//    `max_keys` of them, and a continuation token ("" when done).
//  - Delete of a missing key succeeds (deletes are idempotent).
//  - Retryable errors are classified as Status::kRetryable; a conditional
//    write whose outcome is unknown is resolved by the backend before it
//    answers (for example with a HEAD), never reported as success blindly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace pail {

struct ObjectMeta {
  std::string key;
  uint64_t size = 0;
  std::string etag;  // opaque; only compared for equality
};

struct ListPage {
  std::vector<ObjectMeta> objects;
  std::string next_token;  // empty when the listing is complete
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  virtual Result<std::string> Get(const std::string& key) = 0;
  virtual Result<std::string> GetRange(const std::string& key, uint64_t offset,
                                       uint64_t length) = 0;
  virtual Result<ObjectMeta> Head(const std::string& key) = 0;

  // Each returns the new object's etag.
  virtual Result<std::string> Put(const std::string& key, std::string_view body) = 0;
  virtual Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) = 0;
  virtual Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                         const std::string& etag) = 0;

  virtual Result<ListPage> List(const std::string& prefix, const std::string& token,
                                int max_keys) = 0;
  virtual Status Delete(const std::string& key) = 0;

  // Human-readable location without secrets, e.g. "file:///srv/bucket".
  virtual std::string Describe() const = 0;

  // True when the objects live on this machine's disks, so a local cache
  // copy of them would only double the disk traffic and space.
  virtual bool IsLocal() const { return false; }
};

// Lists every key under `prefix`, following continuation tokens.
Result<std::vector<ObjectMeta>> ListAll(ObjectStore& store, const std::string& prefix);

}  // namespace pail
