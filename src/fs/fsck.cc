#include "fs/fsck.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/data_objects.h"
#include "fs/chunk_value.h"
#include "fs/inode_record.h"
#include "fs/key_codec.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {

// Reports beyond this many are counted, not kept, so a wrecked filesystem
// cannot exhaust memory through its report.
constexpr size_t kMaxReportedProblems = 1000;

struct InodeFacts {
  InodeRecord record;
  uint64_t links = 0;       // directory entries naming it
  uint64_t entries = 0;     // directories: entries found
  uint64_t subdirs = 0;     // directories: entries that are directories
  Ino linked_from = 0;      // directories: the directory naming it
  uint64_t chunk_bytes = 0; // regular files: stored data bytes
  bool orphan_mark = false;
};

class Checker {
 public:
  Checker(engine::Engine& engine, FsckProgress progress)
      : progress_(std::move(progress)),
        engine_(engine),
        db_(engine.db()),
        meta_(engine.column_family(kMetaColumnFamily)),
        data_(engine.column_family(kDataColumnFamily)) {}

  Result<FsckReport> Run() {
    if (db_ == nullptr || meta_ == nullptr || data_ == nullptr) {
      return Status::InvalidArgument("engine has no filesystem column families");
    }
    PAIL_RETURN_IF_ERROR(ScanMeta());
    PAIL_RETURN_IF_ERROR(ScanData());
    PAIL_RETURN_IF_ERROR(CheckObjects());
    CheckInodes();
    if (hidden_problems_ > 0) {
      report_.problems.push_back(fmt::format("... and {} more problems", hidden_problems_));
    }
    return report_;
  }

 private:
  template <typename... Args>
  void Problem(fmt::format_string<Args...> f, Args&&... args) {
    if (report_.problems.size() < kMaxReportedProblems) {
      report_.problems.push_back(fmt::format(f, std::forward<Args>(args)...));
    } else {
      hidden_problems_++;
    }
  }

  // Every 64Ki keys: cheap enough for the scan, often enough for a person.
  void Tick(std::string_view pass, uint64_t keys) {
    if (progress_ && keys % 65536 == 0) progress_(pass, keys);
  }

