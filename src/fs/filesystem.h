// FileSystem: the protocol-free POSIX core of pailfs, addressed by inode
// numbers. FUSE, NFSv3 and 9P translate their requests into these calls.
//
// Conventions shared by every call:
//  - Errors are errno values (ENOENT, EACCES, ...), carried by FsStatus and
//    FsResult<T> below; a protocol maps them to its own codes. An inode
//    number that no longer exists gives ESTALE; a missing name gives ENOENT.
//    A fenced engine (another process owns the bucket) gives EROFS; any other
//    engine or decoding failure gives EIO.
//  - Every call carries the caller's Credentials and checks POSIX permissions
//    with them (owner/group/other, supplementary groups, root). Path
//    resolution is the caller walking Lookup(), so search permission is
//    checked on every step.
//  - Every call that changes anything is one atomic engine batch. Writes to
//    file data are acknowledged from a bounded write-back buffer and reach the
//    engine within FsOptions::write_back_interval, on memory pressure, on
//    Fsync()/SyncAll()/Close(), or together with the next metadata change of
//    that file. Reads and GetAttr see unflushed writes.
//  - Thread-safe: any number of threads may call at once.
//  - Every inode carries a random 64-bit generation fixed at creation
//    (Attr::generation). A number a crash handed out twice (its reservation
//    rolled back) comes back with a new generation, so protocol handles are
//    (ino, generation) and ResolveHandle() refuses a mismatch with ESTALE.
//  - Open()/Release() pairs keep an unlinked file readable and writable until
//    the last Release(). Read()/Write() also work without a handle (NFS).
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "util/byte_buffer.h"
#include "util/status.h"

namespace pail::fs {

using Ino = uint64_t;

inline constexpr Ino kRootIno = 1;
// No inode has this generation.
inline constexpr uint64_t kNoGeneration = 0;
// Reported as st_dev / NFS fsid; one filesystem per process.
inline constexpr uint64_t kFsid = 0x7061696c;  // "pail"
inline constexpr size_t kNameMax = 255;         // bytes, any except '/' and NUL
inline constexpr size_t kSymlinkMax = 4095;     // target bytes
inline constexpr uint64_t kMaxFileSize = (1ull << 63) - 1;
inline constexpr uint32_t kMaxLinks = 65000;
inline constexpr size_t kXattrNameMax = 255;
inline constexpr size_t kXattrValueMax = 65536;
// Bounds on one inode's extended attributes together. The names, each with
// its NUL, fill at most what listxattr(2) can return on Linux
// (XATTR_LIST_MAX). The attributes' space (names, values, and
// kXattrEntryCost for each: the key, index and bookkeeping an attribute
// costs beside its bytes, about what ext4 charges for an entry) is at most
// kXattrSpaceMax: room for a value of the largest size beside a few
// kilobytes of others, or for the largest list of names with small values.
// Past either bound SetXattr gives ENOSPC (a single value over
// kXattrValueMax gives E2BIG).
inline constexpr size_t kXattrNamesMax = 65536;
inline constexpr size_t kXattrEntryCost = 32;
inline constexpr size_t kXattrSpaceMax = 80u << 10;
inline constexpr uint32_t kBlockSize = 4096;    // st_blksize and statfs bsize

// NFSv3 NOT_SYNC: SetAttr's guard ctime did not match. Not an errno;
// protocols without that notion should report EINVAL.
inline constexpr int kErrNotSync = 10002;
// NFSv3 BAD_COOKIE: ReadDir got a cookie this directory never issued. Not an
// errno; protocols without that notion should report EINVAL.
inline constexpr int kErrBadCookie = 10003;

struct Credentials {
  Credentials(uint32_t uid_in = 0, uint32_t gid_in = 0, std::vector<uint32_t> groups_in = {})
      : uid(uid_in), gid(gid_in), groups(std::move(groups_in)) {}

  uint32_t uid = 0;
  uint32_t gid = 0;
  // Supplementary groups. A protocol that has to ask the system for them
  // (FUSE reads them from /proc, which cost a non-root caller's request
  // more than half again its time) sets load_groups instead: the first
  // InGroup that needs them calls it, once. Most requests never do: their
  // caller owns the inode, or has its gid, or the group and others have the
  // same rights (MayAccess). The load writes the object: credentials with a
  // loader belong to one request on one thread (those shared between
  // threads, as a 9P session's, have their groups filled in).
  mutable std::vector<uint32_t> groups;
  mutable std::function<std::vector<uint32_t>()> load_groups;

