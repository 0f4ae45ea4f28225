#include "objstore/azure_store.h"

#include <cctype>
#include <cstdio>
#include <ctime>

#include "objstore/digest.h"
#include "objstore/object_store_util.h"
#include "objstore/uri_codec.h"
#include "objstore/xml_document.h"

namespace pail {
namespace {

// Azure's cap on blobs per List Blobs page.
constexpr int kMaxResultsPerPage = 5000;

// RFC 1123 date in GMT, the form x-ms-date wants.
std::string HttpDateNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  static const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsSuccess(long status) { return status >= 200 && status < 300; }

}  // namespace

AzureStore::AzureStore(std::string container, std::string prefix, AzureOptions options,
                       std::string decoded_key, CloudTuning tuning)
    : container_(std::move(container)),
      prefix_(std::move(prefix)),
      options_(std::move(options)),
      key_(std::move(decoded_key)),
      tuning_(tuning),
      http_(tuning.http) {}

Result<std::unique_ptr<AzureStore>> AzureStore::Open(const std::string& url, AzureOptions options,
                                                     CloudTuning tuning) {
  PAIL_ASSIGN_OR_RETURN(BucketUrl parsed, ParseBucketUrl(url, "azure://"));
  std::string container = std::move(parsed.container);
  std::string prefix = std::move(parsed.prefix);
  if (!ValidStoreName(container, "-")) {
    return Status::InvalidArgument("invalid Azure container name '" + container +
                                   "': use 3-63 lowercase letters, digits or '-'");
  }

  options.storage_account_name =
      EnvOr(options.storage_account_name, {"AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT"});
  options.storage_account_key =
      EnvOr(options.storage_account_key, {"AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_KEY"});
  if (options.storage_account_name.empty() || options.storage_account_key.empty()) {
    return Status::InvalidArgument(
        "no Azure credentials: set [azure] storage_account_name and storage_account_key, or "
        "AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY");
  }
  for (char c : options.storage_account_name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      return Status::InvalidArgument("invalid Azure storage account name '" +
                                     options.storage_account_name + "'");
    }
  }
  auto decoded = Base64Decode(options.storage_account_key);
  if (!decoded.ok()) {
    return Status::InvalidArgument("[azure] storage_account_key is not valid base64");
  }
  if (options.endpoint.empty()) {
    options.endpoint = "https://" + options.storage_account_name + ".blob.core.windows.net";
  }
  while (options.endpoint.back() == '/') options.endpoint.pop_back();
  size_t scheme_end = options.endpoint.find("://");
  std::string scheme = scheme_end == std::string::npos ? "" : options.endpoint.substr(0, scheme_end);
  if (scheme != "https" && scheme != "http") {
    return Status::InvalidArgument("Azure endpoint '" + options.endpoint +
                                   "' must start with https:// (or http:// with allow_http)");
  }
  if (scheme == "http" && !options.allow_http) {
    return Status::InvalidArgument("Azure endpoint '" + options.endpoint +
                                   "' is plain http: set [azure] allow_http = true to allow it");
  }
  std::string host_and_path = options.endpoint.substr(scheme_end + 3);
  size_t path_start = host_and_path.find('/');
  std::unique_ptr<AzureStore> store(
      new AzureStore(container, prefix, options, std::move(decoded).value(), tuning));
  if (path_start != std::string::npos) store->endpoint_path_ = host_and_path.substr(path_start);
  PAIL_RETURN_IF_ERROR(store->CheckOrCreateContainer());
  return store;
}

std::string AzureStore::Describe() const {
  return "azure://" + container_ + "/" + prefix_ + " at " + options_.endpoint;
}

std::string AzureStore::BlobUrl(const std::string& key) const {
  return options_.endpoint + "/" + container_ + "/" + UriEncode(ObjectName(key), true);
}

