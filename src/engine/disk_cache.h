// DiskCache: the local disk copy of bucket objects, bounded in bytes and in
// open files.
//
// Objects are immutable under their key, so a cached extent never goes
// stale. Each cached object is a sparse local file plus one state per
// kCacheExtentBytes extent: absent, being fetched, or present. A read
// fetches the absent extents it touches with one ranged GET per contiguous
// run (grown, if the caller asks, over the absent extents beside it within
// an aligned window) and keeps them; extents another caller is already
// fetching it waits for instead of fetching them again. When the cache
// holds more than its budget, whole objects are evicted least recently used
// first (their files are deleted). Files the engine wrote itself enter the
// cache complete once uploaded. The cache starts empty at every open:
// nothing on local disk is trusted.
//
// Concurrency. mu_ guards the cache's map, LRU lists and totals; each
// Entry's mu guards that object's extent states and bookkeeping. mu_ is
// taken before an Entry's mu, and at most one Entry's mu is held at a time.
// Neither is held across a store request or a pread/pwrite, so callers
// reading distinct extents of one object run in parallel.
//
// Every caller touching an object's file holds a pin on its Entry (Pin
// below) for the whole call; the pin comes with an open descriptor. Fetching
// a run: under Entry::mu mark its extents fetching, then with no lock GET and
// pwrite, then under Entry::mu mark them present, or absent again if the GET
// or write failed, and wake the waiters. A waiter that finds them absent
// claims them itself, so it either gets the bytes from its own request or
// returns that request's error; nobody waits on an extent no one is fetching.
//
// The invariant that keeps reads correct: while a caller pins an entry, its
// descriptor stays open and names the same file, and nothing in that file
// changes but extents going from absent to present. Nothing punches holes.
// Eviction, Remove and AddComplete detach an entry: it leaves the map, the
// LRU lists and the byte total, and its file is unlinked (unless
// AddComplete's new file has taken the path), but its descriptor is closed
// only by the last pin's release (the file stays readable and writable
// through it). The open-file bound closes only
// unpinned descriptors. So:
//  - a reader whose extents are evicted between its fill and its pread
//    still reads them, through its pin's descriptor;
//  - an extent is marked present only by a pin holder, after its bytes went
//    through that descriptor, so never over a deleted file or one another
//    entry owns: the next reader of an evicted key gets a new entry, all
//    extents absent, and a new file (the old one was unlinked first, under
//    mu_, so the O_TRUNC create cannot hit it).
// Eviction also skips pinned entries, not for correctness but because their
// bytes are in use or being fetched; the cache may then stay over budget
// until the next caller finishes and evicts again.
// The engine writes PathFor(key) and calls AddComplete only for keys never
// read through the cache (new uploads): a write in place would change the
// file under an older entry's readers.
//
// Bounds: entries with nothing present are forgotten when their last pin
// goes (a failed read leaves nothing behind), so entries are bounded by the
// byte budget over kCacheExtentBytes plus those in use. At most
// `max_open_files` descriptors stay open: beyond that the least recently
// used unpinned entries close theirs and reopen the file when read again.
//
// A full disk. The cache holds copies only, so a local disk that refuses a
// write (full, over a quota, failing) must never fail a read. Whoever fails
// to write into the cache's disk calls NoteLocalFailure: this cache when it
// fetches or creates a file, the engine for its tables and upload copies
// and for a file:// bucket's puts (room_making_store.h). The cache then
// evicts a quarter of what it holds, giving the disk back, and pauses
// (kLocalFailurePause by default): a read that misses meanwhile gets its
// bytes from the bucket without keeping them, a prefetch does nothing, and
// uploads are not copied. After the pause it caches again (the disk may
// have room by then), and a read whose fetch met the failure is answered
// from the bucket as well. The budget is also capped at start to
// kMaxShareOfFreeDisk of the room the disk has then (the cache starts
// empty), so a budget larger than the disk does not fill it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "objstore/object_store.h"
#include "util/mutex.h"

