#include "objstore/s3_store.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "objstore/digest.h"
#include "objstore/object_store_util.h"
#include "objstore/uri_codec.h"
#include "objstore/xml_document.h"

namespace pail {
namespace {

constexpr char kUnsignedPayload[] = "UNSIGNED-PAYLOAD";
// S3's cap on keys per ListObjectsV2 page and per DeleteObjects request.
constexpr int kMaxKeysPerRequest = 1000;

// Virtual-host addressing needs a DNS name under which "<bucket>.host"
// resolves; an IP address or localhost can only be addressed by path.
bool HostNeedsPathStyle(const std::string& host) {
  if (host.rfind("localhost", 0) == 0 || host.front() == '[') return true;
  for (char c : host) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == ':')) return false;
  }
  return true;
}

bool IsSuccess(long status) { return status >= 200 && status < 300; }

}  // namespace

S3Store::S3Store(std::string bucket, std::string prefix, AwsOptions options, CloudTuning tuning)
    : bucket_(std::move(bucket)),
      prefix_(std::move(prefix)),
      options_(std::move(options)),
      tuning_(tuning),
      http_(tuning.http) {}

Result<std::unique_ptr<S3Store>> S3Store::Open(const std::string& url, AwsOptions options,
                                               CloudTuning tuning) {
  PAIL_ASSIGN_OR_RETURN(BucketUrl parsed, ParseBucketUrl(url, "s3://"));
  std::string bucket = std::move(parsed.container);
  std::string prefix = std::move(parsed.prefix);
  if (!ValidStoreName(bucket, "-.")) {
    return Status::InvalidArgument("invalid S3 bucket name '" + bucket +
                                   "': use 3-63 lowercase letters, digits, '.' or '-'");
  }

  options.access_key_id = EnvOr(options.access_key_id, {"AWS_ACCESS_KEY_ID"});
  options.secret_access_key = EnvOr(options.secret_access_key, {"AWS_SECRET_ACCESS_KEY"});
  options.region = EnvOr(options.region, {"AWS_REGION", "AWS_DEFAULT_REGION"});
  if (options.region.empty()) options.region = "us-east-1";
  options.endpoint = EnvOr(options.endpoint, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"});
  if (options.access_key_id.empty() || options.secret_access_key.empty()) {
    return Status::InvalidArgument(
        "no S3 credentials: set [aws] access_key_id and secret_access_key, or the environment "
        "variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  }
  for (char c : options.region) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) {
      return Status::InvalidArgument("invalid S3 region '" + options.region + "'");
    }
  }
  if (options.endpoint.empty()) options.endpoint = "https://s3." + options.region + ".amazonaws.com";
  while (options.endpoint.back() == '/') options.endpoint.pop_back();
  size_t scheme_end = options.endpoint.find("://");
  std::string scheme = scheme_end == std::string::npos ? "" : options.endpoint.substr(0, scheme_end);
  if (scheme != "https" && scheme != "http") {
    return Status::InvalidArgument("S3 endpoint '" + options.endpoint +
                                   "' must start with https:// (or http:// with allow_http)");
  }
  if (scheme == "http" && !options.allow_http) {
    return Status::InvalidArgument("S3 endpoint '" + options.endpoint +
                                   "' is plain http: set [aws] allow_http = true to allow it");
  }
  std::string host_and_path = options.endpoint.substr(scheme_end + 3);
  std::string host = host_and_path.substr(0, host_and_path.find('/'));
  if (host.empty()) return Status::InvalidArgument("S3 endpoint has no host: " + options.endpoint);

  std::unique_ptr<S3Store> store(new S3Store(bucket, prefix, options, tuning));
  store->session_token_ = EnvOr("", {"AWS_SESSION_TOKEN"});
  if (options.path_style || HostNeedsPathStyle(host)) {
    store->base_url_ = options.endpoint + "/" + bucket;
  } else {
    store->base_url_ = scheme + "://" + bucket + "." + host_and_path;
  }
  store->sigv4_ = "aws:amz:" + options.region + ":s3";
  store->credentials_ = options.access_key_id + ":" + options.secret_access_key;
  PAIL_RETURN_IF_ERROR(store->CheckOrCreateBucket());
  return store;
}

std::string S3Store::Describe() const {
  return "s3://" + bucket_ + "/" + prefix_ + " at " + options_.endpoint;
}

std::string S3Store::UrlFor(const std::string& object_name, const Query& query) const {
  // An empty name addresses the bucket itself.
  std::string url = base_url_;
  if (!object_name.empty()) url += "/" + UriEncode(object_name, /*keep_slash=*/true);
  // std::map iterates in name order: the canonical order SigV4 signs.
  char sep = '?';
  for (const auto& [name, value] : query) {
    url += sep;
    url += UriEncode(name) + "=" + UriEncode(value);
    sep = '&';
  }
  return url;
}

Result<HttpResponse> S3Store::Send(const std::string& method, const std::string& url,
                                   std::string_view body, Headers headers) {
  HttpRequest request;
  request.method = method;
  request.url = url;
  request.body = body;
  // RGW refuses every request without this header, GETs included.
  headers.emplace_back("x-amz-content-sha256",
                       body.size() <= kSignedPayloadLimit ? Sha256Hex(body) : kUnsignedPayload);
  if (!session_token_.empty()) headers.emplace_back("x-amz-security-token", session_token_);
  request.headers = std::move(headers);
  request.aws_sigv4 = sigv4_;
  request.aws_credentials = credentials_;
  return http_.Send(request);
}

Status S3Store::ErrorFrom(const HttpResponse& response, const std::string& what) const {
  Result<XmlElement> error = ParseXml(response.body);
  return ErrorFrom(response.status, error.ok() ? &*error : nullptr, what);
}

Status S3Store::ErrorFrom(long s, const XmlElement* error, const std::string& what) const {
  std::string code = error ? error->FindText("Code").value_or("") : "";
  std::string message = error ? error->FindText("Message").value_or("") : "";
  std::string desc = what + ": HTTP " + std::to_string(s);
  if (!code.empty()) desc += " " + code;
  if (!message.empty()) desc += ": " + message;
  // AWS reports a wrong region in the credential scope as a 400.
  const bool credentials_refused = code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" ||
                                   code == "AuthorizationHeaderMalformed" ||
                                   code == "InvalidToken" || code == "ExpiredToken";
  // RGW's answer past a user or bucket quota (a 403), MinIO's on a full
  // disk (a 507): no room, which retrying or other credentials do not fix.
  if (code == "QuotaExceeded" || code == "XMinioStorageFull" || s == 507) return Status::NoSpace(desc);
  if (s == 401 || s == 403 || credentials_refused) {
    if (credentials_refused) {
      desc += " (S3 refused the credentials of access key id '" + options_.access_key_id +
              "': check [aws] secret_access_key / AWS_SECRET_ACCESS_KEY, and the region)";
    }
    return Status::PermissionDenied(desc);
  }
  // A vanished bucket is not a missing key: nothing written will stick.
  if (code == "NoSuchBucket") return Status::Permanent(desc + " (bucket '" + bucket_ + "')");
  if (s == 404) return Status::NotFound(desc);
  if (s == 412) return Status::PreconditionFailed(desc);
  // AWS answers 409 ConditionalRequestConflict when a concurrent write on the
  // same key was in flight; nothing was written, so trying again is correct.
  if (s == 409 && code == "ConditionalRequestConflict") return Status::Retryable(desc);
  if (s == 429 || s >= 500 || code == "SlowDown" || code == "RequestTimeout" ||
      code == "InternalError" || code == "OperationAborted") {
    return Status::Retryable(desc);
  }
  return Status::Permanent(desc);
}

Status S3Store::CheckOrCreateBucket() {
  std::string what = "checking bucket '" + bucket_ + "' at " + options_.endpoint;
  Query query{{"list-type", "2"}, {"max-keys", "1"}, {"prefix", prefix_}};
  PAIL_ASSIGN_OR_RETURN(auto response, Send("GET", UrlFor("", query),
                                            "", {}));
  if (IsSuccess(response.status)) return Status::OK();
  if (XmlFindText(response.body, "Code").value_or("") != "NoSuchBucket") {
    return ErrorFrom(response, what);
  }

  // The bucket is missing: create it. us-east-1 is the default location and
  // must not be named; other regions must be.
  std::string body;
  if (options_.region != "us-east-1") {
    body = "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
           "<LocationConstraint>" + options_.region + "</LocationConstraint>"
           "</CreateBucketConfiguration>";
  }
  PAIL_ASSIGN_OR_RETURN(auto created, Send("PUT", base_url_, body, {}));
  if (IsSuccess(created.status)) return Status::OK();
  std::string code = XmlFindText(created.body, "Code").value_or("");
  if (code == "BucketAlreadyOwnedByYou") return Status::OK();
  Status create_status = ErrorFrom(created, "creating missing bucket '" + bucket_ + "'");
  if (created.status == 403 || code == "AccessDenied") {
    return Status::PermissionDenied("bucket '" + bucket_ + "' does not exist at " +
                                    options_.endpoint +
                                    " and these credentials may not create it: create it, or "
                                    "grant s3:CreateBucket (" + create_status.message() + ")");
  }
  return create_status;
}

Result<std::string> S3Store::Get(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  PAIL_ASSIGN_OR_RETURN(auto response, Send("GET", UrlFor(ObjectName(key), {}), "", {}));
  if (response.status != 200) return ErrorFrom(response, "GET " + key);
  return std::move(response.body);
}

Result<std::string> S3Store::GetRange(const std::string& key, uint64_t offset, uint64_t length) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  if (length == 0) {
    // Nothing to read, but a missing key must still say so.
    PAIL_RETURN_IF_ERROR(Head(key).status());
    return std::string();
  }
  std::string range = "bytes=" + std::to_string(offset) + "-";
  if (length - 1 <= UINT64_MAX - offset) range += std::to_string(offset + length - 1);
  PAIL_ASSIGN_OR_RETURN(auto response,
                        Send("GET", UrlFor(ObjectName(key), {}), "", {{"Range", range}}));
  if (response.status == 206) return std::move(response.body);
  // A server that ignores Range sends the whole object.
  if (response.status == 200) return SliceRange(response.body, offset, length);
  // The object exists but the range starts at or past its end.
  if (response.status == 416) return std::string();
  return ErrorFrom(response, "GET range of " + key);
}

