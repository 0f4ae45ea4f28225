// The open mode behind a handle, for calls that act on an open file (the
// range calls: fallocate, lseek, copy_file_range).
#include "fs/filesystem_impl.h"

namespace pail::fs {

FsResult<int> FileSystemImpl::HandleFlags(uint64_t handle, Ino ino) {
  MutexLock g(&handles_mu_);
  auto it = handles_.find(handle);
  if (it == handles_.end() || it->second.ino != ino) return FsError{EBADF};
  return it->second.flags;
}

}  // namespace pail::fs
