// Whole-file reads and writes of the local cache dir.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace pail::engine {

Status WriteLocalFile(const std::string& path, std::string_view data);
Result<std::string> ReadLocalFile(const std::string& path);

}  // namespace pail::engine