Result<ObjectMeta> S3Store::Head(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  PAIL_ASSIGN_OR_RETURN(auto response, Send("HEAD", UrlFor(ObjectName(key), {}), "", {}));
  if (response.status != 200) return ErrorFrom(response, "HEAD " + key);
  ObjectMeta meta;
  meta.key = key;
  meta.size = std::strtoull(response.Header("content-length").c_str(), nullptr, 10);
  meta.etag = StripEtagQuotes(response.Header("etag"));
  return meta;
}

Result<StoredWrite> S3Store::HeadWrite(const std::string& key) {
  PAIL_ASSIGN_OR_RETURN(auto response, Send("HEAD", UrlFor(ObjectName(key), {}), "", {}));
  if (response.status != 200) return ErrorFrom(response, "HEAD " + key);
  return StoredWrite{StripEtagQuotes(response.Header("etag")),
                     response.Header(std::string("x-amz-meta-") + kPutIdMetadata)};
}

Result<std::string> S3Store::PutSingle(const std::string& key, std::string_view body,
                                       Headers headers) {
  PAIL_ASSIGN_OR_RETURN(auto response,
                        Send("PUT", UrlFor(ObjectName(key), {}), body, std::move(headers)));
  if (response.status != 200) return ErrorFrom(response, "PUT " + key);
  std::string etag = StripEtagQuotes(response.Header("etag"));
  if (!etag.empty()) return etag;
  PAIL_ASSIGN_OR_RETURN(auto meta, Head(key));
  return meta.etag;
}

