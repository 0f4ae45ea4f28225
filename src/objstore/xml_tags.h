// A tiny extractor for the flat XML that S3 and Azure answer with.
//
// Listing and error responses are machine-written documents with no
// attributes we need, no CDATA and no comments inside the elements we read,
// so finding "<Tag>...</Tag>" spans is enough. Attributes on the opening tag
// are tolerated ("<Name a='b'>"); a self-closing "<Tag/>" reads as empty.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pail {

// The raw (still escaped) content of each top-level-or-nested <tag> element
// in order of appearance. Elements of the same name must not nest.
std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view tag);

// The unescaped text of the first <tag> element, or nullopt when absent.
std::optional<std::string> XmlText(std::string_view xml, std::string_view tag);

// Decodes the five predefined entities and numeric character references
// (&#NN; and &#xHH;, emitted as UTF-8).
std::string XmlUnescape(std::string_view text);

// Escapes &, <, >, " and ' for use inside an element.
std::string XmlEscape(std::string_view text);

}  // namespace pail
