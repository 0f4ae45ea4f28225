// AzureStore: a container (and optional blob-name prefix) in Azure Blob
// Storage or Azurite, `azure://container[/prefix]`.
//
// Requests are signed with Shared Key: HMAC-SHA256, under the base64-decoded
// account key, of a canonical string made of the verb, the standard headers
// Azure lists (Content-Length empty when 0, Content-Type, If-Match,
// If-None-Match, Range), the x-ms-* headers sorted, and the canonical
// resource "/<account><url path>" followed by "\n<name>:<value>" per query
// parameter, sorted. Service version kAzureApiVersion.
//
// Large bodies go up as blocks (Put Block, in parallel) committed by Put
// Block List. Azure honours If-None-Match / If-Match on Put Block List, so a
// large conditional write is as atomic as a small one. Uncommitted blocks of
// a failed upload need no abort: Azure discards them after a week.
// Conditional writes carry a random put id in x-ms-meta-pailputid, which
// resolves "outcome unknown" failures (see RunConditionalWrite).
#pragma once

#include <map>
#include <memory>

#include "objstore/cloud_common.h"
#include "objstore/cloud_options.h"
#include "objstore/http_client.h"
#include "objstore/object_store.h"

namespace pail {

constexpr char kAzureApiVersion[] = "2021-08-06";

class AzureStore : public ObjectStore {
 public:
  // `url` is "azure://container[/prefix]". Empty fields of `options` are
  // filled from AZURE_STORAGE_ACCOUNT_NAME (or AZURE_STORAGE_ACCOUNT) and
  // AZURE_STORAGE_ACCOUNT_KEY (or AZURE_STORAGE_KEY). Checks the key and the
  // container, creating the container when it is missing and the key allows
  // it. A wrong key fails at once with kPermissionDenied.
  static Result<std::unique_ptr<AzureStore>> Open(const std::string& url, AzureOptions options,
                                                  CloudTuning tuning = {});

  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;
  Status Delete(const std::string& key) override;
  std::string Describe() const override;

  // A service SAS token (query string, without '?') granting read, write,
  // delete and list on this container until `expiry` ("2030-01-01T00:00:00Z"),
  // for tools that cannot sign Shared Key requests themselves.
  std::string ContainerSasToken(const std::string& expiry) const;
  // The URL of `key` without any credentials.
  std::string BlobUrl(const std::string& key) const;

 private:
  AzureStore(std::string container, std::string prefix, AzureOptions options,
             std::string decoded_key, CloudTuning tuning);

  using Query = std::map<std::string, std::string>;
  using Headers = std::vector<std::pair<std::string, std::string>>;

  std::string ObjectName(const std::string& key) const { return prefix_ + key; }
  // Signs and sends a request to the blob `object_name` ("" for the
  // container). `headers` may hold x-ms-* headers and the standard ones the
  // signature covers (Content-Type, If-Match, If-None-Match).
  Result<HttpResponse> Send(const std::string& method, const std::string& object_name,
                            const Query& query, std::string_view body, Headers headers);
  Status ErrorFrom(const HttpResponse& response, const std::string& what) const;

  Status CheckOrCreateContainer();
  // Writes `body` with `conditions` (and metadata) applied to the request
  // that makes it visible: Put Blob, or Put Block List after the blocks.
  Result<std::string> Write(const std::string& key, std::string_view body, Headers conditions);
  Result<std::string> PutConditional(const std::string& key, std::string_view body,
                                     const std::string* if_match);
  Result<StoredWrite> HeadWrite(const std::string& key);

  std::string container_;
  std::string prefix_;  // "" or ends with '/'
  AzureOptions options_;
  std::string key_;        // decoded account key
  std::string endpoint_path_;  // path part of the endpoint, e.g. "/devstoreaccount1" or ""
  CloudTuning tuning_;
  HttpClient http_;
};

}  // namespace pail
