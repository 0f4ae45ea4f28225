// The FileSystem implementation. Its member functions are spread over files
// with one job each:
//   filesystem_impl.cc  opening, closing, inode/entry storage, commits
//   write_back.cc       the write-back buffer of unflushed file data
//   namespace_ops.cc    lookup, create, mkdir, mknod, symlink, link, unlink, rmdir
//   rename.cc           rename in all its flavours
//   attr_ops.cc         getattr, setattr, truncate, access, statfs
//   data_ops.cc         open, release, read, write, fsync
//   sparse_ops.cc       hole punching and the data/hole map
//   allocate_ops.cc     fallocate: allocate, keep size, punch hole, zero range
//   seek_ops.cc         lseek SEEK_DATA / SEEK_HOLE over the data/hole map
//   copy_ops.cc         copy_file_range inside the filesystem
//   handle_lookup.cc    the open mode behind a handle, for the range calls
//   readdir.cc          directory listing
//   xattr_ops.cc        extended attributes and their per-inode bounds
//   maintenance.cc      background flushing and reclaim of deleted files
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "fs/change_sequences.h"
#include "fs/chunk_value.h"
#include "fs/filesystem.h"
#include "fs/inode_record.h"
#include "fs/inode_set.h"
#include "fs/key_codec.h"
#include "fs/record_cache.h"
#include "fs/segment_format.h"
#include "fs/lock_table.h"
#include "util/mutex.h"
#include "util/thread_pool.h"

namespace pail::fs {

// One chunk of unflushed data. Either its bytes are in memory (`data`, the
// chunk's bytes from its start; shorter means zeros follow), or they were
// uploaded to a segment that no committed value points at yet (`uploaded`,
// `extent`), which frees the memory long before the commit.
//
// A chunk written only in whole blocks (kPieceBlockBytes) since it was taken
// from a stored extent or pieces value is an *overlay* (`is_overlay`): its
// old bytes are never read; `data` (or, once uploaded, `extent`) holds just
// the written blocks, back to back in block order, and the chunk reads as
// `base` with those blocks laid over it. Its commit writes a pieces value
// (docs/FORMAT.md, "Data keys").
struct DirtyChunk {
  std::string data;
  bool uploaded = false;
  ChunkExtent extent;       // when uploaded
  uint64_t version = 0;     // unique over all chunks; a write changes it
  bool uploading = false;   // this version is on its way to a segment
  // What the engine holds for the chunk, freed when this one commits: its
  // plain bytes and the extents it reads from.
  uint64_t stored_len = 0;
  std::vector<ChunkExtent> stored_extents;
  bool is_overlay = false;
  uint8_t blocks = 0;       // overlay: bit k set when block k was written
  PieceList base;           // overlay: the stored value's pieces
  // The version an fsync committed inline although the chunk belongs in a
  // segment (FileSystemImpl::CommitInline): the engine holds exactly these
  // bytes, and the chunk stays here only to reach a segment later.
  uint64_t inline_version = 0;
  bool overlay() const { return is_overlay; }
  bool committed_inline() const { return inline_version == version; }
};

// The bytes an overlay chunk's blocks take, and its pieces once they are in
// `extent` (or in memory: then `extent` is a stand-in the caller knows).
size_t OverlayBytes(uint8_t blocks);
PieceList OverlayPieces(const DirtyChunk& c, const ChunkExtent& blocks_extent);
// An overlay chunk's plain length: the end of its last piece.
uint64_t OverlayLength(const DirtyChunk& c);

// A chunk's bytes read ahead of a write (FileSystemImpl::PrefetchChunks).
struct ChunkPrefetch {
  uint64_t index = 0;
  ChunkExtent extent;  // where the bytes came from
  std::string bytes;
};

// A regular file with unflushed writes. While it exists, `inode` is the
// authoritative record of the file (the engine's is older). Guarded by the
// file's inode lock.
struct DirtyFile {
  InodeRecord inode;
  uint64_t engine_used = 0;        // `used` of the engine's record
  uint64_t stored_chunk_limit = 0; // the engine holds no chunk at or past this
  std::map<uint64_t, DirtyChunk> chunks;
  size_t memory = 0;               // bytes held in `chunks`
  // The file had no capabilities when last looked at; SetXattr of them
  // clears it. Saves Write a lookup per call.
  bool capabilities_absent = false;
};

// One engine batch under construction, with what must happen when it lands.
struct Txn {
  rocksdb::WriteBatch batch;
  int64_t used_bytes_delta = 0;  // change of stored data bytes
  int64_t inodes_delta = 0;
  std::vector<Ino> carried;      // dirty files whose data this batch writes
  // Chunks that belong in a segment go inline instead, and stay in the
  // write-back buffer afterwards until one takes them (CommitInline).
  bool inline_data = false;
  std::vector<Ino> discarded;    // dirty files deleted by this batch
  // Deleted files whose chunks this batch queues for reclaim: (ino, chunks).
  std::vector<std::pair<Ino, uint64_t>> reclaims;
  // Live bytes each segment gains or loses with this batch.
  std::map<uint64_t, int64_t> segment_live;
  // Inode records this batch writes (nullopt: deletes), in order, for the
  // inode cache.
  std::vector<std::pair<Ino, std::optional<InodeRecord>>> inodes;
  // Directory entries it writes or deletes, by DirEntryKey, for the dentry
  // cache.
  std::vector<std::pair<std::string, std::optional<DirEntryValue>>> entries;
};

// The uploads of one pass of the uploader (segment_io.cc).
struct UploadPass;

// A piece of a read that lives in a segment: filled after the inode lock is
// released (segments are immutable, and a dead one is deleted only after a
// grace period, so the extent stays readable meanwhile).
struct ExtentRead {
  ChunkExtent extent;
  uint64_t from = 0;    // first byte wanted, relative to the chunk
  uint64_t length = 0;  // bytes wanted
  uint64_t dst = 0;     // where they go, relative to the buffer ReadExtents is given
};

// An iterator over the keys in [lower, upper) of one column family,
// positioned at `lower`; it keeps the bound RocksDB points at alive.
class RangeIterator {
 public:
  RangeIterator(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string lower,
                std::string upper)
      : lower_(std::move(lower)), upper_(std::move(upper)), upper_slice_(upper_) {
    rocksdb::ReadOptions ro;
    ro.iterate_upper_bound = &upper_slice_;
    it_.reset(db->NewIterator(ro, cf));
    it_->Seek(lower_);
  }
  rocksdb::Iterator* operator->() { return it_.get(); }