  bool is_root() const { return uid == 0; }
  bool InGroup(uint32_t g) const {
    if (g == gid) return true;
    if (load_groups) {
      groups = load_groups();
      load_groups = nullptr;
    }
    return std::find(groups.begin(), groups.end(), g) != groups.end();
  }
  static Credentials Root() { return Credentials{}; }
};

// An errno value, tagged so FsResult<int> stays unambiguous.
struct FsError {
  int code;
};

// Success or an errno.
class [[nodiscard]] FsStatus {
 public:
  FsStatus() = default;
  FsStatus(FsError e) : err_(e.code) {}  // NOLINT: implicit by design
  static FsStatus OK() { return FsStatus(); }
  bool ok() const { return err_ == 0; }
  int error() const { return err_; }  // 0 when ok

 private:
  int err_ = 0;
};

// A value or an errno.
template <typename T>
class [[nodiscard]] FsResult {
 public:
  FsResult(T value) : value_(std::move(value)) {}            // NOLINT
  FsResult(FsError e) : err_(e.code) {}                       // NOLINT
  FsResult(FsStatus s) : err_(s.error()) {}                   // NOLINT: must be an error
  bool ok() const { return err_ == 0; }
  int error() const { return err_; }
  FsStatus status() const { return ok() ? FsStatus() : FsStatus(FsError{err_}); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  int err_ = 0;
  std::optional<T> value_;
};

struct Attr {
  Ino ino = 0;  // also the NFS fileid
  uint64_t generation = kNoGeneration;
  uint32_t mode = 0;  // S_IFMT type bits | permission bits (07777)
  uint32_t nlink = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  // Regular file: bytes; directory: kBlockSize; symlink: target length.
  uint64_t size = 0;
  // Bytes of file data stored (holes and trailing zeros of a chunk cost
  // nothing); st_blocks = (used + 511) / 512.
  uint64_t used = 0;
  uint64_t rdev = 0;  // makedev(major, minor) for devices
  struct timespec atime {};
  struct timespec mtime {};
  struct timespec ctime {};
  uint64_t fsid = kFsid;
  uint32_t blksize = kBlockSize;

  uint64_t blocks() const { return (used + 511) / 512; }
  uint32_t type() const { return mode & S_IFMT; }
  bool is_dir() const { return S_ISDIR(mode); }
  bool is_reg() const { return S_ISREG(mode); }
  bool is_symlink() const { return S_ISLNK(mode); }
};

// How SetAttr changes one timestamp.
struct TimeChange {
  enum class Kind { kOmit, kNow, kValue };
  Kind kind = Kind::kOmit;
  struct timespec value {};