Result<HttpResponse> AzureStore::Send(const std::string& method, const std::string& object_name,
                                      const Query& query, std::string_view body, Headers headers) {
  std::string path = endpoint_path_ + "/" + container_;
  if (!object_name.empty()) path += "/" + UriEncode(object_name, /*keep_slash=*/true);
  std::string url = options_.endpoint.substr(0, options_.endpoint.size() - endpoint_path_.size()) +
                    path;
  char sep = '?';
  for (const auto& [name, value] : query) {
    url += sep;
    url += UriEncode(name) + "=" + UriEncode(value);
    sep = '&';
  }

  bool sends_body = method == "PUT" || method == "POST";
  bool has_content_type = false;
  for (const auto& header : headers) has_content_type |= Lower(header.first) == "content-type";
  // The HTTP client would add this header unsigned; sign it here instead.
  if (sends_body && !has_content_type) headers.emplace_back("Content-Type", "application/octet-stream");
  headers.emplace_back("x-ms-date", HttpDateNow());
  headers.emplace_back("x-ms-version", kAzureApiVersion);
  std::map<std::string, std::string> standard;  // the signed standard headers
  std::map<std::string, std::string> ms;        // x-ms-*, sorted by name
  for (auto& [name, value] : headers) {
    std::string lower = Lower(name);
    if (lower.rfind("x-ms-", 0) == 0) {
      ms[lower] = value;
    } else {
      standard[lower] = value;
    }
  }
  auto std_header = [&](const char* name) {
    auto it = standard.find(name);
    return it == standard.end() ? std::string() : it->second;
  };
  std::string to_sign = method + "\n" +
                        "\n"  // Content-Encoding
                        "\n"  // Content-Language
                        + (sends_body && !body.empty() ? std::to_string(body.size()) : "") + "\n" +
                        "\n"  // Content-MD5
                        + std_header("content-type") + "\n" +
                        "\n"  // Date (x-ms-date is used instead)
                        "\n"  // If-Modified-Since
                        + std_header("if-match") + "\n" + std_header("if-none-match") + "\n" +
                        "\n"  // If-Unmodified-Since
                        "\n";  // Range (x-ms-range is used instead)
  for (const auto& [name, value] : ms) to_sign += name + ":" + value + "\n";
  to_sign += "/" + options_.storage_account_name + path;
  for (const auto& [name, value] : query) to_sign += "\n" + Lower(name) + ":" + value;

  HttpRequest request;
  request.method = method;
  request.url = std::move(url);
  request.body = body;
  request.headers = std::move(headers);
  request.headers.emplace_back("Authorization", "SharedKey " + options_.storage_account_name +
                                                    ":" + Base64Encode(HmacSha256(key_, to_sign)));
  return http_.Send(request);
}

std::string AzureStore::ContainerSasToken(const std::string& expiry) const {
  const std::string permissions = "rwdl";
  // Service SAS string to sign for versions 2020-12-06 and later: 16 fields,
  // empty ones included (start, identifier, IP, protocol, snapshot time,
  // encryption scope, and the five response-header overrides).
  std::string to_sign = permissions + "\n\n" + expiry + "\n/blob/" + options_.storage_account_name +
                        "/" + container_ + "\n\n\n\n" + kAzureApiVersion + "\nc\n\n\n\n\n\n\n";
  std::string sig = Base64Encode(HmacSha256(key_, to_sign));
  return "sv=" + std::string(kAzureApiVersion) + "&sr=c&sp=" + permissions +
         "&se=" + UriEncode(expiry) + "&sig=" + UriEncode(sig);
}

Status AzureStore::ErrorFrom(const HttpResponse& response, const std::string& what) const {
  std::string code = response.Header("x-ms-error-code");
  Result<XmlElement> error = ParseXml(response.body);
  if (code.empty() && error.ok()) code = error->FindText("Code").value_or("");
  std::string message = error.ok() ? error->FindText("Message").value_or("") : "";
  // Azure appends request ids and timestamps on new lines; the first line says it.
  message = message.substr(0, message.find('\n'));
  std::string desc = what + ": HTTP " + std::to_string(response.status);
  if (!code.empty()) desc += " " + code;
  if (!message.empty()) desc += ": " + message;
  long s = response.status;
  if (s == 401 || s == 403) {
    if (code == "AuthenticationFailed" || code == "AuthorizationFailure" || code.empty()) {
      desc += " (Azure refused the Shared Key signature of account '" +
              options_.storage_account_name + "': check [azure] storage_account_key)";
    }
    return Status::PermissionDenied(desc);
  }
  // A vanished container is not a missing blob: nothing written will stick.
  if (code == "ContainerNotFound") {
    return Status::Permanent(desc + " (container '" + container_ + "')");
  }
  if (s == 404) return Status::NotFound(desc);
  if (s == 412 || (s == 409 && code == "BlobAlreadyExists")) {
    return Status::PreconditionFailed(desc);
  }
  if (s == 429 || s >= 500 || code == "ServerBusy" || code == "OperationTimedOut" ||
      code == "ContainerBeingDeleted") {
    return Status::Retryable(desc);
  }
  return Status::Permanent(desc);
}