 private:
  std::string lower_;
  std::string upper_;
  rocksdb::Slice upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

struct OpenHandle {
  Ino ino = 0;
  int flags = 0;
};

class FileSystemImpl final : public FileSystem {
 public:
  FileSystemImpl(engine::Engine& engine, FsOptions options);
  ~FileSystemImpl() override;
  Status Init();

  Status Close() override;
  Status SyncAll() override;
  FsResult<Attr> Lookup(const Credentials& cred, Ino parent, std::string_view name) override;
  FsResult<Attr> GetAttr(const Credentials& cred, Ino ino) override;
  FsResult<Attr> ResolveHandle(Ino ino, uint64_t generation) override;
  FsResult<Attr> SetAttr(const Credentials& cred, Ino ino, const SetAttrRequest& req) override;
  FsStatus Access(const Credentials& cred, Ino ino, int mask) override;
  FsResult<CreateResult> Create(const Credentials& cred, Ino parent, std::string_view name,
                                uint32_t mode, const CreateOptions& options) override;
  FsResult<Attr> Mkdir(const Credentials& cred, Ino parent, std::string_view name,
                       uint32_t mode) override;
  FsResult<Attr> Mknod(const Credentials& cred, Ino parent, std::string_view name, uint32_t mode,
                       uint64_t rdev) override;
  FsResult<Attr> Symlink(const Credentials& cred, Ino parent, std::string_view name,
                         std::string_view target) override;
  FsResult<std::string> Readlink(const Credentials& cred, Ino ino) override;
  FsResult<Attr> Link(const Credentials& cred, Ino ino, Ino new_parent,
                      std::string_view new_name) override;
  FsStatus Unlink(const Credentials& cred, Ino parent, std::string_view name) override;
  FsStatus Rmdir(const Credentials& cred, Ino parent, std::string_view name) override;
  FsStatus Rename(const Credentials& cred, Ino parent, std::string_view name, Ino new_parent,
                  std::string_view new_name, RenameFlags flags) override;
  FsResult<uint64_t> Open(const Credentials& cred, Ino ino, int flags) override;
  FsStatus Release(uint64_t handle) override;
  FsResult<ReadResult> Read(const Credentials& cred, Ino ino, uint64_t offset, uint32_t length,
                            uint64_t handle) override;
  FsResult<WriteResult> Write(const Credentials& cred, Ino ino, uint64_t offset,
                              std::string_view data, uint64_t handle) override;
  FsResult<ReadResult> TryRead(const Credentials& cred, Ino ino, uint64_t offset,
                               uint32_t length, uint64_t handle) override;
  FsResult<WriteResult> TryWrite(const Credentials& cred, Ino ino, uint64_t offset,
                                 std::string_view data, uint64_t handle) override;
  FsStatus Fsync(const Credentials& cred, Ino ino) override;
  FsResult<Attr> PunchHole(const Credentials& cred, Ino ino, uint64_t offset,
                           uint64_t length) override;
  FsResult<std::vector<Extent>> MapExtents(const Credentials& cred, Ino ino, uint64_t offset,
                                           uint64_t length, size_t max_extents) override;
  FsResult<Attr> Fallocate(const Credentials& cred, Ino ino, int mode, uint64_t offset,
                           uint64_t length, uint64_t handle) override;
  FsResult<uint64_t> Seek(const Credentials& cred, Ino ino, uint64_t offset, SeekFor what,
                          uint64_t handle) override;
  FsResult<uint64_t> CopyFileRange(const Credentials& cred, const CopyRangeRequest& req) override;
  FsResult<ReadDirResult> ReadDir(const Credentials& cred, Ino dir, uint64_t cookie,
                                  const ReadDirLimit& limit, bool with_attrs) override;
  FsResult<StatFsResult> StatFs(const Credentials& cred, Ino ino) override;
  FsResult<std::string> GetXattr(const Credentials& cred, Ino ino, std::string_view name) override;
  FsStatus SetXattr(const Credentials& cred, Ino ino, std::string_view name,
                    std::string_view value, int flags) override;
  FsResult<std::vector<std::string>> ListXattr(const Credentials& cred, Ino ino) override;
  FsStatus RemoveXattr(const Credentials& cred, Ino ino, std::string_view name) override;
  FsCounters counters() const override;

