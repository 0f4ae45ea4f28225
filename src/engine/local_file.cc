#include "engine/local_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace pail::engine {

int WriteLocalFileErrno(const std::string& path, std::string_view data, bool append) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0600);
  if (fd < 0) return errno;
  int err = 0;
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (err != 0 && !append) ::unlink(path.c_str());
  return err;
}

Status WriteLocalFile(const std::string& path, std::string_view data, bool append) {
  const int err = WriteLocalFileErrno(path, data, append);
  if (err != 0) return Status::IOError("cannot write cache file " + path + ": " + std::strerror(err));
  return Status::OK();
}

Result<std::string> ReadLocalFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace pail::engine
