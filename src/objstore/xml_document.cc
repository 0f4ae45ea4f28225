#include "objstore/xml_document.h"

#include <expat.h>

#include <climits>
#include <memory>

namespace pail {
namespace {

// Expat joins a namespace URI and a local name with this byte; it cannot
// occur in either.
constexpr char kNamespaceSeparator = '\x01';

std::string LocalName(const XML_Char* qualified) {
  std::string_view name(qualified);
  size_t sep = name.rfind(kNamespaceSeparator);
  return std::string(sep == std::string_view::npos ? name : name.substr(sep + 1));
}

struct TreeBuilder {
  XML_Parser parser = nullptr;
  XmlElement root;
  bool has_root = false;
  // Open elements, innermost last. Pointers stay valid: an element's
  // vector of children grows only while that element is innermost.
  std::vector<XmlElement*> open;
  std::string error;

  void Fail(std::string why) {
    if (error.empty()) error = std::move(why);
    XML_StopParser(parser, XML_FALSE);
  }
};

void XMLCALL OnStart(void* data, const XML_Char* name, const XML_Char** attributes) {
  auto* b = static_cast<TreeBuilder*>(data);
  if (b->open.size() >= static_cast<size_t>(kMaxXmlDepth)) {
    b->Fail("nested deeper than " + std::to_string(kMaxXmlDepth) + " elements");
    return;
  }
  XmlElement* e;
  if (b->open.empty()) {
    b->has_root = true;
    e = &b->root;
  } else {
    e = &b->open.back()->children.emplace_back();
  }
  e->name = LocalName(name);
  for (const XML_Char** a = attributes; a[0] != nullptr; a += 2) {
    e->attributes.emplace_back(LocalName(a[0]), a[1]);
  }
  b->open.push_back(e);
}

void XMLCALL OnEnd(void* data, const XML_Char*) {
  static_cast<TreeBuilder*>(data)->open.pop_back();
}

void XMLCALL OnText(void* data, const XML_Char* text, int len) {
  auto* b = static_cast<TreeBuilder*>(data);
  if (!b->open.empty()) b->open.back()->text.append(text, static_cast<size_t>(len));
}

void XMLCALL OnDoctype(void* data, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  static_cast<TreeBuilder*>(data)->Fail("document type declarations are not accepted");
}

void FindAllInto(const XmlElement& e, std::string_view name,
                 std::vector<const XmlElement*>* out) {
  if (e.name == name) {
    out->push_back(&e);
    return;
  }
  for (const XmlElement& child : e.children) FindAllInto(child, name, out);
}

}  // namespace

const XmlElement* XmlElement::Find(std::string_view wanted) const {
  if (name == wanted) return this;
  for (const XmlElement& child : children) {
    if (const XmlElement* found = child.Find(wanted)) return found;
  }
  return nullptr;
}

std::vector<const XmlElement*> XmlElement::FindAll(std::string_view wanted) const {
  std::vector<const XmlElement*> out;
  FindAllInto(*this, wanted, &out);
  return out;
}

std::optional<std::string> XmlElement::FindText(std::string_view wanted) const {
  const XmlElement* e = Find(wanted);
  if (e == nullptr) return std::nullopt;
  return e->text;
}

std::optional<std::string> XmlElement::Attribute(std::string_view wanted) const {
  for (const auto& [key, value] : attributes) {
    if (key == wanted) return value;
  }
  return std::nullopt;
}

Result<XmlElement> ParseXml(std::string_view document) {
  // S3 keeps a slow CompleteMultipartUpload alive by sending spaces before
  // the reply, which would put the XML declaration out of place.
  size_t start = document.find_first_not_of(" \t\r\n");
  document.remove_prefix(start == std::string_view::npos ? document.size() : start);
  if (document.size() > static_cast<size_t>(INT_MAX)) {
    return Status::Corruption("XML document too large");
  }
  std::unique_ptr<std::remove_pointer_t<XML_Parser>, decltype(&XML_ParserFree)> parser(
      XML_ParserCreateNS(nullptr, kNamespaceSeparator), &XML_ParserFree);
  if (!parser) return Status::IOError("cannot create an XML parser");
  TreeBuilder builder;
  builder.parser = parser.get();
  XML_SetUserData(parser.get(), &builder);
  XML_SetElementHandler(parser.get(), OnStart, OnEnd);
  XML_SetCharacterDataHandler(parser.get(), OnText);
  XML_SetStartDoctypeDeclHandler(parser.get(), OnDoctype);
  if (XML_Parse(parser.get(), document.data(), static_cast<int>(document.size()), XML_TRUE) !=
      XML_STATUS_OK) {
    std::string why = builder.error.empty() ? XML_ErrorString(XML_GetErrorCode(parser.get()))
                                            : builder.error;
    return Status::Corruption("malformed XML at line " +
                              std::to_string(XML_GetCurrentLineNumber(parser.get())) + ": " + why);
  }
  if (!builder.has_root) return Status::Corruption("XML document without an element");
  return std::move(builder.root);
}

std::optional<std::string> XmlFindText(std::string_view document, std::string_view name) {
  Result<XmlElement> parsed = ParseXml(document);
  if (!parsed.ok()) return std::nullopt;
  return parsed->FindText(name);
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace pail