 private:
  // ---- storage (filesystem_impl.cc); callers hold the inodes' locks.
  // The write-back copy when the file has unflushed data, else the engine's
  // record; ESTALE when the inode does not exist.
  FsResult<InodeRecord> LoadInode(Ino ino);
  // The engine's record only.
  FsResult<InodeRecord> LoadStoredInode(Ino ino);
  // Fills the attributes of a listing's entries from `first` on, each read
  // under its inode's lock; an entry whose inode is gone (removed while
  // listing) is left without. Takes the entries' locks itself, a batch at a
  // time.
  FsStatus LoadEntryAttrs(std::vector<DirEntry>& entries, size_t first);
  // nullopt when the name is absent.
  FsResult<std::optional<DirEntryValue>> LookupEntry(Ino dir, std::string_view name);
  // Puts dir/name -> `entry` in the batch (the caller holds dir's lock).
  void PutEntry(Txn& txn, Ino dir, std::string_view name, const DirEntryValue& entry);
  // A directory the caller may change entries in: ENOTDIR, ENOENT (removed),
  // EACCES without write and search permission.
  FsResult<InodeRecord> LoadWritableDir(const Credentials& cred, Ino dir);
  // Stores the record; a file with unflushed data gets it written in the
  // same batch (and `used` made exact).
  void PutInode(Txn& txn, Ino ino, InodeRecord& r);
  // Unlink and rmdir: locks `parent` and the inode `name` names in it,
  // checks that the caller may remove the name (search and write permission,
  // the sticky bit), then lets `remove` check the inode's type and build the
  // batch, which is committed. Retries when a rename replaced the name
  // between the unlocked lookup and the locks.
  using RemoveNamed = std::function<FsStatus(Txn& txn, InodeRecord& dir, const DirEntryValue& entry,
                                             InodeRecord& victim)>;
  FsStatus RemoveName(const Credentials& cred, Ino parent, std::string_view name,
                      const RemoveNamed& remove);
  // Adds name -> child to `dir`, taking the directory's next cookie.
  void AddEntry(Txn& txn, Ino dir, InodeRecord& d, std::string_view name, Ino child,
                uint32_t type, const struct timespec& now);
  // Removes name from `dir`. When it was the first entry in cookie order,
  // the directory's first_cookie moves past it to the next entry, so
  // listings do not step over the deletion markers of a directory emptied
  // from the front (as `rm -rf` and most cleanups do) until compaction
  // drops them.
  void RemoveEntry(Txn& txn, Ino dir, InodeRecord& d, std::string_view name,
                   const DirEntryValue& entry, const struct timespec& now);
  // The cookie of `dir`'s first stored entry after `cookie`; cookie + 1 when
  // none (or the engine fails: first_cookie is a lower bound, never wrong).
  uint64_t NextStoredCookie(Ino dir, uint64_t cookie);
  // The inode lost its last name: keep it as an orphan while it is open,
  // else delete it and queue its data for reclaim. r.nlink is already 0.
  void DropInode(Txn& txn, Ino ino, InodeRecord& r);
  // Deletes the inode's record and xattrs (and its orphan mark when it has
  // one), queues its data for reclaim.
  void DeleteInode(Txn& txn, Ino ino, const InodeRecord& r, bool has_orphan_mark);
  FsStatus Commit(Txn& txn);
  // Every write of the filesystem to the engine goes through here, so that
  // changes_ sees each inode it changes.
  Status Apply(rocksdb::WriteBatch* batch);
  FsResult<Ino> AllocateIno() EXCLUDES(ino_mu_);
  uint32_t OpenCount(Ino ino) EXCLUDES(handles_mu_);
  // Shared by Create, Mkdir, Mknod and Symlink. `proto` carries the type,
  // permission bits, rdev and symlink target. With `handle_out`, the new
  // file is also opened with `open_flags`.
  FsResult<Attr> CreateNode(const Credentials& cred, Ino parent, std::string_view name,
                            InodeRecord proto, uint64_t* handle_out, int open_flags);

