#include "nfs/file_handle.h"

namespace pail::nfs {

namespace {

void PutBigEndian64(uint64_t v, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint64_t GetBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string EncodeFileHandle(fs::Ino ino, uint64_t generation) {
  std::string out;
  out.reserve(kFileHandleBytes);
  out.push_back(static_cast<char>(kFileHandleFormat));
  PutBigEndian64(ino, &out);
  PutBigEndian64(generation, &out);
  return out;
}

std::optional<FileHandle> DecodeFileHandle(std::string_view bytes) {
  if (bytes.size() != kFileHandleBytes || static_cast<uint8_t>(bytes[0]) != kFileHandleFormat) {
    return std::nullopt;
  }
  FileHandle handle;
  handle.ino = GetBigEndian64(bytes.data() + 1);
  handle.generation = GetBigEndian64(bytes.data() + 9);
  if (handle.ino == 0) return std::nullopt;
  return handle;
}

}  // namespace pail::nfs