  static TimeChange Omit() { return {}; }
  static TimeChange Now() { return {Kind::kNow, {}}; }
  static TimeChange At(struct timespec t) { return {Kind::kValue, t}; }
};

struct SetAttrRequest {
  std::optional<uint32_t> mode;  // permission bits only; type bits ignored
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  TimeChange atime;
  TimeChange mtime;
  // NFSv3 guard: fail with kErrNotSync unless ctime equals this.
  std::optional<struct timespec> guard_ctime;
  // A handle from Open() with write access: truncating through it needs no
  // write permission now (ftruncate on an fd opened for writing).
  uint64_t handle = 0;
};

struct CreateOptions {
  // O_EXCL: fail with EEXIST when the name exists.
  bool exclusive = false;
  // O_TRUNC: when the name exists and is a regular file, truncate it.
  bool truncate = false;
  // When set, also open the file with these open(2) flags and return a
  // handle. A newly created file is opened without checking its mode, as
  // open(O_CREAT) does.
  std::optional<int> open_flags;
};

struct CreateResult {
  Attr attr;
  bool created = false;  // false: the name existed (not exclusive)
  uint64_t handle = 0;   // nonzero when open_flags was set
};

enum class RenameFlags {
  kNone,       // replace the target if it exists (POSIX rename)
  kNoReplace,  // EEXIST if the target exists (RENAME_NOREPLACE)
  kExchange,   // swap source and target, both must exist (RENAME_EXCHANGE)
};

struct ReadResult {
  // Shorter than asked at the end of the file, and capped at 128 MiB.
  ByteBuffer data;
  bool eof = false;  // the read reached the end of the file
};

struct WriteResult {
  uint32_t written = 0;
  Attr attr;  // after the write
};

// A run of a file's bytes: stored data, or a hole that reads as zeros.
struct Extent {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool data = false;
  bool operator==(const Extent&) const = default;
};

struct DirEntry {
  std::string name;
  Ino ino = 0;
  uint32_t type = 0;  // S_IFMT bits
  // Pass this cookie to ReadDir to continue after this entry. Cookies stay
  // valid while the directory changes: "." is 1, ".." is 2, other entries
  // have per-directory increasing cookies from 3 in creation order.
  uint64_t next_cookie = 0;
  std::optional<Attr> attr;  // filled when asked for
};

// How much one ReadDir returns: what the caller's reply has room for, so
// that no attributes are loaded for entries the reply would leave out. The
// listing stops before the entry that would pass `entries` (0: no limit)
// or, priced by `entry_bytes`, `bytes` (0: no limit). A count alone
// converts, as most callers need nothing else.
struct ReadDirLimit {
  ReadDirLimit(size_t max_entries = 0) : entries(max_entries) {}  // NOLINT(google-explicit-constructor)
  ReadDirLimit(size_t max_bytes, size_t (*price)(std::string_view name))
      : bytes(max_bytes), entry_bytes(price) {}
  size_t entries = 0;
  size_t bytes = 0;
  // The room an entry of this name takes in the caller's reply, with its
  // attributes when they are asked for.
  size_t (*entry_bytes)(std::string_view name) = nullptr;
};

// The most entries a protocol asks of one ReadDir when its reply could hold
// more. A DirEntry takes several times its bytes on the wire, so a 1 MiB
// reply of short names is filled from batches rather than first held as
// tens of thousands of entries.
constexpr size_t kReadDirBatch = 1024;

struct ReadDirResult {
  // Empty only at the end of the directory (eof) or when the next entry
  // alone does not fit the limit (not eof): entries removed while listing
  // give their room back to the ones after them.
  std::vector<DirEntry> entries;
  bool eof = false;  // no entry after the last one returned
};

struct StatFsResult {
  uint64_t block_size = kBlockSize;
  uint64_t total_blocks = 0;
  uint64_t free_blocks = 0;
  uint64_t avail_blocks = 0;
  uint64_t total_files = 0;
  uint64_t free_files = 0;
  uint64_t avail_files = 0;
  uint32_t name_max = kNameMax;
};

// Fallocate modes, as in <linux/falloc.h>. The accepted combinations are 0
// (allocate), kFallocKeepSize, kFallocPunchHole | kFallocKeepSize,
// kFallocZeroRange and kFallocZeroRange | kFallocKeepSize.
inline constexpr int kFallocKeepSize = 0x01;   // FALLOC_FL_KEEP_SIZE
inline constexpr int kFallocPunchHole = 0x02;  // FALLOC_FL_PUNCH_HOLE
inline constexpr int kFallocZeroRange = 0x10;  // FALLOC_FL_ZERO_RANGE

// What lseek(2) SEEK_DATA and SEEK_HOLE look for.
enum class SeekFor { kData, kHole };

// copy_file_range(2): `length` bytes from `in` at `in_offset` to `out` at
// `out_offset`. A handle of 0 means access is checked against the caller's
// credentials instead of an open file's mode (as for Read/Write).
struct CopyRangeRequest {
  Ino in = 0;
  uint64_t in_offset = 0;
  uint64_t in_handle = 0;
  Ino out = 0;
  uint64_t out_offset = 0;
  uint64_t out_handle = 0;
  uint64_t length = 0;
};

// SetXattr flags, as in <sys/xattr.h>.
inline constexpr int kXattrCreate = 1;   // XATTR_CREATE: EEXIST if present
inline constexpr int kXattrReplace = 2;  // XATTR_REPLACE: ENODATA if absent

// CopyFileRange copies at most this many bytes per call.
inline constexpr uint64_t kMaxCopyBytes = 1ull << 30;

// Memory one cached inode record takes, with its index (FsOptions::
// inode_cache_records), and the most records it is given (15 MiB).
inline constexpr size_t kInodeCacheRecordBytes = 240;
inline constexpr size_t kInodeCacheRecordsMax = 65536;
// The same for a cached directory entry (FsOptions::dentry_cache_entries):
// its key (directory and a name of up to 255 bytes) held twice, in the index
// and the recency list, and the entry.
inline constexpr size_t kDentryCacheEntryBytes = 640;
inline constexpr size_t kDentryCacheEntriesMax = 16384;

struct FsOptions {
  // Quota on stored file data; writes past it fail with ENOSPC. 0 means no
  // quota (statfs then reports 8 EiB).
  uint64_t max_size_bytes = 1ull << 40;
  // Bound on unflushed file data held in memory, over all files.
  size_t write_back_bytes = 64ull << 20;
  // One file's unflushed data is written to the engine when it reaches this.
  size_t write_back_file_bytes = 4ull << 20;
  // Unflushed data is written to the engine at least this often.
  std::chrono::milliseconds write_back_interval{1000};
  // File data compression: "zstd-N", "lz4" or "none".
  std::string compression = "zstd-3";
  // Segments are cut at about this many bytes (smaller when the write-back
  // buffer is smaller than four of them), with this many uploads in flight.
  size_t segment_bytes = 16ull << 20;
  size_t upload_parallelism = 4;
  // A segment no value points at any more is deleted this long after it
  // died (a reader that looked up an extent just before may still read it).
  std::chrono::milliseconds dead_segment_grace{30000};
  // How often the collector looks for dead and mostly dead segments.
  std::chrono::milliseconds collect_interval{10000};
  // Decoded inode records kept in memory (fs/record_cache.h); 0 reads every
  // record from the engine.
  size_t inode_cache_records = kInodeCacheRecordsMax;
  // Directory entries kept in memory, absent names included; 0 looks every
  // name up in the engine.
  size_t dentry_cache_entries = kDentryCacheEntriesMax;
};

// For tests and monitoring.
struct FsCounters {
  uint64_t engine_writes = 0;   // batches handed to Engine::Write
  uint64_t chunk_puts = 0;      // data chunks written
  uint64_t chunk_deletes = 0;   // chunks that became holes
  uint64_t reclaimed_files = 0; // deleted files whose data was reclaimed
  uint64_t write_back_bytes = 0;  // unflushed bytes right now
  uint64_t writer_wait_ns = 0;    // writers waited for the write-back buffer to drain
  uint64_t used_bytes = 0;        // stored data bytes, flushed and not
  uint64_t used_inodes = 0;
  uint64_t segment_puts = 0;        // segments uploaded
  uint64_t segment_put_bytes = 0;   // their bytes
  uint64_t segments = 0;            // segments registered now
  uint64_t segment_bytes = 0;       // their total bytes
  uint64_t segment_live_bytes = 0;  // bytes of them that committed values point at
  uint64_t segments_deleted = 0;
  uint64_t segments_relocated = 0;  // mostly dead segments whose live extents were moved
  uint64_t inode_cache_bytes = 0;   // cached inode records, kInodeCacheRecordBytes each
  uint64_t inode_cache_capacity_bytes = 0;
  uint64_t dentry_cache_bytes = 0;  // cached directory entries, kDentryCacheEntryBytes each
  uint64_t dentry_cache_capacity_bytes = 0;
};

class FileSystem {
 public:
  // Creates the column families' content on first use (root inode 1, mode
  // 0755, root:root) and reclaims files left unlinked-while-open by a crash.
  // The engine must have been opened with ColumnFamilies().
  static Result<std::unique_ptr<FileSystem>> Open(engine::Engine& engine, FsOptions options);
  // The column families this layer needs, for EngineOptions.
  static std::vector<engine::ColumnFamilySpec> ColumnFamilies();

