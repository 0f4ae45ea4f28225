// DataObjects: the bucket's file-data objects ("segments"), each written
// whole once and never changed.
//
// Key layout:
//   data/<hh>/<id>   id: 16 lowercase hex digits; hh: 2 hex digits of a hash
//                    of the id, so that the writes of one writer spread over
//                    256 key prefixes (S3 scales request rates per prefix).
// An id is the writer's epoch in its high kSegmentEpochShift.. bits and a
// sequence number within the epoch below, so ids never repeat across
// writers and a fenced writer's objects are told apart by their epoch.
//
// What a segment holds is the filesystem's business (docs/FORMAT.md); this
// class only stores, caches and deletes them:
//  - Put uploads the body, then keeps a local copy in the disk cache, so a
//    read soon after a write costs no request, and hands the body itself
//    (no copy) to the segment memory (segment_memory.h), so such a read
//    costs no decryption and no disk cache read either.
//  - Read, ReadCached and Prefetch look in the segment memory first.
//  - Read and Prefetch go through the disk cache, one ranged GET per run of
//    missing 64 KiB extents; ReadOnce fetches past it.
//  - A bucket on a local disk (ObjectStore::IsLocal) gets no such copy:
//    it would double the disk writes of every upload (measured as a fifth
//    of the CPU of a sequential write), and a read soon after costs no
//    request anyway. Reads still fill the cache, which holds plaintext, so
//    warm reads skip the decryption.
//  - Delete first checks that no newer writer owns the bucket; a fenced
//    writer deletes nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/disk_cache.h"
#include "engine/segment_memory.h"
#include "objstore/object_store.h"

namespace pail::engine {

constexpr char kDataPrefix[] = "data/";
constexpr int kSegmentEpochShift = 40;

class DataObjects {
 public:
  // `memory_bytes` bounds the segment memory (0: nothing is kept).
  DataObjects(std::shared_ptr<ObjectStore> store, DiskCache& cache, size_t memory_bytes,
              uint64_t epoch, std::function<Status()> check_still_writer);

  // A fresh id of this writer.
  uint64_t NewId();
  uint64_t epoch() const { return epoch_; }

  static std::string Key(uint64_t id);
  // The id of a data object's key; nullopt for anything else.
  static std::optional<uint64_t> ParseKey(const std::string& key);
  static uint64_t EpochOf(uint64_t id) { return id >> kSegmentEpochShift; }

  // Uploads `body` (a buffer from TakeStringBuffer, which Put takes over) as
  // object `id`. Once uploaded, with `keep_in_memory` the body goes to the
  // segment memory; otherwise, and after a failure, back to the pool.
  Status Put(uint64_t id, std::string&& body, bool keep_in_memory);
  // Reads [offset, offset + n) of object `id` whose size is `size`.
  Result<size_t> Read(uint64_t id, uint64_t size, uint64_t offset, size_t n, char* out);
  // Read() of what the local cache holds already: nullopt, nothing read or
  // fetched, when the bytes would have to come from the bucket.
  Result<std::optional<size_t>> ReadCached(uint64_t id, uint64_t size, uint64_t offset, size_t n,
                                           char* out);
  // Read() of bytes wanted once, such as a segment the collector moves
  // before deleting it: from the segment memory or the disk cache when they
  // hold them, else with one ranged GET that leaves no copy in the disk
  // cache, where it would only push out data that is read again.
  Result<size_t> ReadOnce(uint64_t id, uint64_t size, uint64_t offset, size_t n, char* out);
  Status Prefetch(uint64_t id, uint64_t size, uint64_t offset, size_t n);
  // Deletes the objects unless this writer is fenced.
  Status Delete(const std::vector<uint64_t>& ids);
  // Every data object in the bucket (ids and sizes).
  Result<std::vector<std::pair<uint64_t, uint64_t>>> List();

  uint64_t puts() const { return puts_.load(std::memory_order_relaxed); }
  uint64_t put_bytes() const { return put_bytes_.load(std::memory_order_relaxed); }
  uint64_t deletes() const { return deletes_.load(std::memory_order_relaxed); }
  SegmentMemory& memory() { return memory_; }

 private:
  // Read() from the segment memory alone: false when it lacks the object.
  // Clamps *n to the object's `size` either way.
  bool ReadMemory(uint64_t id, uint64_t size, uint64_t offset, size_t* n, char* out);

  std::shared_ptr<ObjectStore> store_;
  DiskCache& cache_;
  SegmentMemory memory_;
  const bool copy_uploads_;  // into the disk cache
  const uint64_t epoch_;
  std::function<Status()> check_still_writer_;
  std::atomic<uint64_t> next_seq_{1};
  std::atomic<uint64_t> puts_{0};
  std::atomic<uint64_t> put_bytes_{0};
  std::atomic<uint64_t> deletes_{0};
};

}  // namespace pail::engine
