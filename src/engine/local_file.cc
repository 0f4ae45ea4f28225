#include "engine/local_file.h"

#include <fstream>
#include <iterator>

namespace pail::engine {

Status WriteLocalFile(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::IOError("cannot write cache file " + path);
  return Status::OK();
}

Result<std::string> ReadLocalFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace pail::engine