  virtual ~FileSystem() = default;

  // Flushes the write-back buffer, waits for the engine to be durable and
  // stops background work. Idempotent; the engine stays open.
  virtual Status Close() = 0;
  // Flushes every write-back buffer, then Engine::Sync().
  virtual Status SyncAll() = 0;

  // "." and ".." are accepted; ".." of the root is the root.
  virtual FsResult<Attr> Lookup(const Credentials& cred, Ino parent, std::string_view name) = 0;
  virtual FsResult<Attr> GetAttr(const Credentials& cred, Ino ino) = 0;
  // The inode a protocol's file handle names: its attributes, or ESTALE
  // unless `ino` exists and has `generation`. No permission is checked (as
  // for GetAttr); the caller still checks every operation it then makes.
  virtual FsResult<Attr> ResolveHandle(Ino ino, uint64_t generation) = 0;
  virtual FsResult<Attr> SetAttr(const Credentials& cred, Ino ino, const SetAttrRequest& req) = 0;
  // R_OK | W_OK | X_OK (F_OK = 0 only checks existence).
  virtual FsStatus Access(const Credentials& cred, Ino ino, int mask) = 0;

  // mode: permission bits with the umask already applied.
  virtual FsResult<CreateResult> Create(const Credentials& cred, Ino parent, std::string_view name,
                                        uint32_t mode, const CreateOptions& options) = 0;
  virtual FsResult<Attr> Mkdir(const Credentials& cred, Ino parent, std::string_view name,
                               uint32_t mode) = 0;
  // mode includes the type: S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK or S_IFREG.
  virtual FsResult<Attr> Mknod(const Credentials& cred, Ino parent, std::string_view name,
                               uint32_t mode, uint64_t rdev) = 0;
  virtual FsResult<Attr> Symlink(const Credentials& cred, Ino parent, std::string_view name,
                                 std::string_view target) = 0;
  virtual FsResult<std::string> Readlink(const Credentials& cred, Ino ino) = 0;
  virtual FsResult<Attr> Link(const Credentials& cred, Ino ino, Ino new_parent,
                              std::string_view new_name) = 0;
  virtual FsStatus Unlink(const Credentials& cred, Ino parent, std::string_view name) = 0;
  virtual FsStatus Rmdir(const Credentials& cred, Ino parent, std::string_view name) = 0;
  virtual FsStatus Rename(const Credentials& cred, Ino parent, std::string_view name,
                          Ino new_parent, std::string_view new_name,
                          RenameFlags flags = RenameFlags::kNone) = 0;

