#include "objstore/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <strings.h>
#include <mutex>

namespace pail {
namespace {

// Larger than curl's 16 KiB defaults so large bodies move in fewer, bigger
// system calls, yet small enough to stay in cache while the received bytes
// are copied out; a full pool of 16 handles holds under 12 MiB of buffers.
constexpr long kDownloadBufferBytes = 128 * 1024;
constexpr long kUploadBufferBytes = 512 * 1024;
// Bodies are preallocated from Content-Length only up to this size; beyond
// it the string grows as bytes arrive, so a lying header cannot make us
// allocate gigabytes up front.
constexpr size_t kMaxPreallocBytes = 256u << 20;

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpResponse* response = nullptr;
  bool expects_body = true;  // false for HEAD, whose Content-Length describes no bytes sent
  std::chrono::steady_clock::time_point start;
  long base_timeout_ms = 0;
  long min_bytes_per_sec = 1;
  bool deadline_passed = false;
};

size_t WriteBody(char* data, size_t size, size_t nmemb, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  t->response->body.append(data, size * nmemb);
  return size * nmemb;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

size_t WriteHeader(char* data, size_t size, size_t nitems, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  std::string_view line(data, size * nitems);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line (after "100 Continue" or a redirect) starts a new
    // header block; only the final one describes the response.
    t->response->headers.clear();
    return size * nitems;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * nitems;
  std::string name = Trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  std::string value = Trim(line.substr(colon + 1));
  if (name == "content-length" && t->expects_body) {
    size_t expected = std::strtoull(value.c_str(), nullptr, 10);
    t->response->body.reserve(std::min(expected, kMaxPreallocBytes));
  }
  t->response->headers[name] = std::move(value);
  return size * nitems;
}

// Aborts the transfer once it has run longer than the base timeout plus the
// time its known sizes need at the minimum acceptable rate.
int CheckDeadline(void* userdata, curl_off_t dltotal, curl_off_t, curl_off_t ultotal, curl_off_t) {
  auto* t = static_cast<Transfer*>(userdata);
  long long budget_ms = t->base_timeout_ms +
                        (static_cast<long long>(dltotal) + static_cast<long long>(ultotal)) * 1000 /
                            t->min_bytes_per_sec;
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - t->start)
                     .count();
  if (elapsed > budget_ms) {
    t->deadline_passed = true;
    return 1;
  }
  return 0;
}

}  // namespace

std::string HttpResponse::Header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

std::string UrlWithoutQuery(const std::string& url) { return url.substr(0, url.find('?')); }

HttpClient::HttpClient(HttpClientOptions options) : options_(options) { GlobalInitOnce(); }

HttpClient::~HttpClient() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpClient::TakeHandle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpClient::ReturnHandle(void* handle) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < options_.max_idle_handles) {
      idle_.push_back(handle);
      return;
    }
  }
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(TakeHandle());
  if (curl == nullptr) return Status::IOError("curl_easy_init failed");
  // reset clears options but keeps the open connection and DNS cache.
  curl_easy_reset(curl);

  HttpResponse response;
  Transfer transfer;
  transfer.response = &response;
  transfer.expects_body = request.method != "HEAD";
  transfer.start = std::chrono::steady_clock::now();
  transfer.base_timeout_ms = options_.request_timeout_ms;
  transfer.min_bytes_per_sec = std::max(1L, options_.min_transfer_bytes_per_sec);
  char error_buffer[CURL_ERROR_SIZE] = {0};

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // Object keys may contain "./" or "../" segments; they are names, not paths.
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, options_.stall_bytes_per_sec);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options_.stall_timeout_sec);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, CheckDeadline);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, kDownloadBufferBytes);
  curl_easy_setopt(curl, CURLOPT_UPLOAD_BUFFERSIZE, kUploadBufferBytes);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);

  const std::string& m = request.method;
  if (m == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (m == "PUT" || m == "POST") {
    // The body goes out from the caller's buffer as "post fields" for PUT
    // too: the length is always known (RGW refuses chunked uploads), curl
    // can rewind it on its own, and curl adds "Expect: 100-continue" only
    // above 1 MiB, so a small upload costs one round trip, not two.
    static const char kEmpty[] = "";
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS,
                     request.body.empty() ? kEmpty : request.body.data());
    if (m == "PUT") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
  } else if (m != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, m.c_str());
  }

  struct curl_slist* header_list = nullptr;
  bool has_content_type = false;
  for (const auto& [name, value] : request.headers) {
    std::string line = name + ": " + value;
    header_list = curl_slist_append(header_list, line.c_str());
    has_content_type = has_content_type || strcasecmp(name.c_str(), "content-type") == 0;
  }
  // Post fields would otherwise be labelled as a submitted form.
  if ((m == "PUT" || m == "POST") && !has_content_type) {
    header_list = curl_slist_append(header_list, "Content-Type: application/octet-stream");
  }
  if (header_list != nullptr) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list);
  if (!request.aws_sigv4.empty()) {
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, request.aws_sigv4.c_str());
    curl_easy_setopt(curl, CURLOPT_USERPWD, request.aws_credentials.c_str());
  }

  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_slist_free_all(header_list);
  // Credentials must not linger in a pooled handle; reset drops them.
  curl_easy_reset(curl);

  if (rc != CURLE_OK) {
    // A failed transfer may leave the connection in an unknown state; a
    // fresh handle starts clean.
    curl_easy_cleanup(curl);
    std::string what = transfer.deadline_passed ? "request deadline passed"
                       : error_buffer[0] != 0   ? std::string(error_buffer)
                                                : std::string(curl_easy_strerror(rc));
    return Status::Retryable(m + " " + UrlWithoutQuery(request.url) + ": " + what);
  }
  ReturnHandle(curl);
  return response;
}

}  // namespace pail
