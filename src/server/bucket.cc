#include "server/bucket.h"

#include "crypto/encrypted_store.h"
#include "crypto/key_file.h"
#include "objstore/open_store.h"
#include "objstore/retrying_store.h"

namespace pail::server {

Result<Bucket> OpenRawBucket(const Config& config) {
  StoreOptions options;
  options.url = config.storage.url;
  options.aws = config.aws;
  options.azure = config.azure;
  options.allow_unsafe_no_conditional_writes = config.storage.allow_unsafe_no_conditional_writes;
  PAIL_ASSIGN_OR_RETURN(auto backend, OpenBackend(options));
  Bucket bucket;
  bucket.counts = std::make_shared<CountingStore>(std::move(backend));
  bucket.raw = std::make_shared<RetryingStore>(bucket.counts, RetryOptions{});
  return bucket;
}

Result<Bucket> OpenBucket(const Config& config) {
  PAIL_ASSIGN_OR_RETURN(Bucket bucket, OpenRawBucket(config));
  PAIL_ASSIGN_OR_RETURN(crypto::Key key,
                        crypto::LoadOrCreateDataKey(*bucket.raw, config.storage.encryption_password));
  bucket.encrypted = std::make_shared<crypto::EncryptedStore>(bucket.raw, key);
  return bucket;
}

}  // namespace pail::server
