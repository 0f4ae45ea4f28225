#include "objstore/xml_tags.h"

#include <cstdlib>

namespace pail {
namespace {

// Finds the next opening tag "<tag>" or "<tag ...>" or "<tag/>" at or after
// `from`. Returns the position just past '>' and whether it self-closes.
size_t FindOpening(std::string_view xml, std::string_view tag, size_t from, bool* self_closing) {
  while (true) {
    size_t lt = xml.find('<', from);
    if (lt == std::string_view::npos) return std::string_view::npos;
    size_t name_end = lt + 1 + tag.size();
    if (xml.compare(lt + 1, tag.size(), tag) == 0 && name_end < xml.size()) {
      char c = xml[name_end];
      if (c == '>' || c == ' ' || c == '/' || c == '\t' || c == '\n' || c == '\r') {
        size_t gt = xml.find('>', name_end);
        if (gt == std::string_view::npos) return std::string_view::npos;
        *self_closing = xml[gt - 1] == '/';
        return gt + 1;
      }
    }
    from = lt + 1;
  }
}

void AppendUtf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  std::string closing = "</" + std::string(tag) + ">";
  size_t pos = 0;
  while (true) {
    bool self_closing = false;
    size_t begin = FindOpening(xml, tag, pos, &self_closing);
    if (begin == std::string_view::npos) break;
    if (self_closing) {
      out.emplace_back();
      pos = begin;
      continue;
    }
    size_t end = xml.find(closing, begin);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(begin, end - begin));
    pos = end + closing.size();
  }
  return out;
}

std::optional<std::string> XmlText(std::string_view xml, std::string_view tag) {
  auto elements = XmlElements(xml, tag);
  if (elements.empty()) return std::nullopt;
  return XmlUnescape(elements.front());
}

std::string XmlUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      out += text[i];
      continue;
    }
    std::string_view entity = text.substr(i + 1, semi - i - 1);
    if (entity == "amp") out += '&';
    else if (entity == "lt") out += '<';
    else if (entity == "gt") out += '>';
    else if (entity == "quot") out += '"';
    else if (entity == "apos") out += '\'';
    else if (entity.size() > 1 && entity[0] == '#') {
      bool hex = entity[1] == 'x' || entity[1] == 'X';
      std::string digits(entity.substr(hex ? 2 : 1));
      AppendUtf8(out, std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10));
    } else {
      out += text[i];
      continue;
    }
    i = semi;
  }
  return out;
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
