// The XML that S3 and Azure answer with, parsed by expat into a small tree.
//
// Names are local: a namespace (xmlns="...", or a prefix as in "s3:Key") is
// dropped, since the few elements we read are unambiguous within one reply.
// Text has the predefined entities, character references and CDATA
// sections decoded, as any conforming parser does. A document type
// declaration is refused: the stores never send one, and internal entities
// are how expansion bombs start.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace pail {

// Deeper documents are refused; replies nest four or five levels.
inline constexpr int kMaxXmlDepth = 64;

struct XmlElement {
  std::string name;  // local name
  std::vector<std::pair<std::string, std::string>> attributes;  // local names
  std::string text;  // the element's own character data, decoded
  std::vector<XmlElement> children;

  // This element or the first descendant called `name`, in document order.
  const XmlElement* Find(std::string_view name) const;
  // Every element called `name` at or below this one, in document order;
  // the search does not look inside a match.
  std::vector<const XmlElement*> FindAll(std::string_view name) const;
  // The text of Find(name), or nullopt when there is none.
  std::optional<std::string> FindText(std::string_view name) const;
  std::optional<std::string> Attribute(std::string_view name) const;
};

// The document element of `document` (leading whitespace skipped); Corruption
// when it is not well-formed
// XML, has a document type declaration or nests deeper than kMaxXmlDepth.
Result<XmlElement> ParseXml(std::string_view document);

// FindText(name) on the parsed document, or nullopt when the document is not
// XML at all (error replies may be empty or come from a proxy as HTML).
std::optional<std::string> XmlFindText(std::string_view document, std::string_view name);

// Escapes &, <, >, " and ' for use inside an element or attribute.
std::string XmlEscape(std::string_view text);

}  // namespace pail