Result<std::string> S3Store::Put(const std::string& key, std::string_view body) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  if (body.size() > tuning_.multipart_threshold) return PutMultipart(key, body);
  return PutSingle(key, body, {});
}

Result<std::string> S3Store::PutMultipart(const std::string& key, std::string_view body) {
  const std::string name = ObjectName(key);
  // Tags the object so a completion whose answer was lost can be recognised.
  const std::string put_id = RandomHex(16);
  PAIL_ASSIGN_OR_RETURN(auto created,
                        Send("POST", UrlFor(name, {{"uploads", ""}}), "",
                             {{"Content-Type", "application/octet-stream"},
                              {std::string("x-amz-meta-") + kPutIdMetadata, put_id}}));
  if (created.status != 200) return ErrorFrom(created, "starting multipart upload of " + key);
  auto upload_id = XmlFindText(created.body, "UploadId");
  if (!upload_id || upload_id->empty()) {
    return Status::Permanent("starting multipart upload of " + key + ": no UploadId in response");
  }

  // S3 takes parts of at least 5 MiB and at most 10,000 of them.
  const size_t part_size =
      std::max({tuning_.part_size, size_t{5} << 20, (body.size() + 9999) / 10000});
  const size_t part_count = (body.size() + part_size - 1) / part_size;
  std::vector<std::string> part_etags(part_count);
  Status status = RunParts(part_count, tuning_.upload_parallelism, [&](size_t i) {
    std::string_view part = body.substr(i * part_size, part_size);
    Query query{{"partNumber", std::to_string(i + 1)}, {"uploadId", *upload_id}};
    return RetryTransient(tuning_.part_attempts, [&]() -> Status {
      PAIL_ASSIGN_OR_RETURN(auto response, Send("PUT", UrlFor(name, query), part, {}));
      if (response.status != 200) {
        return ErrorFrom(response, "uploading part " + std::to_string(i + 1) + " of " + key);
      }
      part_etags[i] = response.Header("etag");
      return Status::OK();
    });
  });

  if (status.ok()) {
    std::string manifest = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < part_count; ++i) {
      manifest += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
                  XmlEscape(part_etags[i]) + "</ETag></Part>";
    }
    manifest += "</CompleteMultipartUpload>";
    std::string etag;
    int attempts = 0;
    status = RetryTransient(tuning_.part_attempts, [&]() -> Status {
      ++attempts;
      PAIL_ASSIGN_OR_RETURN(auto response, Send("POST", UrlFor(name, {{"uploadId", *upload_id}}),
                                                manifest, {{"Content-Type", "application/xml"}}));
      // S3 may report a failed completion inside a 200 response.
      Result<XmlElement> reply = ParseXml(response.body);
      if (response.status != 200 || !reply.ok() || reply->Find("Error")) {
        if (response.status == 200) response.status = 500;
        return ErrorFrom(response, "completing multipart upload of " + key);
      }
      etag = StripEtagQuotes(reply->FindText("ETag").value_or(""));
      return Status::OK();
    });
    // A retried completion that finds no upload may be seeing its own
    // earlier, unanswered success.
    if (status.IsNotFound() && attempts > 1) {
      auto stored = HeadWrite(key);
      if (stored.ok() && stored->put_id == put_id) return stored->etag;
    }
    if (status.ok()) {
      if (!etag.empty()) return etag;
      // RGW answers CompleteMultipartUpload with an empty ETag; HEAD has it.
      PAIL_ASSIGN_OR_RETURN(auto meta, Head(key));
      return meta.etag;
    }
  }
  // Abandoned parts are stored (and billed) until aborted; best effort, the
  // upload's own failure is what the caller needs to hear about.
  (void)Send("DELETE", UrlFor(name, {{"uploadId", *upload_id}}), "", {});
  return status;
}

