#include "ninep/fid_table.h"

namespace pail::ninep {

Fid::~Fid() {
  // No other reference exists, so the state needs no lock; taking it keeps
  // the analysis honest at no cost.
  MutexLock lock(&mu_);
  if (state_.handle != 0) (void)fs_.Release(state_.handle);
}

std::shared_ptr<Fid> FidTable::Get(uint32_t fid) const {
  MutexLock lock(&mu_);
  auto it = fids_.find(fid);
  return it == fids_.end() ? nullptr : it->second;
}

fs::FsStatus FidTable::Insert(uint32_t fid, std::shared_ptr<Fid> f, bool replace) {
  std::shared_ptr<Fid> old;  // released after the table's mutex
  MutexLock lock(&mu_);
  auto it = fids_.find(fid);
  if (it != fids_.end()) {
    if (!replace) return fs::FsError{EBADF};
    old = std::move(it->second);
    it->second = std::move(f);
    return fs::FsStatus::OK();
  }
  if (fids_.size() >= max_fids_) return fs::FsError{EMFILE};
  fids_.emplace(fid, std::move(f));
  return fs::FsStatus::OK();
}

std::shared_ptr<Fid> FidTable::Remove(uint32_t fid) {
  MutexLock lock(&mu_);
  auto it = fids_.find(fid);
  if (it == fids_.end()) return nullptr;
  std::shared_ptr<Fid> f = std::move(it->second);
  fids_.erase(it);
  return f;
}

void FidTable::Clear() {
  std::map<uint32_t, std::shared_ptr<Fid>> gone;
  {
    MutexLock lock(&mu_);
    gone.swap(fids_);
  }
}

size_t FidTable::size() const {
  MutexLock lock(&mu_);
  return fids_.size();
}

}  // namespace pail::ninep
