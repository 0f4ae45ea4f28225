// copy_file_range inside the filesystem: the bytes go from the source to
// the destination here, never through the caller.
//
// The source is walked by its data/hole map: data runs are copied by Read
// and Write in pieces of at most a file's write-back share (each piece
// holds the locks of one file at a time, so copies and writers interleave
// as their reads and writes would), and hole runs become holes in the
// destination (punched only where it holds data, keeping what it reserved),
// so a sparse source stays sparse. The size, mtime and ctime of the
// destination are settled last.
#include <fcntl.h>

#include <algorithm>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
// Runs of the source asked of MapExtents per call.
constexpr size_t kCopyScanExtents = 256;
// Bytes read and written per piece, at most.
constexpr uint64_t kCopyPieceBytes = 1u << 20;
}  // namespace

FsResult<uint64_t> FileSystemImpl::CopyData(const Credentials& cred, const CopyRangeRequest& req,
                                            uint64_t in_offset, uint64_t length) {
  const uint64_t piece_bytes = std::min<uint64_t>(
      kCopyPieceBytes, std::max<uint64_t>(kChunkSize, options_.write_back_file_bytes));
  uint64_t copied = 0;
  while (copied < length) {
    uint32_t n = static_cast<uint32_t>(std::min(piece_bytes, length - copied));
    FsResult<ReadResult> read = Read(cred, req.in, in_offset + copied, n, req.in_handle);
    if (!read.ok()) {
      if (copied > 0) return copied;
      return read.status();
    }
    if (read->data.empty()) break;  // the source shrank meanwhile
    uint64_t out_offset = req.out_offset + (in_offset - req.in_offset) + copied;
    FsResult<WriteResult> written = Write(cred, req.out, out_offset, read->data, req.out_handle);
    if (!written.ok()) {
      if (copied > 0) return copied;
      return written.status();
    }
    copied += written->written;
    if (written->written < read->data.size() || read->data.size() < n) break;
  }
  return copied;
}

FsStatus FileSystemImpl::ClearRange(const Credentials& cred, Ino ino, uint64_t offset,
                                    uint64_t length) {
  FsResult<std::vector<Extent>> runs = MapExtents(Credentials::Root(), ino, offset, length, 2);
  if (!runs.ok()) return runs.status();
  bool has_data = std::any_of(runs->begin(), runs->end(), [](const Extent& e) { return e.data; });
  if (!has_data) return {};
  FsResult<Attr> zeroed = ZeroRange(cred, ino, offset, length, /*release=*/false);
  return zeroed.status();
}

FsResult<uint64_t> FileSystemImpl::CopyFileRange(const Credentials& cred,
                                                 const CopyRangeRequest& req) {
  // The checks in the order Linux's copy_file_range makes them.
  std::optional<int> in_flags, out_flags;
  if (req.in_handle != 0) {
    FsResult<int> f = HandleFlags(req.in_handle, req.in);
    if (!f.ok()) return f.status();
    in_flags = *f;
  }
  if (req.out_handle != 0) {
    FsResult<int> f = HandleFlags(req.out_handle, req.out);
    if (!f.ok()) return f.status();
    out_flags = *f;
  }
  uint64_t in_size = 0;
  {
    InodeLocks lock(locks_, {req.in, req.out});
    FsResult<InodeRecord> in = LoadInode(req.in);
    if (!in.ok()) return in.status();
    FsResult<InodeRecord> out = LoadInode(req.out);
    if (!out.ok()) return out.status();
    if (in->is_dir() || out->is_dir()) return FsError{EISDIR};
    if (!in->is_reg() || !out->is_reg()) return FsError{EINVAL};
    if (in_flags && (*in_flags & O_ACCMODE) == O_WRONLY) return FsError{EBADF};
    if (out_flags && ((*out_flags & O_ACCMODE) == O_RDONLY || (*out_flags & O_APPEND))) {
      return FsError{EBADF};
    }
    if (!in_flags && cred.uid != in->uid && !MayAccess(cred, *in, kMayRead)) {
      return FsError{EACCES};
    }
    if (!out_flags && cred.uid != out->uid && !MayAccess(cred, *out, kMayWrite)) {
      return FsError{EACCES};
    }
    in_size = in->size;
  }
  if (req.in_offset + req.length < req.in_offset || req.out_offset + req.length < req.out_offset) {
    return FsError{EOVERFLOW};
  }
  uint64_t count = req.in_offset >= in_size ? 0 : std::min(req.length, in_size - req.in_offset);
  if (req.out_offset >= kMaxFileSize) return FsError{EFBIG};
  count = std::min(count, kMaxFileSize - req.out_offset);
  if (req.in == req.out && req.out_offset + count > req.in_offset &&
      req.out_offset < req.in_offset + count) {
    return FsError{EINVAL};
  }
  if (count == 0) return uint64_t{0};
  count = std::min(count, kMaxCopyBytes);
  if (engine_.fenced()) return FsError{EROFS};

  // An open output handle carries the right to write; the punches made on
  // its behalf check none then.
  const Credentials punch_as = out_flags ? Credentials::Root() : cred;
  const uint64_t in_end = req.in_offset + count;
  uint64_t pos = req.in_offset;  // everything before is copied
  FsStatus failure;
  bool stop = false;  // the source shrank meanwhile
  while (pos < in_end && failure.ok() && !stop) {
    FsResult<std::vector<Extent>> runs =
        MapExtents(Credentials::Root(), req.in, pos, in_end - pos, kCopyScanExtents);
    if (!runs.ok()) {
      failure = runs.status();
      break;
    }
    if (runs->empty()) break;  // the source shrank
    for (const Extent& e : *runs) {
      if (e.data) {
        FsResult<uint64_t> copied = CopyData(cred, req, e.offset, e.length);
        if (!copied.ok()) {
          failure = copied.status();
          break;
        }
        pos = e.offset + *copied;
        if (*copied < e.length) {
          stop = true;
          break;
        }
      } else {
        FsStatus cleared =
            ClearRange(punch_as, req.out, req.out_offset + (e.offset - req.in_offset), e.length);
        if (!cleared.ok()) {
          failure = cleared;
          break;
        }
        pos = e.offset + e.length;
      }
    }
  }
  uint64_t done = pos - req.in_offset;
  if (done == 0) {
    if (!failure.ok()) return failure;
    return uint64_t{0};
  }
  // Holes copied past the destination's end still make it that long.
  FsResult<Attr> finished =
      FinishRangeChange(cred, req.out, /*grow=*/true, req.out_offset + done, /*touch_mtime=*/true);
  if (!finished.ok()) return finished.status();
  return done;
}

}  // namespace pail::fs
