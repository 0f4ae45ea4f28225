// Percent-encoding as RFC 3986 defines it, which both SigV4 and Azure Shared
// Key canonicalisation expect: every byte outside the unreserved set
// A-Z a-z 0-9 - . _ ~ becomes %XX (uppercase hex).
#pragma once

#include <string>
#include <string_view>

namespace pail {

// Encodes every byte outside the unreserved set; '/' is kept when
// `keep_slash`, for object keys used as URL paths.
std::string UriEncode(std::string_view text, bool keep_slash = false);

// Decodes %XX sequences; '+' stays '+' unless `plus_is_space` (form
// encoding, which AWS uses for spaces in url-encoded listings).
std::string UriDecode(std::string_view text, bool plus_is_space = false);

}  // namespace pail
