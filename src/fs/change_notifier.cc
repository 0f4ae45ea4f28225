#include "fs/change_notifier.h"

#include <fcntl.h>

#include <optional>

namespace pail::fs {

namespace {

class ChangeNotifier final : public FileSystem {
 public:
  ChangeNotifier(FileSystem& inner, ChangeListener& listener) : fs_(inner), listener_(listener) {}

  Status Close() override { return fs_.Close(); }
  Status SyncAll() override { return fs_.SyncAll(); }

  FsResult<Attr> Lookup(const Credentials& cred, Ino parent, std::string_view name) override {
    return fs_.Lookup(cred, parent, name);
  }
  FsResult<Attr> GetAttr(const Credentials& cred, Ino ino) override { return fs_.GetAttr(cred, ino); }
  FsResult<Attr> ResolveHandle(Ino ino, uint64_t generation) override {
    return fs_.ResolveHandle(ino, generation);
  }
  FsResult<Attr> SetAttr(const Credentials& cred, Ino ino, const SetAttrRequest& req) override {
    FsResult<Attr> r = fs_.SetAttr(cred, ino, req);
    if (r.ok()) Report([&] { listener_.InodeChanged(ino, req.size.has_value()); });
    return r;
  }
  FsStatus Access(const Credentials& cred, Ino ino, int mask) override {
    return fs_.Access(cred, ino, mask);
  }

  FsResult<CreateResult> Create(const Credentials& cred, Ino parent, std::string_view name,
                                uint32_t mode, const CreateOptions& options) override {
    FsResult<CreateResult> r = fs_.Create(cred, parent, name, mode, options);
    if (r.ok()) {
      Report([&] {
        listener_.EntryChanged(parent, name);
        // An existing file opened with O_TRUNC lost its bytes.
        if (!r->created && options.truncate) listener_.InodeChanged(r->attr.ino, true);
      });
    }
    return r;
  }
  FsResult<Attr> Mkdir(const Credentials& cred, Ino parent, std::string_view name,
                       uint32_t mode) override {
    return NewName(fs_.Mkdir(cred, parent, name, mode), parent, name);
  }
  FsResult<Attr> Mknod(const Credentials& cred, Ino parent, std::string_view name, uint32_t mode,
                       uint64_t rdev) override {
    return NewName(fs_.Mknod(cred, parent, name, mode, rdev), parent, name);
  }
  FsResult<Attr> Symlink(const Credentials& cred, Ino parent, std::string_view name,
                         std::string_view target) override {
    return NewName(fs_.Symlink(cred, parent, name, target), parent, name);
  }
  FsResult<std::string> Readlink(const Credentials& cred, Ino ino) override {
    return fs_.Readlink(cred, ino);
  }
  FsResult<Attr> Link(const Credentials& cred, Ino ino, Ino new_parent,
                      std::string_view new_name) override {
    FsResult<Attr> r = fs_.Link(cred, ino, new_parent, new_name);
    if (r.ok()) {
      Report([&] {
        listener_.EntryChanged(new_parent, new_name);
        listener_.InodeChanged(ino, false);  // nlink, ctime
      });
    }
    return r;
  }
  FsStatus Unlink(const Credentials& cred, Ino parent, std::string_view name) override {
    std::optional<Ino> child = Named(parent, name);
    FsStatus s = fs_.Unlink(cred, parent, name);
    if (s.ok()) Report([&] { Removed(parent, name, child); });
    return s;
  }
  FsStatus Rmdir(const Credentials& cred, Ino parent, std::string_view name) override {
    std::optional<Ino> child = Named(parent, name);
    FsStatus s = fs_.Rmdir(cred, parent, name);
    if (s.ok()) Report([&] { Removed(parent, name, child); });
    return s;
  }
  FsStatus Rename(const Credentials& cred, Ino parent, std::string_view name, Ino new_parent,
                  std::string_view new_name, RenameFlags flags) override {
    std::optional<Ino> moved = Named(parent, name);
    std::optional<Ino> replaced = Named(new_parent, new_name);
    FsStatus s = fs_.Rename(cred, parent, name, new_parent, new_name, flags);
    if (s.ok()) {
      Report([&] {
        Removed(parent, name, moved);
        Removed(new_parent, new_name, replaced);
      });
    }
    return s;
  }

