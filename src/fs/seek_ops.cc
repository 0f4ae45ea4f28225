// lseek SEEK_DATA / SEEK_HOLE, answered from the data/hole map
// (MapExtents), so buffered and stored data count alike.
#include "fs/filesystem_impl.h"

namespace pail::fs {

namespace {
// Runs asked of MapExtents per call; a seek over more of them asks again.
constexpr size_t kSeekScanExtents = 256;
}  // namespace

FsResult<uint64_t> FileSystemImpl::Seek(const Credentials& cred, Ino ino, uint64_t offset,
                                        SeekFor what, uint64_t handle) {
  if (handle != 0) {
    FsResult<int> flags = HandleFlags(handle, ino);
    if (!flags.ok()) return flags.status();
  }
  // An open handle may seek whatever its mode; MapExtents checks none then.
  const Credentials as = handle != 0 ? Credentials::Root() : cred;
  uint64_t pos = offset;
  bool at_start = true;
  for (;;) {
    FsResult<std::vector<Extent>> runs =
        MapExtents(as, ino, pos, UINT64_MAX - pos, kSeekScanExtents);
    if (!runs.ok()) return runs.status();
    if (runs->empty()) {
      // `pos` is at or past the end of the file. Asked there, or looking
      // for data after nothing but holes: there is none.
      if (at_start || what == SeekFor::kData) return FsError{ENXIO};
      return pos;  // the end of the file is a hole
    }
    at_start = false;
    for (const Extent& e : *runs) {
      if (e.data == (what == SeekFor::kData)) return std::max(e.offset, offset);
    }
    pos = runs->back().offset + runs->back().length;
  }
}

}  // namespace pail::fs