  // ---- write-back (write_back.cc); callers hold the file's inode lock.
  DirtyFile* FindDirty(Ino ino) EXCLUDES(dirty_mu_);
  DirtyFile& GetOrCreateDirty(Ino ino, const InodeRecord& stored) EXCLUDES(dirty_mu_);
  // Makes sure chunk `index` is in the buffer. With `need_bytes` its bytes
  // are in memory (loaded from the engine or its segment); without, the
  // caller overwrites every byte the chunk holds and only what the engine
  // stores for it is looked up.
  // Bytes in `prefetched` (see PrefetchChunks) are used instead of a read
  // when they are of the extent the chunk still has.
  FsResult<DirtyChunk*> EnsureChunk(Ino ino, DirtyFile& f, uint64_t index, bool need_bytes,
                                    std::vector<ChunkPrefetch>* prefetched = nullptr);
  // Brings an uploaded chunk's bytes back into memory, to be changed
  // (`bytes`: that extent's bytes, already read; or read here).
  FsStatus MaterializeChunk(DirtyFile& f, DirtyChunk& c, std::string* bytes = nullptr);
  // For a write of chunk bytes [from, to) (multiples of kPieceBlockBytes,
  // not the whole chunk): the chunk as an overlay with room for those
  // blocks, when the chunk is (or can become) one without passing
  // kMaxChunkPieces; nullptr when the write must go the read-modify-write
  // way instead. Never reads the chunk's old bytes from a segment.
  FsResult<DirtyChunk*> EnsureOverlay(Ino ino, DirtyFile& f, uint64_t index, uint32_t from,
                                      uint32_t to);
  // Turns an overlay chunk into an ordinary one: its base's bytes read and
  // its blocks copied over them.
  FsStatus MaterializeOverlay(DirtyFile& f, DirtyChunk& c);
  // Brings the extents under the overlays `chunks` into the cache, several
  // reads from the bucket at once, and returns when they are done (those
  // the read-ahead pool has no room for are left to the caller's reads).
  void FetchOverlayBases(const std::vector<DirtyChunk*>& chunks);
  // The bytes of a list of pieces (zeros between them) into `out`, sized to
  // the end of the last piece.
  FsStatus LoadPiecesBytes(const PieceList& pieces, std::string* out);
  // For a write of [offset, offset+length) to a file: reads, without the
  // inode lock, the segment bytes of the chunks the write changes only in
  // part and that are not in memory, so the write's read-modify-write does
  // not fetch them while every other request on the file waits. Takes the
  // lock only briefly, to see which chunks those are; errors just leave a
  // chunk out (the write then reads it itself).
  std::vector<ChunkPrefetch> PrefetchChunks(Ino ino, uint64_t offset, uint64_t length);
  // Marks the file's data for this batch and sets r.used exactly.
  void CarryDirty(Txn& txn, Ino ino, DirtyFile& f, InodeRecord& r);
  // In Commit: puts the carried files' chunk values in the batch, uploading
  // what belongs in a segment and is still in memory.
  FsStatus EncodeCarried(Txn& txn);
  // Called after a commit: forgets carried and discarded files.
  void AfterCommit(const Txn& txn) EXCLUDES(dirty_mu_);
  // After an inline_data commit of `f`, which wrote `committed_record`:
  // moves its committed chunks to `done` and keeps the ones committed
  // inline that belong in a segment, with the record. False when none is
  // left (the caller forgets the file).
  bool KeepCommittedInline(DirtyFile& f, const InodeRecord& committed_record,
                           std::vector<std::unique_ptr<DirtyFile>>* done) REQUIRES(dirty_mu_);
  FsStatus FlushFile(Ino ino);  // caller holds the lock
  // Fsync's quick way: when at most kMaxInlineChunks of the file's chunks
  // that belong in a segment wait in memory (and none is on its way to
  // one), commits them inline in the batch, the engine's log then being
  // the only upload before the sync returns, where a segment would have to
  // be put first. They stay in the buffer and reach a segment with the next
  // flush, which replaces the inline values. False (nothing done) when the
  // file does not qualify; the caller then flushes as usual.
  FsResult<bool> CommitInline(Ino ino);
  // Waits (holding no lock) until none of the file's chunks is on its way
  // to a segment, so the commit that follows does not upload it again;
  // with `upload_first`, its full chunks still in memory go up first, in
  // the uploader's shared segments. Fails when any upload fails meanwhile:
  // while writers wait for memory, the uploader keeps putting the failed
  // chunks back on the way, so waiting for none to be would never end.
  FsStatus SettleUploads(Ino ino, bool upload_first);
  // Commits the file's buffered data, uploading its full chunks without the
  // lock first (see kMaxFlushUploadPasses in write_back.cc).
  FsStatus FlushFileLocking(Ino ino);
  // Bytes of the file's full chunks in memory that no upload has taken
  // yet (`with_in_flight`: or that an upload pass holds but has not
  // finished); caller holds the lock.
  size_t AwaitingUploadBytes(Ino ino, bool with_in_flight = false);
  FsStatus FlushAll();
  void AddMemory(DirtyFile& f, int64_t delta);
  // Adds `growth` bytes to dirty_used_ when the charged total stays within
  // the quota (without one, within INT64_MAX); false changes nothing. The
  // check and the add are one step, so writers on different files cannot
  // each pass a check that only one of them fits. Growth <= 0 always fits.
  bool TryCharge(int64_t growth);
  // Waits until `bytes` more fit in the buffer and promises them to the
  // caller (released by ReleaseMemory once the bytes are buffered, their
  // growth counted by AddMemory). EIO when a flush fails meanwhile (the
  // memory cannot come free), EROFS when fenced. Call with no inode lock
  // held: the flusher needs those locks.
  FsStatus ReserveMemory(int64_t bytes) EXCLUDES(dirty_mu_, maint_mu_);
  // ReserveMemory() that never waits: EWOULDBLOCK when the bytes do not fit now.
  FsStatus TryReserveMemory(int64_t bytes) EXCLUDES(dirty_mu_);
  void ReleaseMemory(int64_t bytes) EXCLUDES(dirty_mu_);
  uint64_t NextChunkVersion() { return chunk_version_.fetch_add(1) + 1; }