  FsResult<uint64_t> Open(const Credentials& cred, Ino ino, int flags) override {
    FsResult<uint64_t> r = fs_.Open(cred, ino, flags);
    if (r.ok() && (flags & O_TRUNC) != 0) Report([&] { listener_.InodeChanged(ino, true); });
    return r;
  }
  FsStatus Release(uint64_t handle) override { return fs_.Release(handle); }
  FsResult<ReadResult> Read(const Credentials& cred, Ino ino, uint64_t offset, uint32_t length,
                            uint64_t handle) override {
    // A read may move atime (relatime); that alone is not reported, and is
    // seen through FUSE once the attribute timeout passes.
    return fs_.Read(cred, ino, offset, length, handle);
  }
  FsResult<WriteResult> Write(const Credentials& cred, Ino ino, uint64_t offset,
                              std::string_view data, uint64_t handle) override {
    FsResult<WriteResult> r = fs_.Write(cred, ino, offset, data, handle);
    if (r.ok()) Report([&] { listener_.InodeChanged(ino, true); });
    return r;
  }
  FsResult<ReadResult> TryRead(const Credentials& cred, Ino ino, uint64_t offset,
                               uint32_t length, uint64_t handle) override {
    return fs_.TryRead(cred, ino, offset, length, handle);
  }
  FsResult<WriteResult> TryWrite(const Credentials& cred, Ino ino, uint64_t offset,
                                 std::string_view data, uint64_t handle) override {
    FsResult<WriteResult> r = fs_.TryWrite(cred, ino, offset, data, handle);
    if (r.ok()) Report([&] { listener_.InodeChanged(ino, true); });
    return r;
  }
  FsResult<Attr> PunchHole(const Credentials& cred, Ino ino, uint64_t offset,
                           uint64_t length) override {
    FsResult<Attr> r = fs_.PunchHole(cred, ino, offset, length);
    if (r.ok()) Report([&] { listener_.InodeChanged(ino, true); });
    return r;
  }
  FsResult<std::vector<Extent>> MapExtents(const Credentials& cred, Ino ino, uint64_t offset,
                                           uint64_t length, size_t max_extents) override {
    return fs_.MapExtents(cred, ino, offset, length, max_extents);
  }
  FsResult<Attr> Fallocate(const Credentials& cred, Ino ino, int mode, uint64_t offset,
                           uint64_t length, uint64_t handle) override {
    FsResult<Attr> r = fs_.Fallocate(cred, ino, mode, offset, length, handle);
    if (r.ok()) Report([&] { listener_.InodeChanged(ino, true); });
    return r;
  }
  FsResult<uint64_t> Seek(const Credentials& cred, Ino ino, uint64_t offset, SeekFor what,
                          uint64_t handle) override {
    return fs_.Seek(cred, ino, offset, what, handle);
  }
  FsResult<uint64_t> CopyFileRange(const Credentials& cred, const CopyRangeRequest& req) override {
    FsResult<uint64_t> r = fs_.CopyFileRange(cred, req);
    if (r.ok()) Report([&] { listener_.InodeChanged(req.out, true); });
    return r;
  }
  FsStatus Fsync(const Credentials& cred, Ino ino) override { return fs_.Fsync(cred, ino); }

  FsResult<ReadDirResult> ReadDir(const Credentials& cred, Ino dir, uint64_t cookie,
                                  const ReadDirLimit& limit, bool with_attrs) override {
    return fs_.ReadDir(cred, dir, cookie, limit, with_attrs);
  }
  FsResult<StatFsResult> StatFs(const Credentials& cred, Ino ino) override {
    return fs_.StatFs(cred, ino);
  }

  FsResult<std::string> GetXattr(const Credentials& cred, Ino ino, std::string_view name) override {
    return fs_.GetXattr(cred, ino, name);
  }
  FsStatus SetXattr(const Credentials& cred, Ino ino, std::string_view name,
                    std::string_view value, int flags) override {
    FsStatus s = fs_.SetXattr(cred, ino, name, value, flags);
    if (s.ok()) Report([&] { listener_.InodeChanged(ino, false); });  // ctime
    return s;
  }
  FsResult<std::vector<std::string>> ListXattr(const Credentials& cred, Ino ino) override {
    return fs_.ListXattr(cred, ino);
  }
  FsStatus RemoveXattr(const Credentials& cred, Ino ino, std::string_view name) override {
    FsStatus s = fs_.RemoveXattr(cred, ino, name);
    if (s.ok()) Report([&] { listener_.InodeChanged(ino, false); });
    return s;
  }

  FsCounters counters() const override { return fs_.counters(); }

 private:
  // Makes the reports, then waits until they were delivered.
  template <class F>
  void Report(F&& reports) {
    reports();
    listener_.Flush();
  }

  FsResult<Attr> NewName(FsResult<Attr> r, Ino parent, std::string_view name) {
    if (r.ok()) Report([&] { listener_.EntryChanged(parent, name); });
    return r;
  }

  // What `name` in `parent` names now, looked up before a change that may
  // remove it (its nlink and ctime change too); nullopt when unknown. A
  // change racing in between only makes the report name another inode as
  // well, which is harmless.
  std::optional<Ino> Named(Ino parent, std::string_view name) {
    FsResult<Attr> a = fs_.Lookup(Credentials::Root(), parent, name);
    if (!a.ok()) return std::nullopt;
    return a->ino;
  }

  void Removed(Ino parent, std::string_view name, std::optional<Ino> child) {
    listener_.EntryChanged(parent, name);
    if (child) listener_.InodeChanged(*child, false);
  }

  FileSystem& fs_;
  ChangeListener& listener_;
};

}  // namespace

std::unique_ptr<FileSystem> NewChangeNotifier(FileSystem& inner, ChangeListener& listener) {
  return std::make_unique<ChangeNotifier>(inner, listener);
}

}  // namespace pail::fs