  static std::string Printable(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
      if (c >= 0x20 && c < 0x7f && c != '\\') {
        out.push_back(static_cast<char>(c));
      } else {
        out += fmt::format("\\x{:02x}", c);
      }
    }
    return out;
  }

  Status ScanMeta() {
    // Pass 1: inodes, so entries can be checked against them.
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
    uint64_t keys_read = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Tick("inodes", ++keys_read);
      std::string_view key(it->key().data(), it->key().size());
      std::string_view value(it->value().data(), it->value().size());
      uint8_t kind = static_cast<uint8_t>(key[0]);
      if (kind != kKindInode) continue;
      if (key.size() != 9) {
        Problem("inode key of bad length {}", key.size());
        continue;
      }
      Ino ino = KeyIno(key);
      InodeFacts facts;
      if (!DecodeInode(value, &facts.record)) {
        Problem("inode {}: damaged record", ino);
        continue;
      }
      max_ino_ = std::max(max_ino_, ino);
      report_.inodes++;
      if (facts.record.is_dir()) report_.directories++;
      if (facts.record.is_reg()) report_.files++;
      inodes_.emplace(ino, std::move(facts));
    }
    if (!it->status().ok()) return engine::FromRocks(it->status());

    // Pass 2: everything else.
    StatsValue stats_total;
    bool have_format = false;
    uint64_t next_ino = 0;
    std::set<std::pair<Ino, uint64_t>> entry_cookies;  // (dir, cookie) seen in entries
    keys_read = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Tick("entries", ++keys_read);
      std::string_view key(it->key().data(), it->key().size());
      std::string_view value(it->value().data(), it->value().size());
      if (key.empty()) {
        Problem("empty key in metadata");
        continue;
      }
      uint8_t kind = static_cast<uint8_t>(key[0]);
      switch (kind) {
        case kKindInode:
          break;
        case kKindDirEntry: {
          if (key.size() < 10) {
            Problem("directory entry key too short");
            break;
          }
          Ino dir = KeyIno(key);
          std::string_view name = key.substr(9);
          report_.entries++;
          DirEntryValue e;
          if (!DecodeDirEntry(value, &e)) {
            Problem("directory {}: entry '{}' damaged", dir, Printable(name));
            break;
          }
          if (CheckNewName(name) != 0 || name == "." || name == "..") {
            Problem("directory {}: invalid name '{}'", dir, Printable(name));
          }
          auto d = inodes_.find(dir);
          if (d == inodes_.end() || !d->second.record.is_dir()) {
            Problem("entry '{}' in {} which is not an existing directory", Printable(name), dir);
            break;
          }
          d->second.entries++;
          // Listings start at first_cookie: an entry below it would be
          // hidden from readdir.
          const InodeRecord& dr = d->second.record;
          const uint64_t lowest = std::max(kFirstEntryCookie, dr.first_cookie);
          if (e.cookie < lowest || e.cookie >= dr.next_cookie) {
            Problem("directory {}: entry '{}' has cookie {} outside [{}, {})", dir,
                    Printable(name), e.cookie, lowest, dr.next_cookie);
          }
          entry_cookies.insert({dir, e.cookie});
          std::string scan;
          rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, DirScanKey(dir, e.cookie), &scan);
          DirScanValue sv;
          if (!rs.ok() || !DecodeDirScan(scan, &sv) || sv.ino != e.ino || sv.name != name ||
              sv.type != e.type) {
            Problem("directory {}: entry '{}' has no matching scan row", dir, Printable(name));
          }
          auto c = inodes_.find(e.ino);
          if (c == inodes_.end()) {
            Problem("directory {}: entry '{}' points to missing inode {}", dir, Printable(name),
                    e.ino);
            break;
          }
          if (c->second.record.type() != e.type) {
            Problem("directory {}: entry '{}' records type {:o} but inode {} is {:o}", dir,
                    Printable(name), e.type, e.ino, c->second.record.type());
          }
          c->second.links++;
          if (c->second.record.is_dir()) {
            d->second.subdirs++;
            if (c->second.linked_from != 0) {
              Problem("directory {} has more than one name", e.ino);
            }
            c->second.linked_from = dir;
            child_dirs_[dir].push_back(e.ino);
          }
          break;
        }
        case kKindDirScan: {
          if (key.size() != 17) {
            Problem("directory scan key of bad length {}", key.size());
            break;
          }
          Ino dir = KeyIno(key);
          uint64_t cookie = GetBigEndian64(key.data() + 9);
          DirScanValue sv;
          if (!DecodeDirScan(value, &sv)) {
            Problem("directory {}: scan row {} damaged", dir, cookie);
            break;
          }
          std::string ev;
          rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, DirEntryKey(dir, sv.name), &ev);
          DirEntryValue e;
          if (!rs.ok() || !DecodeDirEntry(ev, &e) || e.cookie != cookie || e.ino != sv.ino) {
            Problem("directory {}: scan row {} ('{}') has no matching entry", dir, cookie,
                    Printable(sv.name));
          }
          break;
        }
        case kKindXattr: {
          if (key.size() < 10) {
            Problem("xattr key too short");
            break;
          }
          Ino ino = KeyIno(key);
          if (!inodes_.count(ino)) {
            Problem("xattr '{}' left for missing inode {}", Printable(key.substr(9)), ino);
          }
          XattrTotals& found = xattrs_found_[ino];
          found.name_bytes += key.size() - 9 + 1;
          found.value_bytes += value.size();
          found.count++;
          break;
        }
        case kKindXattrTotals: {
          XattrTotals recorded;
          if (key.size() != 9 || !DecodeXattrTotals(value, &recorded)) {
            Problem("damaged xattr totals record");
            break;
          }
          xattrs_recorded_[KeyIno(key)] = recorded;
          break;
        }
        case kKindOrphan: {
          if (key.size() != 9) {
            Problem("orphan key of bad length");
            break;
          }
          Ino ino = KeyIno(key);
          auto c = inodes_.find(ino);
          report_.orphans++;
          if (c == inodes_.end()) {
            Problem("orphan mark for missing inode {}", ino);
          } else {
            c->second.orphan_mark = true;
          }
          break;
        }
        case kKindReclaim: {
          if (key.size() != 9 || value.size() != 8) {
            Problem("damaged reclaim record");
            break;
          }
          Ino ino = KeyIno(key);
          reclaim_.insert(ino);
          report_.pending_reclaims++;
          if (inodes_.count(ino)) Problem("inode {} exists but its data is queued for reclaim", ino);
          break;
        }
        case kKindSegment: {
          SegmentUsage u;
          if (key.size() != 9 || !DecodeSegmentUsage(value, &u)) {
            Problem("damaged segment usage record");
            break;
          }
          if (u.total_bytes <= 0 || u.live_bytes < 0 || u.live_bytes > u.total_bytes) {
            Problem("segment {:016x}: usage record says {} live of {} bytes", KeyIno(key),
                    u.live_bytes, u.total_bytes);
          }
          segments_[KeyIno(key)] = SegmentFacts{u, 0};
          break;
        }
        case kKindStats: {
          StatsValue v;
          if (key.size() != 2 || !DecodeStats(value, &v)) {
            Problem("damaged stats shard");
            break;
          }
          stats_total.used_bytes += v.used_bytes;
          stats_total.inodes += v.inodes;
          break;
        }
        case kKindSystem: {
          if (key.size() != 2 || value.size() != 8) {
            Problem("damaged system record");
            break;
          }
          if (static_cast<uint8_t>(key[1]) == kSystemFormat) {
            have_format = true;
            format_ = GetBigEndian64(value.data());
            if (format_ != kFormatVersion && format_ != kPreviousFormatVersion) {
              Problem("format version {}; this pailfs checks only format {}", format_,
                      kFormatVersion);
            }
          } else if (static_cast<uint8_t>(key[1]) == kSystemNextInode) {
            next_ino = GetBigEndian64(value.data());
          } else {
            Problem("unknown system record {}", static_cast<int>(key[1]));
          }
          break;
        }
        default:
          Problem("unknown metadata key kind {:#04x}", kind);
      }
    }
    if (!it->status().ok()) return engine::FromRocks(it->status());
    if (!have_format) Problem("no format record: not a pailfs filesystem or never initialised");
    if (have_format && next_ino <= max_ino_) {
      Problem("inode counter {} is not above the largest inode {}", next_ino, max_ino_);
    }
    stats_ = stats_total;
    return Status::OK();
  }

  Status ScanData() {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), data_));
    Ino reported_missing = 0;
    uint64_t keys_read = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Tick("data", ++keys_read);
      std::string_view key(it->key().data(), it->key().size());
      if (key.size() != 16) {
        Problem("data key of bad length {}", key.size());
        continue;
      }
      Ino ino = ChunkKeyIno(key);
      uint64_t index = ChunkKeyIndex(key);
      report_.chunks++;
      StoredChunk chunk;
      if (!DecodeChunk(it->value().ToStringView(), &chunk)) {
        Problem("inode {}: chunk {} has a value that does not decode", ino, index);
        continue;
      }
      report_.data_bytes += chunk.plain_len();
      // Each extent the value reads from counts once toward its segment's
      // live bytes, however many pieces point into it.
      for (const ChunkExtent& extent : DistinctExtents(ChunkPieces(chunk))) {
        auto seg = segments_.find(extent.segment);
        if (seg == segments_.end()) {
          Problem("inode {}: chunk {} points into segment {:016x}, which has no record", ino, index,
                  extent.segment);
        } else if (extent.offset + uint64_t{extent.stored_len} >
                   static_cast<uint64_t>(seg->second.usage.total_bytes)) {
          Problem("inode {}: chunk {} points past the end of segment {:016x}", ino, index,
                  extent.segment);
        } else {
          seg->second.live += extent.stored_len;
        }
      }
      if (chunk.is_pieces) report_.pieces_chunks++;
      if (!chunk.is_inline()) {
      } else if (chunk.inline_bytes.empty() || chunk.inline_bytes.back() == 0) {
        Problem("inode {}: chunk {} stored inline empty or zero-padded", ino, index);
      }
      if (reclaim_.count(ino)) continue;  // freed by the background reclaimer
      auto c = inodes_.find(ino);
      if (c == inodes_.end() || !c->second.record.is_reg()) {
        if (reported_missing != ino) {
          Problem("data left for inode {} which is not an existing file", ino);
          reported_missing = ino;
        }
        continue;
      }
      if (index >= ChunkCount(c->second.record.size)) {
        Problem("inode {}: chunk {} lies past the end of the file (size {})", ino, index,
                c->second.record.size);
      }
      // A reserved chunk is charged whole, below, whatever it stores.
      if (!c->second.record.reserved.Contains(index)) c->second.chunk_bytes += chunk.plain_len();
    }
    for (const auto& [id, f] : segments_) {
      if (f.live != f.usage.live_bytes) {
        Problem("segment {:016x}: record says {} live bytes, chunk values point at {}", id,
                f.usage.live_bytes, f.live);
      }
      report_.segments.push_back(
          {id, static_cast<uint64_t>(f.usage.total_bytes), static_cast<uint64_t>(f.live)});
      report_.segment_bytes += static_cast<uint64_t>(f.usage.total_bytes);
      report_.segment_live_bytes += static_cast<uint64_t>(f.live);
    }
    if (!it->status().ok()) return engine::FromRocks(it->status());
    return Status::OK();
  }

  // Every registered segment's object exists with the recorded size.
  Status CheckObjects() {
    PAIL_ASSIGN_OR_RETURN(auto objects, engine_.data_objects().List());
    std::map<uint64_t, uint64_t> sizes(objects.begin(), objects.end());
    for (const auto& [id, f] : segments_) {
      auto o = sizes.find(id);
      if (o == sizes.end()) {
        Problem("segment {:016x} has a record but no object in the bucket", id);
      } else if (o->second != static_cast<uint64_t>(f.usage.total_bytes)) {
        Problem("segment {:016x}: record says {} bytes, the object holds {}", id,
                f.usage.total_bytes, o->second);
      }
    }
    for (const auto& [id, size] : sizes) {
      if (!segments_.count(id)) report_.unregistered_objects++;
    }
    return Status::OK();
  }

  void CheckInodes() {
    auto root = inodes_.find(kRootIno);
    if (root == inodes_.end() || !root->second.record.is_dir()) {
      Problem("root directory (inode 1) is missing");
    }
    // Every named directory must hang below the root; a cycle of
    // directories naming each other would not.
    std::set<Ino> reachable{kRootIno};
    std::vector<Ino> pending{kRootIno};
    while (!pending.empty()) {
      Ino dir = pending.back();
      pending.pop_back();
      auto children = child_dirs_.find(dir);
      if (children == child_dirs_.end()) continue;
      for (Ino child : children->second) {
        if (reachable.insert(child).second) pending.push_back(child);
      }
    }
    for (const auto& [ino, f] : inodes_) {
      if (f.record.is_dir() && f.links > 0 && !reachable.count(ino)) {
        Problem("directory {} is not reachable from the root", ino);
      }
    }
    uint64_t used = 0;
    for (const auto& [ino, f] : inodes_) {
      const InodeRecord& r = f.record;
      if (r.is_dir()) {
        if (f.entries != r.entries) {
          Problem("directory {}: counts {} entries but holds {}", ino, r.entries, f.entries);
        }
        if (r.nlink != 2 + f.subdirs && !(r.nlink == 0 && f.orphan_mark)) {
          Problem("directory {}: nlink {} but has {} subdirectories", ino, r.nlink, f.subdirs);
        }
        if (ino == kRootIno) {
          if (f.links != 0) Problem("root directory has a name in some directory");
          if (r.parent != kRootIno) Problem("root directory's parent is {}", r.parent);
        } else if (f.links == 0 && !f.orphan_mark) {
          Problem("directory {} is not in any directory", ino);
        } else if (f.links == 1 && r.parent != f.linked_from) {
          Problem("directory {}: parent {} but named in {}", ino, r.parent, f.linked_from);
        }
      } else {
        if (r.nlink != f.links) {
          Problem("inode {}: nlink {} but {} entries name it", ino, r.nlink, f.links);
        }
        if (r.nlink == 0 && !f.orphan_mark) Problem("inode {} has no name and no orphan mark", ino);
      }
      if (f.orphan_mark && r.nlink != 0) Problem("inode {} marked orphan but has links", ino);
      if (r.is_reg()) {
        const uint64_t charged = f.chunk_bytes + r.reserved.Count() * kChunkSize;
        if (r.used != charged) {
          Problem("inode {}: records {} used bytes but stores and reserves {}", ino, r.used,
                  charged);
        }
        used += r.used;
      }
    }
    if (format_ >= 3) CheckXattrTotals();
    if (stats_.used_bytes != used) {
      Problem("stats count {} used bytes but files hold {}", stats_.used_bytes, used);
    }
    if (stats_.inodes != report_.inodes) {
      Problem("stats count {} inodes but {} exist", stats_.inodes, report_.inodes);
    }
  }

  // Every inode with xattrs has totals that add them up, and no other has.
  void CheckXattrTotals() {
    for (const auto& [ino, found] : xattrs_found_) {
      auto rec = xattrs_recorded_.find(ino);
      if (rec == xattrs_recorded_.end()) {
        Problem("inode {}: has xattrs but no xattr totals", ino);
      } else {
        XattrTotals recorded = rec->second;
        // A record from before the count was kept is counted when next
        // changed; its sums still have to match.
        if (recorded.count == kXattrCountUnknown) recorded.count = found.count;
        if (!(recorded == found)) {
          Problem("inode {}: xattr totals record {} name and {} value bytes in {} attributes, "
                  "the xattrs hold {} and {} in {}",
                  ino, recorded.name_bytes, recorded.value_bytes, recorded.count,
                  found.name_bytes, found.value_bytes, found.count);
        }
      }
    }
    for (const auto& [ino, rec] : xattrs_recorded_) {
      if (!xattrs_found_.count(ino)) Problem("xattr totals for inode {} which has no xattrs", ino);
    }
  }

  FsckProgress progress_;
  engine::Engine& engine_;
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* meta_;
  rocksdb::ColumnFamilyHandle* data_;
  FsckReport report_;
  size_t hidden_problems_ = 0;
  std::unordered_map<Ino, InodeFacts> inodes_;
  std::set<Ino> reclaim_;
  std::unordered_map<Ino, std::vector<Ino>> child_dirs_;
  Ino max_ino_ = 0;
  StatsValue stats_;
  struct SegmentFacts {
    SegmentUsage usage;
    int64_t live = 0;  // stored bytes chunk values point at
  };
  std::map<uint64_t, SegmentFacts> segments_;
  uint64_t format_ = 0;
  std::unordered_map<Ino, XattrTotals> xattrs_found_;     // summed from the xattr keys
  std::unordered_map<Ino, XattrTotals> xattrs_recorded_;  // the totals keys
};

}  // namespace

Result<FsckReport> Fsck(engine::Engine& engine, FsckProgress progress) {
  return Checker(engine, std::move(progress)).Run();
}

}  // namespace pail::fs
