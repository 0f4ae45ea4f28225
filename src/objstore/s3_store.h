// S3Store: a bucket (and optional key prefix) on Amazon S3 or an
// S3-compatible store, `s3://bucket[/prefix]`.
//
// Requests are signed by libcurl's SigV4 (CURLOPT_AWS_SIGV4). Every request
// carries x-amz-content-sha256: the SHA-256 of bodies up to
// `kSignedPayloadLimit`, UNSIGNED-PAYLOAD for larger ones (hashing tens of
// MiB would cost more than sending them; TLS protects them on the wire).
// Query strings are built already canonical (sorted, RFC 3986-encoded),
// because libcurl 7.88 signs them exactly as written.
//
// Large bodies go up as multipart uploads with parallel parts; a failed
// upload is aborted so no orphaned parts stay billed. Conditional writes are
// always single-part PUTs (some stores ignore conditions on
// CompleteMultipartUpload) tagged with a random put id in metadata, which
// resolves "outcome unknown" failures (see RunConditionalWrite).
//
// If-Match quirk: Ceph RGW (and stores built on it) compare If-Match with
// the stored ETag without its quotes, so a quoted ETag never matches. On a
// refused If-Match whose ETag a HEAD shows to be current, the store retries
// once unquoted and keeps sending unquoted ETags from then on.
#pragma once

#include <atomic>
#include <map>
#include <memory>

#include "objstore/cloud_common.h"
#include "objstore/cloud_options.h"
#include "objstore/http_client.h"
#include "objstore/object_store.h"

namespace pail {

struct XmlElement;

// Bodies up to this size are hashed into the signature.
constexpr size_t kSignedPayloadLimit = 1u << 20;

class S3Store : public ObjectStore {
 public:
  // `url` is "s3://bucket[/prefix]". Empty fields of `options` are filled
  // from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
  // AWS_REGION / AWS_DEFAULT_REGION and AWS_ENDPOINT_URL. Checks the
  // credentials and the bucket, creating the bucket when it is missing and
  // the credentials allow it. Wrong credentials fail at once with
  // kPermissionDenied.
  static Result<std::unique_ptr<S3Store>> Open(const std::string& url, AwsOptions options,
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

  // Deletes up to 1000 keys per DeleteObjects request; missing keys are fine.
  Status DeleteMany(const std::vector<std::string>& keys);

 private:
  S3Store(std::string bucket, std::string prefix, AwsOptions options, CloudTuning tuning);

  using Query = std::map<std::string, std::string>;
  using Headers = std::vector<std::pair<std::string, std::string>>;

  std::string ObjectName(const std::string& key) const { return prefix_ + key; }
  std::string UrlFor(const std::string& object_name, const Query& query) const;
  Result<HttpResponse> Send(const std::string& method, const std::string& url,
                            std::string_view body, Headers headers);
  // Maps a non-2xx response to a Status; `what` names the operation.
  Status ErrorFrom(const HttpResponse& response, const std::string& what) const;
  // `error` is the reply's parsed XML (nullptr when it had none).
  Status ErrorFrom(long http_status, const XmlElement* error, const std::string& what) const;

  Status CheckOrCreateBucket();
  Result<std::string> PutSingle(const std::string& key, std::string_view body, Headers headers);
  Result<std::string> PutMultipart(const std::string& key, std::string_view body);
  Result<std::string> PutConditional(const std::string& key, std::string_view body,
                                     const std::string* if_match);
  Result<StoredWrite> HeadWrite(const std::string& key);

  std::string bucket_;
  std::string prefix_;  // "" or ends with '/'
  AwsOptions options_;
  CloudTuning tuning_;
  std::string session_token_;
  std::string base_url_;  // scheme://host[:port][/bucket], no trailing '/'
  std::string sigv4_;
  std::string credentials_;
  HttpClient http_;
  std::atomic<bool> unquoted_if_match_{false};
};

}  // namespace pail
