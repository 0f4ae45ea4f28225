#include "server/admin_client.h"

#include <curl/curl.h>

namespace pail::server {
namespace {

// A flush waits for the bucket; anything slower than this is reported.
constexpr long kRequestTimeoutSeconds = 600;
constexpr long kConnectTimeoutSeconds = 5;
// Replies are short texts; a larger one is not from our server.
constexpr size_t kMaxReplyBytes = 4 << 20;

size_t Append(char* data, size_t size, size_t n, void* user) {
  auto* out = static_cast<std::string*>(user);
  if (out->size() + size * n > kMaxReplyBytes) return 0;
  out->append(data, size * n);
  return size * n;
}

}  // namespace

Result<AdminResponse> CallAdmin(const Config& config, const std::string& method,
                                const std::string& path_and_query) {
  if (!config.admin.enabled) {
    return Status::InvalidArgument("the config has no [servers.admin] section; add one (and restart "
                                   "the server) to use this command");
  }
  std::string url;
  std::string where;
  if (!config.admin.unix_socket.empty()) {
    url = "http://localhost" + path_and_query;
    where = config.admin.unix_socket;
  } else {
    const std::string& address = config.admin.addresses.front();
    if (address.size() >= 2 && address.compare(address.size() - 2, 2, ":0") == 0) {
      return Status::InvalidArgument("[servers.admin] address " + address +
                                     " has port 0, which the CLI cannot find; give a port or a unix_socket");
    }
    std::string host = address;
    if (host.rfind("0.0.0.0:", 0) == 0) host = "127.0.0.1" + host.substr(7);
    if (host.rfind("[::]:", 0) == 0) host = "[::1]" + host.substr(4);
    url = "http://" + host + path_and_query;
    where = address;
  }
  CURL* curl = curl_easy_init();
  if (!curl) return Status::IOError("curl_easy_init failed");
  AdminResponse response;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  if (!config.admin.unix_socket.empty()) {
    curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, config.admin.unix_socket.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, kRequestTimeoutSeconds);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  if (method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.http_status);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    if (rc == CURLE_COULDNT_CONNECT) {
      return Status::Retryable("no pailfs server answers on " + where + " (is it running?)");
    }
    return Status::IOError("admin request to " + where + ": " + curl_easy_strerror(rc));
  }
  return response;
}

}  // namespace pail::server
