// Fids: the client's numbers for files it has walked to, per connection.
//
// A Fid is shared (requests on one fid may run at once), so its changing
// parts (the open handle, what lcreate turned it into, where a rename moved
// it, an xattr transfer) sit behind its own mutex; handlers take a Snapshot.
// The table is bounded: Insert fails once max_fids are in use. Releasing an
// open handle happens when the last request holding the Fid lets go, so a
// clunk racing a read never closes the file under it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "fs/filesystem.h"
#include "util/mutex.h"

namespace pail::ninep {

enum class FidKind {
  kFile,        // walked to or attached: any inode
  kXattrRead,   // from Txattrwalk: reads return `xattr_data`
  kXattrWrite,  // from Txattrcreate: writes fill `xattr_data`, clunk sets it
};

struct FidState {
  FidKind kind = FidKind::kFile;
  fs::Ino ino = 0;
  // Where the fid was reached from, for Trename/Tremove (0: the attach root).
  fs::Ino parent = 0;
  std::string name;
  uint32_t type = 0;     // S_IFMT bits of the inode
  uint64_t handle = 0;   // nonzero once opened
  bool opened = false;
  // xattr fids
  std::string xattr_name;
  std::string xattr_data;
  uint64_t xattr_size = 0;  // the size Txattrcreate announced
  int xattr_flags = 0;
};

class Fid {
 public:
  Fid(fs::FileSystem& fs, std::shared_ptr<const fs::Credentials> cred, fs::Ino attach_root,
      FidState state)
      : fs_(fs), cred_(std::move(cred)), attach_root_(attach_root), state_(std::move(state)) {}
  ~Fid();
  Fid(const Fid&) = delete;
  Fid& operator=(const Fid&) = delete;

  const fs::Credentials& cred() const { return *cred_; }
  const std::shared_ptr<const fs::Credentials>& shared_cred() const { return cred_; }
  fs::Ino attach_root() const { return attach_root_; }

  FidState Snapshot() const {
    MutexLock lock(&mu_);
    return state_;
  }
  // Runs `f(FidState&)` under the fid's mutex.
  template <typename F>
  auto Update(F&& f) {
    MutexLock lock(&mu_);
    return f(state_);
  }

 private:
  fs::FileSystem& fs_;
  const std::shared_ptr<const fs::Credentials> cred_;
  const fs::Ino attach_root_;
  mutable Mutex mu_;
  FidState state_ GUARDED_BY(mu_);
};

class FidTable {
 public:
  explicit FidTable(size_t max_fids) : max_fids_(max_fids) {}

  std::shared_ptr<Fid> Get(uint32_t fid) const;
  // EBADF if `fid` is in use (unless replace), EMFILE when the table is full.
  fs::FsStatus Insert(uint32_t fid, std::shared_ptr<Fid> f, bool replace = false);
  // The removed fid, or null if there was none.
  std::shared_ptr<Fid> Remove(uint32_t fid);
  void Clear();
  size_t size() const;

 private:
  const size_t max_fids_;
  mutable Mutex mu_;
  std::map<uint32_t, std::shared_ptr<Fid>> fids_ GUARDED_BY(mu_);
};

}  // namespace pail::ninep
