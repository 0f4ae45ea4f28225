#include "server/open_file_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace pail::server {

void RaiseOpenFileLimit() {
  rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = limit.rlim_max == RLIM_INFINITY ? kMaxOpenFiles : limit.rlim_max;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    const rlim_t was = limit.rlim_cur;
    limit.rlim_cur = wanted;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      spdlog::warn("open files: could not raise the limit from {} to {}: {}", was, wanted,
                   std::strerror(errno));
      return;
    }
    spdlog::info("open files: limit raised from {} to {}", was, wanted);
  }
}

}  // namespace pail::server
