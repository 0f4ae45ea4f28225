// Argument pieces shared by the NFSv3 procedures: file handles and names.
#pragma once

#include <string_view>

#include "fs/filesystem.h"
#include "nfs/file_handle.h"
#include "nfs/nfs3_types.h"
#include "nfs/xdr.h"

namespace pail::nfs {

// Names longer than this are not worth carrying to the core (which allows
// kNameMax); anything between the two is NAMETOOLONG, beyond it garbage.
constexpr uint32_t kMaxDecodedName = 4096;
// Symlink targets, likewise (the core allows kSymlinkMax).
constexpr uint32_t kMaxDecodedPath = 8192;

// A decoded and resolved nfs_fh3. `status` is not NFS3_OK when the bytes
// decoded but are not a handle of ours (BADHANDLE) or name an inode that is
// gone or has another generation (STALE): a number a crash handed out again,
// or a handle someone made up.
struct HandleArg {
  fs::Ino ino = 0;
  Nfsstat3 status = NFS3_OK;
};

inline HandleArg DecodeHandleArg(XdrDecoder& d, fs::FileSystem& fs) {
  std::optional<FileHandle> fh = DecodeFileHandle(d.Opaque(kMaxNfsHandleBytes));
  if (!fh) return {0, NFS3ERR_BADHANDLE};
  fs::FsResult<fs::Attr> resolved = fs.ResolveHandle(fh->ino, fh->generation);
  if (!resolved.ok()) return {0, ErrnoToNfsstat(resolved.error())};
  return {fh->ino, NFS3_OK};
}

// diropargs3: a directory handle and a name in it.
struct DirOpArg {
  HandleArg dir;
  std::string_view name;

  Nfsstat3 status() const {
    if (dir.status != NFS3_OK) return dir.status;
    if (name.size() > fs::kNameMax) return NFS3ERR_NAMETOOLONG;
    return NFS3_OK;
  }
};

inline DirOpArg DecodeDirOpArg(XdrDecoder& d, fs::FileSystem& fs) {
  DirOpArg arg;
  arg.dir = DecodeHandleArg(d, fs);
  arg.name = d.String(kMaxDecodedName);
  return arg;
}

}  // namespace pail::nfs
