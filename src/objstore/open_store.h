// Opens the backend a bucket URL names:
//   file:///abs/path          LocalStore
//   memory://                 MemoryStore (a fresh, empty one per call)
//   s3://bucket[/prefix]      S3Store
//   azure://container[/prefix] AzureStore
// The result is the raw backend; callers stack retries, counting and
// encryption on top (see server/open_bucket.h).
#pragma once

#include <memory>
#include <string>

#include "objstore/cloud_options.h"
#include "objstore/object_store.h"

namespace pail {

struct StoreOptions {
  std::string url;
  AwsOptions aws;
  AzureOptions azure;
  // Single-writer setups on a store without conditional writes may accept
  // losing writer fencing; everyone else gets an error at start.
  bool allow_unsafe_no_conditional_writes = false;
};

Result<std::shared_ptr<ObjectStore>> OpenBackend(const StoreOptions& options);

}  // namespace pail
