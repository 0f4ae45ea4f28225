#include "engine/data_objects.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/local_file.h"
#include "util/buffer_pool.h"
#include "util/failpoint.h"

namespace pail::engine {

namespace {
constexpr size_t kIdHexDigits = 16;
constexpr size_t kSpreadHexDigits = 2;

// The prefix spreader: any fixed mixing of the id's bits will do, as long as
// it never changes (the key is recomputed from the id on every read).
uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

DataObjects::DataObjects(std::shared_ptr<ObjectStore> store, DiskCache& cache,
                         size_t memory_bytes, uint64_t epoch,
                         std::function<Status()> check_still_writer)
    : store_(std::move(store)), cache_(cache), memory_(memory_bytes),
      copy_uploads_(!store_->IsLocal()), epoch_(epoch),
      check_still_writer_(std::move(check_still_writer)) {}

uint64_t DataObjects::NewId() {
  return (epoch_ << kSegmentEpochShift) | next_seq_.fetch_add(1, std::memory_order_relaxed);
}

std::string DataObjects::Key(uint64_t id) {
  return fmt::format("{}{:02x}/{:016x}", kDataPrefix, Mix(id) & 0xff, id);
}

std::optional<uint64_t> DataObjects::ParseKey(const std::string& key) {
  const size_t prefix = sizeof(kDataPrefix) - 1;
  if (key.size() != prefix + kSpreadHexDigits + 1 + kIdHexDigits) return std::nullopt;
  if (key.compare(0, prefix, kDataPrefix) != 0 || key[prefix + kSpreadHexDigits] != '/') {
    return std::nullopt;
  }
  std::string_view hex(key.data() + prefix + kSpreadHexDigits + 1, kIdHexDigits);
  if (!IsLowerHex(hex)) return std::nullopt;
  uint64_t id = std::stoull(std::string(hex), nullptr, 16);
  if (Key(id) != key) return std::nullopt;  // wrong spread digits: not ours
  return id;
}

Status DataObjects::Put(uint64_t id, std::string&& body, bool keep_in_memory) {
  const std::string key = Key(id);
  Status s = Failpoint("data/before_upload");
  if (s.ok()) s = store_->Put(key, body).status();
  if (!s.ok()) {
    ReturnStringBuffer(std::move(body));
    return s;
  }
  puts_.fetch_add(1, std::memory_order_relaxed);
  put_bytes_.fetch_add(body.size(), std::memory_order_relaxed);
  if (copy_uploads_ && !cache_.paused()) {
    const std::string path = cache_.PathFor(key);
    // A failure only costs a later read its request.
    if (int err = WriteLocalFileErrno(path, body); err != 0) {
      cache_.NoteLocalFailure("copying an upload to " + path, err);
    } else {
      cache_.AddComplete(key, body.size());
    }
  }
  if (keep_in_memory) {
    memory_.Keep(id, std::move(body));
  } else {
    ReturnStringBuffer(std::move(body));
  }
  return Status::OK();
}

// The segment memory holds whole objects, so a read within `size` is served
// from it entirely or not at all.
bool DataObjects::ReadMemory(uint64_t id, uint64_t size, uint64_t offset, size_t* n, char* out) {
  if (offset >= size) {
    *n = 0;
    return true;
  }
  *n = static_cast<size_t>(std::min<uint64_t>(*n, size - offset));
  return memory_.Read(id, offset, *n, out);
}

Result<size_t> DataObjects::Read(uint64_t id, uint64_t size, uint64_t offset, size_t n, char* out) {
  if (ReadMemory(id, size, offset, &n, out)) return n;
  return cache_.Read(Key(id), size, offset, n, out);
}

Result<std::optional<size_t>> DataObjects::ReadCached(uint64_t id, uint64_t size,
                                                      uint64_t offset, size_t n, char* out) {
  if (ReadMemory(id, size, offset, &n, out)) return std::optional<size_t>(n);
  return cache_.ReadCached(Key(id), size, offset, n, out);
}

Result<size_t> DataObjects::ReadOnce(uint64_t id, uint64_t size, uint64_t offset, size_t n,
                                     char* out) {
  PAIL_ASSIGN_OR_RETURN(std::optional<size_t> cached, ReadCached(id, size, offset, n, out));
  if (cached) return *cached;
  n = static_cast<size_t>(std::min<uint64_t>(n, size - std::min(offset, size)));
  if (n == 0) return size_t{0};
  PAIL_ASSIGN_OR_RETURN(std::string bytes, store_->GetRange(Key(id), offset, n));
  n = std::min(n, bytes.size());
  std::memcpy(out, bytes.data(), n);
  return n;
}

Status DataObjects::Prefetch(uint64_t id, uint64_t size, uint64_t offset, size_t n) {
  if (memory_.Contains(id)) return Status::OK();
  return cache_.Prefetch(Key(id), size, offset, n);
}

Status DataObjects::Delete(const std::vector<uint64_t>& ids) {
  if (ids.empty()) return Status::OK();
  PAIL_RETURN_IF_ERROR(check_still_writer_());
  for (uint64_t id : ids) {
    PAIL_FAILPOINT("data/delete");
    const std::string key = Key(id);
    PAIL_RETURN_IF_ERROR(store_->Delete(key));
    memory_.Erase(id);
    cache_.Remove(key);
    deletes_.fetch_add(1, std::memory_order_relaxed);
  }
  return Status::OK();
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> DataObjects::List() {
  PAIL_ASSIGN_OR_RETURN(auto listing, ListAll(*store_, kDataPrefix));
  std::vector<std::pair<uint64_t, uint64_t>> out;
  out.reserve(listing.size());
  for (const ObjectMeta& meta : listing) {
    std::optional<uint64_t> id = ParseKey(meta.key);
    if (!id) {
      spdlog::warn("data objects: skipping foreign key {}", meta.key);
      continue;
    }
    out.emplace_back(*id, meta.size);
  }
  return out;
}

}  // namespace pail::engine
