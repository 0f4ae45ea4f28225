#include "engine/current_object.h"

#include <charconv>

namespace pail::engine {

std::string EncodeCurrentObject(std::string_view rocksdb_current, const std::set<uint64_t>& lineage) {
  std::string out(rocksdb_current);
  out += kLineagePrefix;
  for (uint64_t e : lineage) out += " " + std::to_string(e);
  out += '\n';
  return out;
}

Result<CurrentObject> DecodeCurrentObject(std::string_view body, const std::string& key) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption(key + " is not a CURRENT pailfs wrote (" + why + ")");
  };
  size_t eol = body.find('\n');
  if (eol == std::string_view::npos) return bad("no line end");
  CurrentObject out;
  out.rocksdb_current = std::string(body.substr(0, eol + 1));
  out.manifest = std::string(body.substr(0, eol));
  if (out.manifest.rfind("MANIFEST-", 0) != 0 || out.manifest.find('/') != std::string::npos) {
    return bad("it names no manifest");
  }
  std::string_view rest = body.substr(eol + 1);
  if (rest.empty()) return out;
  const std::string_view prefix(kLineagePrefix);
  if (rest.substr(0, prefix.size()) != prefix || rest.back() != '\n') return bad("bad lineage line");
  rest = rest.substr(prefix.size(), rest.size() - prefix.size() - 1);
  std::set<uint64_t> lineage;
  while (!rest.empty()) {
    if (rest.front() != ' ') return bad("bad lineage line");
    rest.remove_prefix(1);
    uint64_t e = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), e);
    if (ec != std::errc() || e == 0) return bad("bad lineage epoch");
    lineage.insert(e);
    rest.remove_prefix(static_cast<size_t>(ptr - rest.data()));
  }
  out.lineage = std::move(lineage);
  return out;
}

}  // namespace pail::engine