Result<std::string> S3Store::PutConditional(const std::string& key, std::string_view body,
                                            const std::string* if_match) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  const std::string put_id = RandomHex(16);
  auto attempt = [&]() -> Result<std::string> {
    auto send = [&](bool unquoted) {
      Headers headers{{std::string("x-amz-meta-") + kPutIdMetadata, put_id}};
      if (if_match == nullptr) {
        headers.emplace_back("If-None-Match", "*");
      } else {
        headers.emplace_back("If-Match", unquoted ? *if_match : "\"" + *if_match + "\"");
      }
      return PutSingle(key, body, std::move(headers));
    };
    if (if_match == nullptr) return send(false);
    bool unquoted = unquoted_if_match_.load();
    auto r = send(unquoted);
    // A missing key cannot match any etag.
    if (r.status().IsNotFound()) return Status::PreconditionFailed(r.status().message());
    if (unquoted || !r.status().IsPreconditionFailed()) return r;
    auto current = Head(key);
    if (!current.ok() || current->etag != *if_match) return r;
    // The stored etag is the one we sent, yet the store refused it: it
    // compares without quotes. The unquoted retry is still atomic.
    auto retried = send(true);
    if (retried.ok()) unquoted_if_match_.store(true);
    if (retried.status().IsNotFound()) return Status::PreconditionFailed(retried.status().message());
    return retried;
  };
  return RunConditionalWrite(put_id, tuning_.conditional_attempts, attempt,
                             [&] { return HeadWrite(key); });
}

Result<std::string> S3Store::PutIfAbsent(const std::string& key, std::string_view body) {
  return PutConditional(key, body, nullptr);
}

