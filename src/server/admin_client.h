// The CLI's side of the admin endpoint: one HTTP request to the running
// server named by a config's [servers.admin] (its Unix socket when set,
// else its first address).
#pragma once

#include <string>

#include "server/config.h"
#include "util/status.h"

namespace pail::server {

struct AdminResponse {
  long http_status = 0;
  std::string body;
};

// kInvalidArgument: the config has no usable admin endpoint;
// kRetryable: nothing answers there (the server is not running).
Result<AdminResponse> CallAdmin(const Config& config, const std::string& method,
                                const std::string& path_and_query);

}  // namespace pail::server