namespace pail::engine {

// One extent is one encryption page (crypto::kPagePlainBytes, checked in
// disk_cache.cc): a 4 KiB miss fetches and decrypts one page, and no page
// straddles two extents, so none is fetched twice.
constexpr uint64_t kCacheExtentBytes = 64 * 1024;
constexpr size_t kCacheMaxOpenFiles = 1024;
constexpr std::chrono::seconds kLocalFailurePause{10};
constexpr double kMaxShareOfFreeDisk = 0.75;

class DiskCache {
 public:
  DiskCache(std::shared_ptr<ObjectStore> store, std::string dir, uint64_t budget_bytes,
            size_t max_open_files = kCacheMaxOpenFiles,
            std::chrono::milliseconds local_failure_pause = kLocalFailurePause);
  ~DiskCache();

  // Local path where the object `key` is (or will be) cached.
  std::string PathFor(const std::string& key) const;

  // Registers a complete local file at PathFor(key), written by the engine.
  void AddComplete(const std::string& key, uint64_t size);

  // Reads [offset, offset+n) of `key` (whose size is `size`) into `out`,
  // fetching what the cache lacks. Returns the bytes read (short at the end).
  // A miss fetches, in the same GET, the absent extents next to it within
  // the aligned `fetch_window` bytes around the read (0: only what is read),
  // for a caller that expects to read them soon.
  Result<size_t> Read(const std::string& key, uint64_t size, uint64_t offset, size_t n, char* out,
                      uint64_t fetch_window = 0);
  // Read() of bytes already here, for a caller that must not wait on the
  // bucket: nullopt, having read and fetched nothing, when any of them is
  // absent or still being fetched. A hit counts as one.
  Result<std::optional<size_t>> ReadCached(const std::string& key, uint64_t size, uint64_t offset,
                                           size_t n, char* out);

  // Fetches the absent extents of [offset, offset+n) of `key`, skipping
  // those present or being fetched, and copies nothing out: read-ahead, run
  // by the caller on its own thread. Counts no hit or miss.
  Status Prefetch(const std::string& key, uint64_t size, uint64_t offset, size_t n);

  // Drops the object and its local file. Callers reading it finish first.
  void Remove(const std::string& key);

  // A write into the cache's directory failed with `err` (see "A full disk"
  // above); `what` names it for the log.
  void NoteLocalFailure(const std::string& what, int err) EXCLUDES(mu_);
  // Whether caching is paused after a local failure.
  bool paused() const;
  // The budget in force: the configured one, capped by the disk's room at start.
  uint64_t budget() const { return budget_; }

  uint64_t cached_bytes() const;
  size_t open_files() const;
  // Reads that sent no request (served from local disk, possibly after
  // waiting for another caller's fetch), and reads that sent at least one.
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }
  // Ranged GETs sent by Prefetch.
  uint64_t prefetch_requests() const { return prefetch_requests_.load(std::memory_order_relaxed); }
  // NoteLocalFailure calls.
  uint64_t local_failures() const { return local_failures_.load(std::memory_order_relaxed); }

 private:
  enum ExtentState : uint8_t { kAbsent, kFetching, kPresent };
  struct Entry;
  using EntryList = std::list<std::shared_ptr<Entry>>;
  struct Entry {
    Entry(std::string k, uint64_t s, ExtentState initial)
        : key(std::move(k)), size(s),
          extents((s + kCacheExtentBytes - 1) / kCacheExtentBytes, initial) {}
    const std::string key;
    const uint64_t size;
    Mutex mu;
    CondVar fetched{&mu};  // signalled when a fetch ends, well or not
    std::vector<ExtentState> extents GUARDED_BY(mu);
    // Bookkeeping, changed with mu_ held as well.
    int fd GUARDED_BY(mu) = -1;  // open while pinned
    int pins GUARDED_BY(mu) = 0;
    bool in_map GUARDED_BY(mu) = true;  // false once detached
    uint64_t present_bytes GUARDED_BY(mu) = 0;  // counted in total_ while in_map
    EntryList::iterator lru GUARDED_BY(mu);      // in lru_ while in_map
    EntryList::iterator open_lru GUARDED_BY(mu);  // in open_lru_ while in_map and fd >= 0
  };