  // flags: open(2) flags; O_ACCMODE, O_TRUNC and O_APPEND matter. Returns a
  // nonzero handle for Read/Write/SetAttr/Release.
  // Directories open read-only (opendir); their handles are released the
  // same way.
  virtual FsResult<uint64_t> Open(const Credentials& cred, Ino ino, int flags) = 0;
  virtual FsStatus Release(uint64_t handle) = 0;
  // handle 0: stateless access checked against cred; the file's owner always
  // passes (the client checked at open, like knfsd's owner override).
  virtual FsResult<ReadResult> Read(const Credentials& cred, Ino ino, uint64_t offset,
                                    uint32_t length, uint64_t handle = 0) = 0;
  // A handle opened with O_APPEND writes at the end of the file.
  virtual FsResult<WriteResult> Write(const Credentials& cred, Ino ino, uint64_t offset,
                                      std::string_view data, uint64_t handle = 0) = 0;
  // Read() and Write() for a caller on an event loop, which would rather
  // hand the request to a thread than stall: they never wait, failing with
  // EWOULDBLOCK instead when the call would have to wait for the file's
  // lock, for room in the write-back buffer, or on the bucket (bytes that
  // are neither in memory, inline in the metadata store, nor in the local
  // cache). A refused call changes no data (a refused read may have moved
  // atime, as the Read() it is retried as would); ask Read()/Write() then.
  // Otherwise exactly as those two.
  virtual FsResult<ReadResult> TryRead(const Credentials& cred, Ino ino, uint64_t offset,
                                       uint32_t length, uint64_t handle) = 0;
  virtual FsResult<WriteResult> TryWrite(const Credentials& cred, Ino ino, uint64_t offset,
                                         std::string_view data, uint64_t handle) = 0;
  // Makes [offset, offset + length) read as zeros and frees its storage, as
  // fallocate(PUNCH_HOLE | KEEP_SIZE): the size never changes and the part
  // of the range past the end is ignored. Needs write access (the owner
  // always passes, as for Write without a handle).
  virtual FsResult<Attr> PunchHole(const Credentials& cred, Ino ino, uint64_t offset,
                                   uint64_t length) = 0;
  // The data and hole runs of [offset, min(offset + length, size)), in
  // order, adjacent runs of one kind merged; at most max_extents of them (ask
  // again from the end of the last one). Storage granularity is kChunkSize
  // bytes, so a data run may hold zeros but a hole never holds data. What
  // lseek SEEK_DATA/SEEK_HOLE and NBD block status need. Needs read access
  // (the owner always passes).
  virtual FsResult<std::vector<Extent>> MapExtents(const Credentials& cred, Ino ino,
                                                   uint64_t offset, uint64_t length,
                                                   size_t max_extents) = 0;
  // fallocate(2) on a regular file, Linux's rules and errors: mode 0
  // reserves the range's chunks against the quota (a later write into them
  // never meets a full one; `used` counts them whole) and extends the size
  // to offset + length; kFallocKeepSize only reserves; punching a hole (only
  // with kFallocKeepSize, else EOPNOTSUPP) is PunchHole, which also gives
  // back the reservation of the chunks it frees whole; a zero range is
  // reserved, reads as zeros afterwards, and extends the size unless
  // kFallocKeepSize. A truncate to a size no larger than the file's gives
  // back what lies past it.
  // EINVAL for length 0, EFBIG past kMaxFileSize, ENOSPC past the quota,
  // EOPNOTSUPP for other modes, EISDIR, ESPIPE (fifo), ENODEV (other types).
  // A handle must be open for writing (else EBADF); without one, write
  // access is checked (the owner always passes).
  virtual FsResult<Attr> Fallocate(const Credentials& cred, Ino ino, int mode, uint64_t offset,
                                   uint64_t length, uint64_t handle = 0) = 0;
  // lseek(2) SEEK_DATA / SEEK_HOLE: the first offset at or after `offset`
  // in data (or in a hole). The end of the file counts as a hole; ENXIO
  // when `offset` is at or past the end, or no data follows it. Holes are
  // found at the storage granularity (see MapExtents). A handle may have any
  // access mode; without one, read access is checked (the owner passes).
  virtual FsResult<uint64_t> Seek(const Credentials& cred, Ino ino, uint64_t offset, SeekFor what,
                                  uint64_t handle = 0) = 0;
  // copy_file_range(2) within this filesystem, copied here rather than
  // through the caller: holes of the source stay holes in the destination,
  // the destination's size grows as a write would make it and its mtime and
  // ctime change. Returns the bytes copied: 0 at or past the source's end,
  // short when the source ends or after kMaxCopyBytes, or when a failure
  // comes after some bytes were copied. Not atomic, as on Linux: it is a
  // sequence of reads and writes of at most 1 MiB each. EBADF for an
  // input handle not open for reading or an output handle not open for
  // writing or open for appending; EISDIR / EINVAL for directories / other
  // non-regular files; EINVAL for overlapping ranges of one file; EOVERFLOW
  // when an offset plus the length wraps; EFBIG at or past kMaxFileSize.
  virtual FsResult<uint64_t> CopyFileRange(const Credentials& cred,
                                           const CopyRangeRequest& req) = 0;
  // Makes the inode's data and metadata durable, and with them every change
  // made before its last one (the engine's crash prefix): its write-back
  // buffer is flushed, then the engine synced through the inode's last
  // change, which waits for nothing when an earlier upload carried it.
  // Works on any inode; for a directory, its entries.
  virtual FsStatus Fsync(const Credentials& cred, Ino ino) = 0;