  // ---- segments (segment_io.cc)
  // True when chunk `index` of a file of `size` bytes goes to a segment
  // rather than inline: a full chunk of a file above kInlineFileBytes.
  static bool BelongsInSegment(uint64_t size, uint64_t index);
  // A chunk of `f` whose bytes are in memory, belong in a segment and are
  // not already on their way there.
  static bool AwaitsUpload(const DirtyFile& f, uint64_t index, const DirtyChunk& c) {
    return !c.uploaded && !c.uploading && BelongsInSegment(f.inode.size, index);
  }
  // Uploads the builder's segment and registers it (its usage record in
  // `txn` when given, else in a batch of its own before returning). With
  // `keep_in_memory` its body is kept in the segment memory afterwards (new
  // data, likely read soon; not the collector's relocated old data).
  FsStatus PutSegment(SegmentBuilder& builder, Txn* txn, bool keep_in_memory = true);
  // Fills the reads from their segments, one read per run of adjacent
  // extents of a segment. On a thread inside a BucketReadsRefused scope
  // only the local cache is read: EWOULDBLOCK when it lacks any of the
  // bytes (some may have been copied into the buffer by then).
  FsStatus ReadExtents(std::vector<ExtentRead>& reads, char* buffer);
  // While one lives, segment reads on its thread take only what the local
  // cache holds: a TryWrite() reaches them deep in the write-back code
  // (loading a chunk it changes in part), and must give up there rather
  // than wait on the bucket.
  class BucketReadsRefused {
   public:
    explicit BucketReadsRefused(bool refuse) : previous_(refused_) {
      refused_ = refused_ || refuse;
    }
    ~BucketReadsRefused() { refused_ = previous_; }
    BucketReadsRefused(const BucketReadsRefused&) = delete;
    BucketReadsRefused& operator=(const BucketReadsRefused&) = delete;
    static bool active() { return refused_; }

   private:
    static thread_local inline bool refused_ = false;
    bool previous_;
  };
  // The bytes of a stored chunk value (inline or extent) into `out`.
  FsStatus LoadChunkBytes(const StoredChunk& chunk, std::string* out);
  // The whole plain bytes of an extent into `out`.
  FsStatus ReadExtentBytes(const ChunkExtent& extent, std::string* out);
  // Reads and decodes the engine's value of a chunk; nullopt when absent.
  FsResult<std::optional<std::string>> GetChunkValue(Ino ino, uint64_t index);
  // The live bytes a stored value stops holding when it is replaced.
  static void ForgetStoredValue(Txn& txn, const StoredChunk& old);
  FsResult<uint64_t> SegmentSize(uint64_t segment) EXCLUDES(segments_mu_);
  // Reference counts of uploaded, uncommitted chunks per segment (and of
  // reads between taking a file's extents and reading them): the
  // collector leaves such segments alone, and those whose count went down
  // while it read the usage records (see CollectSegments).
  // A read's hold needs no `released` mark: a reader that started before
  // a value moved away is either still holding at the check or done.
  void AddPending(uint64_t segment, int64_t n, bool mark_released = true) EXCLUDES(segments_mu_);
  Status LoadSegments() EXCLUDES(segments_mu_);
  // The background uploader: moves full chunks of big files out of memory
  // into segments, `all` of them or only when a segment's worth waits.
  // UploadEligible waits for the uploads it starts; StartUploads returns
  // once they are submitted.
  void UploadLoop() EXCLUDES(upload_mu_);
  FsStatus UploadEligible(bool all);
  std::shared_ptr<UploadPass> StartUploads(bool all);
  void RequestUpload(bool all) EXCLUDES(upload_mu_);
  // Starts read-ahead after a sequential read that ended at `end`.
  void ReadAhead(Ino ino, uint64_t offset, uint64_t end, uint64_t size)
      EXCLUDES(readahead_mu_);

