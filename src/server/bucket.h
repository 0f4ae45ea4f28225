// Opens the bucket a config names, with the wrappers every server uses:
//   backend <- CountingStore <- RetryingStore <- EncryptedStore
// Counting sits below retries so that every attempt is counted; the key file
// is read through the retrying store, unencrypted (it is its own envelope).
#pragma once

#include <memory>

#include "objstore/counting_store.h"
#include "objstore/retrying_store.h"
#include "server/config.h"

namespace pail::server {

struct Bucket {
  std::shared_ptr<RetryingStore> raw;       // retrying, not encrypted
  std::shared_ptr<CountingStore> counts;    // request counters
  std::shared_ptr<ObjectStore> encrypted;   // what the engine uses
};

// A wrong password: Status::kPermissionDenied, and nothing is written.
Result<Bucket> OpenBucket(const Config& config);

// The raw (retrying, unencrypted) store only: for the key file itself.
Result<Bucket> OpenRawBucket(const Config& config);

}  // namespace pail::server
