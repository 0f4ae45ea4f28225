// Upgrading a bucket of an older, upgradable format in place when it is
// opened (docs/FORMAT.md, "Format versions").
//
// An upgrade runs before the filesystem serves anything, as a series of
// batches whose last one moves the format stamp. A crash leaves the old
// stamp in place and the next open starts the upgrade over; every step
// rewrites what it derives from scratch, so a repeat (or an older pailfs
// that served the bucket in between) leaves nothing stale.
#include <spdlog/spdlog.h>

#include "fs/filesystem_impl.h"

namespace pail::fs {

namespace {
// Keys per upgrade batch: small enough that a batch stays far below the
// engine's write buffer, large enough that few batches are needed.
constexpr size_t kUpgradeBatchKeys = 4096;

// 2 -> 3: an XattrTotals key for every inode that has extended attributes.
Status AddXattrTotals(engine::Engine& engine, rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta) {
  rocksdb::WriteBatch batch;
  // Totals an earlier, interrupted run wrote may be stale by now.
  batch.DeleteRange(meta, KindPrefix(kKindXattrTotals), KindPrefix(kKindXattrTotals + 1));
  std::string upper = KindPrefix(kKindXattr + 1);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, meta));
  Ino current = 0;
  XattrTotals totals;
  uint64_t inodes = 0;
  auto finish_inode = [&]() -> Status {
    if (current == 0) return Status::OK();
    batch.Put(meta, XattrTotalsKey(current), EncodeXattrTotals(totals));
    inodes++;
    if (batch.Count() >= kUpgradeBatchKeys) {
      PAIL_RETURN_IF_ERROR(engine.Write(&batch));
      batch.Clear();
    }
    return Status::OK();
  };
  for (it->Seek(KindPrefix(kKindXattr)); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (key.size() < 10) continue;  // damaged; fsck reports it
    Ino ino = KeyIno(key);
    if (ino != current) {
      PAIL_RETURN_IF_ERROR(finish_inode());
      current = ino;
      totals = XattrTotals{};
    }
    totals.name_bytes += key.size() - 9 + 1;
    totals.value_bytes += it->value().size();
  }
  if (!it->status().ok()) return engine::FromRocks(it->status());
  PAIL_RETURN_IF_ERROR(finish_inode());
  std::string version;
  PutBigEndian64(&version, 3);
  batch.Put(meta, SystemKey(kSystemFormat), version);
  PAIL_RETURN_IF_ERROR(engine.Write(&batch));
  spdlog::info("fs: upgraded the filesystem format from 2 to 3 (xattr totals for {} inodes)",
               inodes);
  return Status::OK();
}
}  // namespace

Status FileSystemImpl::UpgradeFormat(uint64_t version) {
  if (version == 2) {
    PAIL_RETURN_IF_ERROR(AddXattrTotals(engine_, db_, meta_).WithContext(
        "upgrading the filesystem format from 2 to 3"));
    version = 3;
  }
  if (version != kFormatVersion) {
    return Status::InvalidArgument("no upgrade from filesystem format " + std::to_string(version));
  }
  return Status::OK();
}

}  // namespace pail::fs