  // ---- data (data_ops.cc, attr_ops.cc)
  // Read() and Write(); without `may_wait` as TryRead() and TryWrite().
  FsResult<ReadResult> ReadData(const Credentials& cred, Ino ino, uint64_t offset,
                                uint32_t length, uint64_t handle, bool may_wait);
  FsResult<WriteResult> WriteData(const Credentials& cred, Ino ino, uint64_t offset,
                                  std::string_view data, uint64_t handle, bool may_wait);
  // Write() for at most one piece; `offset` is ignored when appending.
  FsResult<WriteResult> WritePiece(const Credentials& cred, Ino ino, uint64_t offset,
                                   std::string_view data, bool append, bool has_handle,
                                   bool may_wait);
  // Copies what memory and inline values hold into the result and lists
  // the segment extents still to be read.
  FsResult<ReadResult> ReadLocked(Ino ino, const InodeRecord& r, uint64_t offset,
                                  uint32_t length, std::vector<ExtentRead>* extents);
  // Shrinks or grows the file; flushes its buffer first. r is updated.
  FsStatus TruncateLocked(const Credentials& cred, Ino ino, InodeRecord& r, uint64_t size,
                          Txn& txn);
  FsResult<Attr> GetAttrLocking(Ino ino);
  // Zeros bytes [from, to) of stored chunk `index`, trimming or deleting
  // it; returns the charge freed (none for a reserved chunk).
  FsResult<int64_t> ZeroStoredChunk(Ino ino, const ReservedChunks& reserved, uint64_t index,
                                    uint64_t from, uint64_t to, Txn& txn);
  // Deletes stored chunks [first, end); returns the charge freed: the
  // stored bytes of the chunks not reserved.
  FsResult<int64_t> DeleteStoredChunks(Ino ino, uint64_t first, uint64_t end,
                                       const ReservedChunks& reserved, Txn& txn);
  // The stored bytes of chunks [run.first, run.end).
  FsResult<uint64_t> StoredChunkBytes(Ino ino, ChunkRun run);
  // Makes [offset, end) of the stored file r read as zeros: chunks covered
  // whole are deleted (and, when `release`, no longer reserved), the
  // others trimmed. r.used and the batch's delta follow.
  FsStatus ZeroStoredRange(Ino ino, InodeRecord& r, uint64_t offset, uint64_t end, bool release,
                           Txn& txn);
  // PunchHole, which gives the reservation of the chunks it covers whole
  // back only when `release` (copy_file_range keeps the destination's).
  FsResult<Attr> ZeroRange(const Credentials& cred, Ino ino, uint64_t offset, uint64_t length,
                           bool release);

  // ---- range calls (allocate_ops.cc, seek_ops.cc, copy_ops.cc, handle_lookup.cc)
  // The open(2) flags of `handle`, which must be open on `ino`; EBADF
  // otherwise.
  FsResult<int> HandleFlags(uint64_t handle, Ino ino) EXCLUDES(handles_mu_);
  // Reserves the chunks under [offset, end) (fallocate) after checking the
  // quota has room for them; with `zero` also makes the range read as
  // zeros. ENOSPC changes nothing.
  FsResult<Attr> ReserveRange(Ino ino, uint64_t offset, uint64_t end, bool zero);
  // Sets the size to at least `size` (when `grow`), clears set-id bits for
  // a non-root caller and stamps ctime (and mtime when `touch_mtime` or the
  // size changed), in one batch: the metadata side of fallocate and
  // copy_file_range.
  FsResult<Attr> FinishRangeChange(const Credentials& cred, Ino ino, bool grow, uint64_t size,
                                   bool touch_mtime);
  // Copies bytes [in_offset, in_offset + length) of `req.in` to the same
  // place relative to req.out_offset in `req.out`, in bounded pieces, each
  // a Read and a Write; returns the bytes copied (short when the source
  // shrank meanwhile, or after a failure once something was copied).
  FsResult<uint64_t> CopyData(const Credentials& cred, const CopyRangeRequest& req,
                              uint64_t in_offset, uint64_t length);
  // Makes [offset, offset + length) of `ino` read as zeros, punching (as
  // `cred`) only where it holds data, so a fresh destination needs no batch.
  // What the destination reserved stays reserved: its allocation promised
  // later writes there room, as ext4's copy writes the zeros into it.
  FsStatus ClearRange(const Credentials& cred, Ino ino, uint64_t offset, uint64_t length);