  // A pinned entry and its descriptor; unpins when destroyed, adding the
  // bytes this caller made present.
  class Pin {
   public:
    Pin(DiskCache* cache, std::shared_ptr<Entry> entry, int fd)
        : cache_(cache), entry_(std::move(entry)), fd_(fd) {}
    Pin(Pin&& other) noexcept
        : cache_(other.cache_), entry_(std::move(other.entry_)), fd_(other.fd_), added_(other.added_) {}
    Pin& operator=(Pin&&) = delete;
    ~Pin();
    Entry& entry() const { return *entry_; }
    int fd() const { return fd_; }
    void Add(uint64_t bytes) { added_ += bytes; }

   private:
    DiskCache* cache_;
    std::shared_ptr<Entry> entry_;
    int fd_;
    uint64_t added_ = 0;
  };

  Result<Pin> Acquire(const std::string& key, uint64_t size) EXCLUDES(mu_);
  // Acquire's work; sets *create_errno when the entry's file could not be made.
  Result<Pin> TryAcquire(const std::string& key, uint64_t size, int* create_errno) EXCLUDES(mu_);
  void Unpin(Entry& e, uint64_t added) EXCLUDES(mu_);
  // Opens the file of e (already in lru_) unless open. Returns 0 or errno.
  int OpenFile(Entry& e, int flags) REQUIRES(mu_, e.mu);
  // Takes e out of the map, the lists and the totals; closes its file unless
  // pinned and, with `unlink`, deletes it.
  void Detach(Entry& e, bool unlink) REQUIRES(mu_, e.mu);
  // Evicts unpinned entries, least recently used first, until the cache
  // holds at most `limit` bytes or only pinned ones are left.
  void EvictDownTo(uint64_t limit) REQUIRES(mu_);
  void CloseIdleFiles() REQUIRES(mu_);

  // Makes [first, last] present: claims the absent runs and fetches them;
  // with `wait`, also waits for the extents others are fetching (Read),
  // without, leaves those to them (Prefetch). Counts its GETs in *requests.
  // When it fetches, the first and last runs grow over absent extents as
  // far as [window_first, window_last], which holds [first, last].
  Status Ensure(Pin& pin, uint64_t first, uint64_t last, uint64_t window_first,
                uint64_t window_last, bool wait, int* requests);
  // Copies [offset, offset + n) out of the pinned entry's file, whose
  // extents there are present.
  Result<size_t> ReadPinned(const Pin& pin, const std::string& key, uint64_t offset, size_t n,
                            char* out);
  // Read() through the cache, fetching and keeping what it lacks.
  Result<size_t> ReadThrough(const std::string& key, uint64_t size, uint64_t offset, size_t n,
                             char* out, uint64_t fetch_window);
  // One ranged GET into `out`, keeping nothing: reads while paused.
  Result<size_t> ReadFromBucket(const std::string& key, uint64_t size, uint64_t offset, size_t n,
                                char* out);
  // One ranged GET of extents [first, last], written to the pinned file.
  Status Fetch(const Pin& pin, uint64_t first, uint64_t last);
  // A ranged GET that must return all `length` bytes (the object's listed
  // size covers them): Corruption when it returns fewer.
  Result<std::string> GetExactRange(const std::string& key, uint64_t offset, uint64_t length);
  static uint64_t ExtentLength(const Entry& e, uint64_t extent);

  std::shared_ptr<ObjectStore> store_;
  std::string dir_;
  uint64_t budget_;
  size_t max_open_files_;
  const std::chrono::milliseconds local_failure_pause_;
  mutable Mutex mu_;  // taken before an Entry's mu
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_ GUARDED_BY(mu_);
  EntryList lru_ GUARDED_BY(mu_);       // every entry in the map; front = most recent
  EntryList open_lru_ GUARDED_BY(mu_);  // those with an open file; front = most recent
  uint64_t total_ GUARDED_BY(mu_) = 0;
  size_t open_fds_ GUARDED_BY(mu_) = 0;  // detached entries' still-open files included
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> prefetch_requests_{0};
  std::atomic<uint64_t> local_failures_{0};
  std::atomic<int64_t> paused_until_ns_{0};  // SteadyNowNs() until which caching is paused
};

}  // namespace pail::engine