Status AzureStore::CheckOrCreateContainer() {
  std::string what = "checking container '" + container_ + "' at " + options_.endpoint;
  Query list{{"comp", "list"}, {"maxresults", "1"}, {"prefix", prefix_}, {"restype", "container"}};
  PAIL_ASSIGN_OR_RETURN(auto response, Send("GET", "", list, "", {}));
  if (IsSuccess(response.status)) return Status::OK();
  if (response.Header("x-ms-error-code") != "ContainerNotFound") return ErrorFrom(response, what);

  PAIL_ASSIGN_OR_RETURN(auto created, Send("PUT", "", {{"restype", "container"}}, "", {}));
  if (IsSuccess(created.status)) return Status::OK();
  if (created.Header("x-ms-error-code") == "ContainerAlreadyExists") return Status::OK();
  Status create_status = ErrorFrom(created, "creating missing container '" + container_ + "'");
  if (created.status == 403) {
    return Status::PermissionDenied("container '" + container_ + "' does not exist at " +
                                    options_.endpoint +
                                    " and these credentials may not create it: create it first (" +
                                    create_status.message() + ")");
  }
  return create_status;
}

Result<std::string> AzureStore::Get(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  PAIL_ASSIGN_OR_RETURN(auto response, Send("GET", ObjectName(key), {}, "", {}));
  if (response.status != 200) return ErrorFrom(response, "GET " + key);
  return std::move(response.body);
}

Result<std::string> AzureStore::GetRange(const std::string& key, uint64_t offset,
                                         uint64_t length) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  if (length == 0) {
    // Nothing to read, but a missing key must still say so.
    PAIL_RETURN_IF_ERROR(Head(key).status());
    return std::string();
  }
  std::string range = "bytes=" + std::to_string(offset) + "-";
  if (length - 1 <= UINT64_MAX - offset) range += std::to_string(offset + length - 1);
  PAIL_ASSIGN_OR_RETURN(auto response, Send("GET", ObjectName(key), {}, "", {{"x-ms-range", range}}));
  if (response.status == 206) return std::move(response.body);
  if (response.status == 200) return SliceRange(response.body, offset, length);
  // The blob exists but the range starts at or past its end.
  if (response.status == 416) return std::string();
  return ErrorFrom(response, "GET range of " + key);
}

Result<ObjectMeta> AzureStore::Head(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  PAIL_ASSIGN_OR_RETURN(auto response, Send("HEAD", ObjectName(key), {}, "", {}));
  if (response.status != 200) return ErrorFrom(response, "HEAD " + key);
  ObjectMeta meta;
  meta.key = key;
  meta.size = std::strtoull(response.Header("content-length").c_str(), nullptr, 10);
  meta.etag = StripEtagQuotes(response.Header("etag"));
  return meta;
}

Result<StoredWrite> AzureStore::HeadWrite(const std::string& key) {
  PAIL_ASSIGN_OR_RETURN(auto response, Send("HEAD", ObjectName(key), {}, "", {}));
  if (response.status != 200) return ErrorFrom(response, "HEAD " + key);
  return StoredWrite{StripEtagQuotes(response.Header("etag")),
                     response.Header(std::string("x-ms-meta-") + kPutIdMetadata)};
}

Result<std::string> AzureStore::Write(const std::string& key, std::string_view body,
                                      Headers conditions) {
  const std::string name = ObjectName(key);
  if (body.size() <= tuning_.multipart_threshold) {
    conditions.emplace_back("x-ms-blob-type", "BlockBlob");
    PAIL_ASSIGN_OR_RETURN(auto response, Send("PUT", name, {}, body, std::move(conditions)));
    if (response.status != 201) return ErrorFrom(response, "PUT " + key);
    return StripEtagQuotes(response.Header("etag"));
  }

  // Block ids must all have the same length; a random nonce keeps the blocks
  // of concurrent writers of one blob apart.
  const std::string nonce = RandomHex(12);
  const size_t part_size = tuning_.part_size;
  const size_t part_count = (body.size() + part_size - 1) / part_size;
  auto block_id = [&](size_t i) {
    char index[24];
    std::snprintf(index, sizeof index, "%06zu", i);
    return Base64Encode(nonce + "-" + index);
  };
  Status status = RunParts(part_count, tuning_.upload_parallelism, [&](size_t i) {
    std::string_view part = body.substr(i * part_size, part_size);
    Query query{{"blockid", block_id(i)}, {"comp", "block"}};
    return RetryTransient(tuning_.part_attempts, [&]() -> Status {
      PAIL_ASSIGN_OR_RETURN(auto response, Send("PUT", name, query, part, {}));
      if (response.status != 201) {
        return ErrorFrom(response, "uploading block " + std::to_string(i) + " of " + key);
      }
      return Status::OK();
    });
  });
  PAIL_RETURN_IF_ERROR(status);
  std::string list = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
  for (size_t i = 0; i < part_count; ++i) list += "<Latest>" + block_id(i) + "</Latest>";
  list += "</BlockList>";
  conditions.emplace_back("Content-Type", "application/xml");
  PAIL_ASSIGN_OR_RETURN(auto response,
                        Send("PUT", name, {{"comp", "blocklist"}}, list, std::move(conditions)));
  if (response.status != 201) return ErrorFrom(response, "committing blocks of " + key);
  return StripEtagQuotes(response.Header("etag"));
}

