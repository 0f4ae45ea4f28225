// The bucket stack durability tests run on, in the test process and in the
// child processes they kill: backend (file://, or RGW / Azurite) under
// retries and page encryption, as a server would have it.
#pragma once

#include <memory>
#include <string>

#include "crypto/encrypted_store.h"
#include "crypto/key_file.h"
#include "objstore/open_store.h"
#include "objstore/retrying_store.h"
#include "../objstore/test_stores.h"

namespace pail::testing {

// The URL of a fresh bucket of `kind` ("file", "s3", "azure"), or "" when
// that kind of server is not configured here.
inline std::string FreshBucketUrl(const std::string& kind, const std::string& dir) {
  CloudEnv env = LoadCloudEnv();
  if (kind == "file") return "file://" + dir + "/bucket";
  if (kind == "s3") return env.s3_endpoint.empty() ? "" : "s3://pail-test/engine-" + UniqueSuffix();
  if (kind == "azure") return env.az_endpoint.empty() ? "" : "azure://pail-test/engine-" + UniqueSuffix();
  return "";
}

inline Result<std::shared_ptr<ObjectStore>> OpenDurabilityStore(const std::string& url) {
  CloudEnv env = LoadCloudEnv();
  StoreOptions options;
  options.url = url;
  options.aws = AwsOptionsFrom(env);
  options.azure = AzureOptionsFrom(env);
  PAIL_ASSIGN_OR_RETURN(auto backend, OpenBackend(options));
  RetryOptions retry;
  retry.deadline = std::chrono::milliseconds(20000);
  auto retrying = std::make_shared<RetryingStore>(backend, retry);
  PAIL_ASSIGN_OR_RETURN(crypto::Key key,
                        crypto::LoadOrCreateDataKey(*retrying, "test-password", {1, 8 * 1024, 1}));
  return std::shared_ptr<ObjectStore>(std::make_shared<crypto::EncryptedStore>(retrying, key));
}

}  // namespace pail::testing