  // ---- maintenance (maintenance.cc)
  void MaintenanceLoop() EXCLUDES(maint_mu_);
  // Frees the data of up to `max_files` deleted files found by scanning the
  // reclaim keys; returns how many.
  FsResult<size_t> ReclaimScan(size_t max_files);
  // Frees the data of these deleted files: (ino, chunk count).
  FsStatus ReclaimListed(const std::vector<std::pair<Ino, uint64_t>>& files);
  Status ReclaimOrphansAtStart();
  // The segment collector (segment_gc.cc): deletes segments no value points
  // at, moves the live extents out of mostly dead ones.
  FsStatus CollectSegments() EXCLUDES(segments_mu_);
  FsStatus RelocateSegment(uint64_t segment, uint64_t size);
  FsStatus SweepOrphanSegments() EXCLUDES(segments_mu_);

  // ---- xattrs (xattr_ops.cc)
  int XattrAccess(const Credentials& cred, const InodeRecord& r, std::string_view name,
                  bool write);
  // The inode's xattr totals (zeros when it has no attributes).
  FsResult<XattrTotals> LoadXattrTotals(Ino ino);
  // Stores the totals in the batch (deletes the key when they are zero).
  void PutXattrTotals(Txn& txn, Ino ino, const XattrTotals& totals);
  // Adds the removal of attribute `name` and the totals without it to
  // `txn` when the inode has it, and says whether it had. The caller holds
  // the inode's lock.
  FsResult<bool> DeleteXattr(Txn& txn, Ino ino, std::string_view name);
  // DeleteXattr of the file's capabilities (security.capability). Linux
  // drops them whenever a file's data or owner changes, as it drops setuid:
  // a changed program keeps none of the privileges granted to the old one.
  FsResult<bool> DropCapabilities(Ino ino, Txn& txn);

  engine::Engine& engine_;
  rocksdb::DB* db_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* data_ = nullptr;
  const FsOptions options_;
  std::unique_ptr<ChangeSequences> changes_;  // made by Init(), once the families are known
  LockTable locks_;
  InodeCache inode_cache_;
  // Directories made by this process whose every entry is in the dentry
  // cache, so that a name the cache lacks is absent without asking the
  // engine. A new directory is empty, and every entry a commit adds is
  // stored in the cache before the directory's lock is let go; it stops
  // being complete when the cache lets one of its entries go (the cache's
  // eviction listener) or a commit touching its entries fails (what the
  // engine then holds is not known). The kernel asks for each name before
  // creating it, so a tar, a checkout or a build's output in new
  // directories saves an engine search per file. Declared before the cache
  // whose evictions it hears of.
  InodeSet complete_dirs_;
  DentryCache dentry_cache_;
  // Inodes made by this process that never had an extended attribute: the
  // first write's capability check and the unlink's look for xattrs need no
  // engine lookup. SetXattr, the only writer of xattrs, takes the inode out
  // first, under the inode's lock.
  InodeSet xattr_free_;

  // Serializes moves of directories between parents so the loop check
  // (walking parent pointers) sees a stable tree. Taken before inode slots.
  Mutex rename_mu_;

  Mutex ino_mu_;
  Ino next_ino_ GUARDED_BY(ino_mu_) = 0;
  Ino reserved_ino_ GUARDED_BY(ino_mu_) = 0;  // persisted: numbers below are taken

  struct StatsShard {
    Mutex mu;
    int64_t used_bytes GUARDED_BY(mu) = 0;
    int64_t inodes GUARDED_BY(mu) = 0;
  };
  std::array<StatsShard, kStatsShards> stats_;
  std::atomic<int64_t> stored_used_{0};   // sum of the shards' used_bytes
  std::atomic<int64_t> stored_inodes_{0};
  std::atomic<uint64_t> shard_rr_{0};

