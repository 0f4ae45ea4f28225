// HttpClient: blocking HTTP/1.1 requests over a pool of reusable curl handles.
//
// Each pooled handle keeps its connection open between requests, so a
// backend that sends many small requests pays the TCP (and TLS) handshake
// once per handle, not once per request. The pool never holds more than
// `max_idle_handles` idle handles; a burst beyond that opens extra handles
// which are closed when returned, so memory stays bounded.
//
// Every request has a connect timeout, a stall timeout (too few bytes per
// second for too long) and an overall deadline that grows with the body
// size, so a silent server can never hang a caller.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace pail {

struct HttpClientOptions {
  long connect_timeout_ms = 5000;
  // Deadline of a request without a large body; bodies add time at
  // `min_transfer_bytes_per_sec`.
  long request_timeout_ms = 30000;
  long min_transfer_bytes_per_sec = 1 << 20;
  // A transfer slower than this many bytes per second for
  // `stall_timeout_sec` is aborted as stalled.
  long stall_bytes_per_sec = 1024;
  long stall_timeout_sec = 15;
  size_t max_idle_handles = 16;
};

struct HttpRequest {
  std::string method;  // GET, HEAD, PUT, POST, DELETE
  std::string url;     // already percent-encoded
  // A PUT or POST without Content-Type gets application/octet-stream; a
  // caller that signs Content-Type itself must set it.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;  // sent with PUT and POST; must outlive Send()
  // For S3: "aws:amz:<region>:s3" and "<access key>:<secret>" make libcurl
  // sign the request with SigV4. Empty for unsigned requests.
  std::string aws_sigv4;
  std::string aws_credentials;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;

  // The header's value, or "" when absent.
  std::string Header(const std::string& lowercase_name) const;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Any HTTP status is a successful exchange; only transport failures
  // (refused connection, reset, timeout) return an error, as kRetryable.
  // The error message names the method and the URL without its query, so
  // tokens carried in a query never reach logs.
  Result<HttpResponse> Send(const HttpRequest& request);

 private:
  void* TakeHandle();
  void ReturnHandle(void* handle);

  HttpClientOptions options_;
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* handles
};

// The URL up to (not including) its query string, safe to show in messages.
std::string UrlWithoutQuery(const std::string& url);

}  // namespace pail
