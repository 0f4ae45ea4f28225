// Whole-file reads and writes of the local cache dir.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace pail::engine {

// Writes `data` as the whole file at `path` (created or truncated), or
// appends it with `append`. Returns 0 or the errno of the failure (ENOSPC
// for a write the disk cut short); a new file that failed is removed.
int WriteLocalFileErrno(const std::string& path, std::string_view data, bool append = false);
// The same, with the failure as a Status naming the path and the error.
Status WriteLocalFile(const std::string& path, std::string_view data, bool append = false);
Result<std::string> ReadLocalFile(const std::string& path);

}  // namespace pail::engine