  Mutex dirty_mu_;  // the map's structure; contents under inode locks
  std::unordered_map<Ino, std::unique_ptr<DirtyFile>> dirty_ GUARDED_BY(dirty_mu_);
  std::atomic<int64_t> dirty_memory_{0};
  // Of it, the bytes staged into segments whose uploads have not finished.
  std::atomic<int64_t> staged_memory_{0};
  // Unflushed growth of `used` over all dirty files (an upper bound), and
  // the growth of reservations being committed. Writes and reservations
  // raise it only through TryCharge.
  std::atomic<int64_t> dirty_used_{0};
  // Memory promised to writes admitted but not yet buffered.
  int64_t reserved_memory_ GUARDED_BY(dirty_mu_) = 0;
  // Background flushes that failed; a writer waiting for memory gives up
  // when one fails, since the memory it waits for cannot come free.
  uint64_t flush_failures_ GUARDED_BY(dirty_mu_) = 0;
  // Segment uploads that failed (after the store's own retries).
  uint64_t upload_failures_ GUARDED_BY(dirty_mu_) = 0;
  // The errno of the latest failed background flush or upload, which the
  // writers and fsyncs that gave up on it return (ENOSPC: the bucket's disk).
  int background_error_ GUARDED_BY(dirty_mu_) = EIO;
  CondVar memory_cv_{&dirty_mu_};  // writers waiting for memory

  Mutex handles_mu_;
  uint64_t next_handle_ GUARDED_BY(handles_mu_) = 1;
  std::unordered_map<uint64_t, OpenHandle> handles_ GUARDED_BY(handles_mu_);
  std::unordered_map<Ino, uint32_t> open_counts_ GUARDED_BY(handles_mu_);

  Mutex maint_mu_ ACQUIRED_AFTER(dirty_mu_);
  CondVar maint_cv_{&maint_mu_};
  bool stopping_ GUARDED_BY(maint_mu_) = false;
  bool flush_requested_ GUARDED_BY(maint_mu_) = false;
  // Files deleted since the last round, so the reclaimer needs no scan over
  // the (tombstone-heavy) reclaim key range. Bounded: past the bound the
  // reclaimer scans instead.
  std::vector<std::pair<Ino, uint64_t>> reclaim_queue_ GUARDED_BY(maint_mu_);
  bool reclaim_rescan_ GUARDED_BY(maint_mu_) = true;  // leftovers of an earlier run, or overflow
  std::thread maintenance_;
  Mutex close_mu_ ACQUIRED_BEFORE(maint_mu_);
  bool closed_ GUARDED_BY(close_mu_) = false;

  // Segments: sizes of the registered ones and uncommitted references.
  // `released`: the value of release_count_ when a reference last went
  // (its commit was written just before), for the collector's check.
  struct SegmentState {
    uint64_t size = 0;
    int64_t pending = 0;
    uint64_t released = 0;
  };
  mutable Mutex segments_mu_;
  std::unordered_map<uint64_t, SegmentState> segments_ GUARDED_BY(segments_mu_);
  uint64_t release_count_ GUARDED_BY(segments_mu_) = 0;
  // Dead segments whose records are gone, deleted once the time passes.
  std::vector<std::pair<uint64_t, std::chrono::steady_clock::time_point>> dying_
      GUARDED_BY(segments_mu_);
  // The orphan sweep (Init, then the maintenance thread only).
  std::chrono::steady_clock::time_point next_orphan_sweep_{};
  uint64_t puts_at_last_sweep_ = 0;
  std::chrono::steady_clock::time_point next_collect_{};  // maintenance thread only
  const DataCompression compression_;
  std::atomic<uint64_t> chunk_version_{0};

  Mutex upload_mu_ ACQUIRED_AFTER(dirty_mu_);
  CondVar upload_cv_{&upload_mu_};
  bool upload_requested_ GUARDED_BY(upload_mu_) = false;
  bool upload_all_ GUARDED_BY(upload_mu_) = false;
  bool upload_stopping_ GUARDED_BY(upload_mu_) = false;
  std::unique_ptr<ThreadPool> upload_pool_;   // segment PUTs in flight
  std::unique_ptr<ThreadPool> prefetch_pool_; // read-ahead GETs in flight
  std::thread uploader_;

  // Sequential-read detection per file, for read-ahead. Bounded: cleared
  // when it grows past kReadAheadFiles.
  struct ReadAheadState {
    uint64_t next_offset = 0;   // where a sequential read continues
    uint64_t prefetched = 0;    // read-ahead was started up to here
  };
  Mutex readahead_mu_;
  std::unordered_map<Ino, ReadAheadState> readahead_ GUARDED_BY(readahead_mu_);

  std::atomic<uint64_t> segment_puts_{0};
  std::atomic<uint64_t> segment_put_bytes_{0};
  std::atomic<uint64_t> segments_deleted_{0};
  std::atomic<uint64_t> segments_relocated_{0};
  std::atomic<int64_t> segment_live_bytes_{0};  // the usage records' live bytes, summed
  std::atomic<uint64_t> engine_writes_{0};
  std::atomic<uint64_t> chunk_puts_{0};
  std::atomic<uint64_t> chunk_deletes_{0};
  std::atomic<uint64_t> reclaimed_files_{0};
  std::atomic<uint64_t> writer_wait_ns_{0};
};

// errno for an engine failure.
FsError EngineError(const Status& s);
FsError EngineError(const rocksdb::Status& s);

}  // namespace pail::fs
