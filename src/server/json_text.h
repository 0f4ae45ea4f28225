// Minimal JSON text output for the admin endpoint's replies (objects of
// strings and numbers, written once; nothing here parses JSON).
#pragma once

#include <string>
#include <string_view>

namespace pail::server {

// `s` as a quoted JSON string.
std::string JsonString(std::string_view s);
// A finite number (NaN and infinities, which JSON lacks, become 0).
std::string JsonNumber(double v);

}  // namespace pail::server