Result<std::string> S3Store::PutIfMatch(const std::string& key, std::string_view body,
                                        const std::string& etag) {
  std::string normal = StripEtagQuotes(etag);
  return PutConditional(key, body, &normal);
}

Result<ListPage> S3Store::List(const std::string& prefix, const std::string& token, int max_keys) {
  if (max_keys <= 0 || max_keys > kMaxKeysPerRequest) max_keys = kMaxKeysPerRequest;
  Query query{{"list-type", "2"},
              {"max-keys", std::to_string(max_keys)},
              {"prefix", prefix_ + prefix},
              // Keys come back percent-encoded, so any byte survives the XML.
              {"encoding-type", "url"}};
  if (!token.empty()) query["continuation-token"] = token;
  std::string url = UrlFor("", query);
  PAIL_ASSIGN_OR_RETURN(auto response, Send("GET", url, "", {}));
  if (response.status != 200) return ErrorFrom(response, "LIST " + prefix);
  PAIL_ASSIGN_OR_RETURN(XmlElement reply, ParseXml(response.body));
  ListPage page;
  // Stores that ignore encoding-type send raw keys and no EncodingType
  // element. Encoded keys carry a literal '+' as %2B (AWS and RGW alike), so
  // a bare '+' is a space in form encoding.
  const bool encoded = reply.FindText("EncodingType").value_or("") == "url";
  for (const XmlElement* entry : reply.FindAll("Contents")) {
    ObjectMeta meta;
    std::string name = entry->FindText("Key").value_or("");
    if (encoded) name = UriDecode(name, /*plus_is_space=*/true);
    if (name.size() <= prefix_.size() || name.compare(0, prefix_.size(), prefix_) != 0) {
      return Status::Corruption("LIST " + prefix + ": key outside the requested prefix");
    }
    meta.key = name.substr(prefix_.size());
    meta.size = std::strtoull(entry->FindText("Size").value_or("0").c_str(), nullptr, 10);
    meta.etag = StripEtagQuotes(entry->FindText("ETag").value_or(""));
    page.objects.push_back(std::move(meta));
  }
  if (reply.FindText("IsTruncated").value_or("false") == "true") {
    page.next_token = reply.FindText("NextContinuationToken").value_or("");
    if (page.next_token.empty()) {
      return Status::Corruption("LIST " + prefix + ": truncated page without continuation token");
    }
  }
  return page;
}

Status S3Store::Delete(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  PAIL_ASSIGN_OR_RETURN(auto response, Send("DELETE", UrlFor(ObjectName(key), {}), "", {}));
  if (IsSuccess(response.status)) return Status::OK();
  if (response.status == 404 && XmlFindText(response.body, "Code").value_or("") == "NoSuchKey") {
    return Status::OK();
  }
  return ErrorFrom(response, "DELETE " + key);
}

Status S3Store::DeleteMany(const std::vector<std::string>& keys) {
  for (size_t begin = 0; begin < keys.size(); begin += kMaxKeysPerRequest) {
    size_t end = std::min(keys.size(), begin + kMaxKeysPerRequest);
    std::string body = "<Delete><Quiet>true</Quiet>";
    for (size_t i = begin; i < end; ++i) {
      PAIL_RETURN_IF_ERROR(ValidateKey(keys[i]));
      body += "<Object><Key>" + XmlEscape(ObjectName(keys[i])) + "</Key></Object>";
    }
    body += "</Delete>";
    // AWS demands a body checksum on DeleteObjects; SHA-256 is one it takes.
    std::string url = UrlFor("", {{"delete", ""}});
    PAIL_ASSIGN_OR_RETURN(auto response,
                          Send("POST", url, body,
                               {{"Content-Type", "application/xml"},
                                {"x-amz-sdk-checksum-algorithm", "SHA256"},
                                {"x-amz-checksum-sha256", Base64Encode(Sha256(body))}}));
    if (response.status != 200) return ErrorFrom(response, "DeleteObjects");
    PAIL_ASSIGN_OR_RETURN(XmlElement reply, ParseXml(response.body));
    for (const XmlElement* error : reply.FindAll("Error")) {
      std::string code = error->FindText("Code").value_or("");
      if (code == "NoSuchKey") continue;
      return ErrorFrom(code == "AccessDenied" ? 403 : 500, error,
                       "DeleteObjects of " + UriDecode(error->FindText("Key").value_or("")));
    }
  }
  return Status::OK();
}

}  // namespace pail