Result<std::string> AzureStore::Put(const std::string& key, std::string_view body) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  return Write(key, body, {});
}

Result<std::string> AzureStore::PutConditional(const std::string& key, std::string_view body,
                                               const std::string* if_match) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  const std::string put_id = RandomHex(16);
  auto attempt = [&]() -> Result<std::string> {
    Headers headers{{std::string("x-ms-meta-") + kPutIdMetadata, put_id}};
    if (if_match == nullptr) {
      headers.emplace_back("If-None-Match", "*");
    } else {
      headers.emplace_back("If-Match", "\"" + *if_match + "\"");
    }
    auto r = Write(key, body, std::move(headers));
    // A missing blob cannot match any etag.
    if (if_match != nullptr && r.status().IsNotFound()) {
      return Status::PreconditionFailed(r.status().message());
    }
    return r;
  };
  return RunConditionalWrite(put_id, tuning_.conditional_attempts, attempt,
                             [&] { return HeadWrite(key); });
}

Result<std::string> AzureStore::PutIfAbsent(const std::string& key, std::string_view body) {
  return PutConditional(key, body, nullptr);
}

Result<std::string> AzureStore::PutIfMatch(const std::string& key, std::string_view body,
                                           const std::string& etag) {
  std::string normal = StripEtagQuotes(etag);
  return PutConditional(key, body, &normal);
}

Result<ListPage> AzureStore::List(const std::string& prefix, const std::string& token,
                                  int max_keys) {
  if (max_keys <= 0 || max_keys > kMaxResultsPerPage) max_keys = kMaxResultsPerPage;
  Query query{{"comp", "list"},
              {"maxresults", std::to_string(max_keys)},
              {"prefix", prefix_ + prefix},
              {"restype", "container"}};
  if (!token.empty()) query["marker"] = token;
  PAIL_ASSIGN_OR_RETURN(auto response, Send("GET", "", query, "", {}));
  if (response.status != 200) return ErrorFrom(response, "LIST " + prefix);
  PAIL_ASSIGN_OR_RETURN(XmlElement reply, ParseXml(response.body));
  ListPage page;
  for (const XmlElement* blob : reply.FindAll("Blob")) {
    const XmlElement* name_element = blob->Find("Name");
    std::string name = name_element ? name_element->text : "";
    // Names with characters XML cannot carry come percent-encoded.
    if (name_element && name_element->Attribute("Encoded") == "true") name = UriDecode(name);
    if (name.size() <= prefix_.size() || name.compare(0, prefix_.size(), prefix_) != 0) {
      return Status::Corruption("LIST " + prefix + ": blob outside the requested prefix");
    }
    ObjectMeta meta;
    meta.key = name.substr(prefix_.size());
    meta.size = std::strtoull(blob->FindText("Content-Length").value_or("0").c_str(), nullptr, 10);
    meta.etag = StripEtagQuotes(blob->FindText("Etag").value_or(""));
    page.objects.push_back(std::move(meta));
  }
  page.next_token = reply.FindText("NextMarker").value_or("");
  return page;
}

Status AzureStore::Delete(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  PAIL_ASSIGN_OR_RETURN(auto response, Send("DELETE", ObjectName(key), {}, "", {}));
  if (IsSuccess(response.status)) return Status::OK();
  if (response.status == 404 && response.Header("x-ms-error-code") == "BlobNotFound") {
    return Status::OK();
  }
  return ErrorFrom(response, "DELETE " + key);
}

}  // namespace pail
