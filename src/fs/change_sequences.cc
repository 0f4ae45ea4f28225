#include "fs/change_sequences.h"

#include <algorithm>

#include "fs/key_codec.h"
#include "util/hash_slot.h"

namespace pail::fs {

// Calls back with the inode each key of a batch belongs to.
class ChangeSequences::InodeCollector : public rocksdb::WriteBatch::Handler {
 public:
  InodeCollector(ChangeSequences& owner, uint64_t sequence)
      : owner_(owner), sequence_(sequence) {}

  rocksdb::Status PutCF(uint32_t family, const rocksdb::Slice& key,
                        const rocksdb::Slice&) override {
    return Changed(family, key);
  }
  rocksdb::Status DeleteCF(uint32_t family, const rocksdb::Slice& key) override {
    return Changed(family, key);
  }
  rocksdb::Status SingleDeleteCF(uint32_t family, const rocksdb::Slice& key) override {
    return Changed(family, key);
  }
  rocksdb::Status MergeCF(uint32_t family, const rocksdb::Slice& key,
                          const rocksdb::Slice&) override {
    return Changed(family, key);
  }
  // A range names its first inode; the ranges the filesystem deletes lie
  // within one inode's keys (a truncation, an inode's xattrs), and the end
  // key is noted too in case one does not.
  rocksdb::Status DeleteRangeCF(uint32_t family, const rocksdb::Slice& begin,
                                const rocksdb::Slice& end) override {
    rocksdb::Status s = Changed(family, begin);
    if (s.ok()) s = Changed(family, end);
    return s;
  }

 private:
  rocksdb::Status Changed(uint32_t family, const rocksdb::Slice& key) {
    const std::string_view k(key.data(), key.size());
    if (family == owner_.data_family_) {
      if (k.size() >= 8) owner_.Raise(ChunkKeyIno(k), sequence_);
    } else if (family == owner_.meta_family_ && k.size() >= 9) {
      switch (static_cast<uint8_t>(k[0])) {
        case kKindInode:
        case kKindDirEntry:
        case kKindDirScan:
        case kKindXattr:
        case kKindOrphan:
        case kKindReclaim:
        case kKindXattrTotals:
          owner_.Raise(KeyIno(k), sequence_);
          break;
        default:  // stats, system and segment keys belong to no inode
          break;
      }
    }
    return rocksdb::Status::OK();
  }

  ChangeSequences& owner_;
  const uint64_t sequence_;
};

ChangeSequences::ChangeSequences(uint32_t meta_family, uint32_t data_family)
    : meta_family_(meta_family), data_family_(data_family) {}

void ChangeSequences::Note(const rocksdb::WriteBatch& batch, uint64_t sequence) {
  InodeCollector collector(*this, sequence);
  // A record the collector cannot read (none the filesystem writes) may
  // have changed any inode: then every inode counts as changed.
  if (!batch.Iterate(&collector).ok()) RaiseTo(&floor_, sequence);
}

uint64_t ChangeSequences::LastChange(Ino ino) const {
  return std::max(slots_[SlotOf(ino)].load(std::memory_order_acquire),
                  floor_.load(std::memory_order_acquire));
}

void ChangeSequences::Raise(Ino ino, uint64_t sequence) { RaiseTo(&slots_[SlotOf(ino)], sequence); }

void ChangeSequences::RaiseTo(std::atomic<uint64_t>* slot, uint64_t sequence) {
  uint64_t seen = slot->load(std::memory_order_relaxed);
  while (seen < sequence &&
         !slot->compare_exchange_weak(seen, sequence, std::memory_order_release,
                                      std::memory_order_relaxed)) {
  }
}

size_t ChangeSequences::SlotOf(Ino ino) { return HashSlot(ino, kSlotBits); }

}  // namespace pail::fs