  // cookie 0 starts at the beginning; `limit` bounds the entries returned.
  // A cookie the directory never issued gives kErrBadCookie. With
  // with_attrs, attributes are filled only when the caller may also search
  // the directory (x), as stat(dir/name) would need; an entry whose inode
  // went away while listing is left out.
  virtual FsResult<ReadDirResult> ReadDir(const Credentials& cred, Ino dir, uint64_t cookie,
                                          const ReadDirLimit& limit, bool with_attrs) = 0;
  virtual FsResult<StatFsResult> StatFs(const Credentials& cred, Ino ino) = 0;

  // Names carry their namespace: "user.", "trusted." or "security.". The
  // caller handles size probing (size 0) and ERANGE for small buffers.
  // SetXattr gives E2BIG for a value over kXattrValueMax and ENOSPC when the
  // inode's names or attribute space would pass kXattrNamesMax or
  // kXattrSpaceMax.
  virtual FsResult<std::string> GetXattr(const Credentials& cred, Ino ino,
                                         std::string_view name) = 0;
  virtual FsStatus SetXattr(const Credentials& cred, Ino ino, std::string_view name,
                            std::string_view value, int flags) = 0;
  // Names the caller may see (trusted.* only for root).
  virtual FsResult<std::vector<std::string>> ListXattr(const Credentials& cred, Ino ino) = 0;
  virtual FsStatus RemoveXattr(const Credentials& cred, Ino ino, std::string_view name) = 0;

  virtual FsCounters counters() const = 0;
};

}  // namespace pail::fs
