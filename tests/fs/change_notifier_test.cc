// fs::ChangeNotifier reports what each successful change made stale, and
// nothing for reads or failed calls.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "fs/change_notifier.h"
#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

class RecordingListener : public ChangeListener {
 public:
  void InodeChanged(Ino ino, bool data) override { inodes.insert({ino, data}); }
  void EntryChanged(Ino dir, std::string_view name) override {
    entries.insert({dir, std::string(name)});
  }
  void Flush() override { ++flushes; }
  void Clear() {
    inodes.clear();
    entries.clear();
    flushes = 0;
  }

  std::set<std::pair<Ino, bool>> inodes;
  std::set<std::pair<Ino, std::string>> entries;
  int flushes = 0;
};

class ChangeNotifierTest : public FsTest {};

TEST_F(ChangeNotifierTest, ReportsEachChangeAndFlushes) {
  RecordingListener l;
  std::unique_ptr<FileSystem> n = NewChangeNotifier(*fs_, l);
  using Entry = std::pair<Ino, std::string>;
  using Inode = std::pair<Ino, bool>;

  FsResult<Attr> d = n->Mkdir(Root(), kRootIno, "d", 0755);
  ASSERT_FS_OK(d);
  EXPECT_EQ(l.entries, (std::set<Entry>{{kRootIno, "d"}}));
  EXPECT_TRUE(l.inodes.empty());
  EXPECT_EQ(l.flushes, 1);

  l.Clear();
  CreateOptions co;
  co.open_flags = O_RDWR;
  FsResult<CreateResult> f = n->Create(Root(), d->ino, "f", 0644, co);
  ASSERT_FS_OK(f);
  EXPECT_EQ(l.entries, (std::set<Entry>{{d->ino, "f"}}));
  const Ino fino = f->attr.ino;

  l.Clear();
  ASSERT_FS_OK(n->Write(Root(), fino, 0, "bytes", f->handle));
  EXPECT_EQ(l.inodes, (std::set<Inode>{{fino, true}}));
  SetAttrRequest chmod;
  chmod.mode = 0600;
  l.Clear();
  ASSERT_FS_OK(n->SetAttr(Root(), fino, chmod));
  EXPECT_EQ(l.inodes, (std::set<Inode>{{fino, false}}));
  SetAttrRequest truncate;
  truncate.size = 1;
  l.Clear();
  ASSERT_FS_OK(n->SetAttr(Root(), fino, truncate));
  EXPECT_EQ(l.inodes, (std::set<Inode>{{fino, true}}));

  // Reads and lookups report nothing; neither does a failed change.
  l.Clear();
  ASSERT_FS_OK(n->Read(Root(), fino, 0, 10, f->handle));
  ASSERT_FS_OK(n->Lookup(Root(), d->ino, "f"));
  EXPECT_ERRNO(n->Mkdir(Root(), d->ino, "f", 0755), EEXIST);
  EXPECT_ERRNO(n->Mkdir(User(1000, 1000), kRootIno, "x", 0755), EACCES);
  EXPECT_TRUE(l.entries.empty());
  EXPECT_TRUE(l.inodes.empty());
  EXPECT_EQ(l.flushes, 0);

  // A link reports the new name and the inode (nlink); a rename both names
  // and the inodes named before, the replaced one included.
  l.Clear();
  ASSERT_FS_OK(n->Link(Root(), fino, kRootIno, "hard"));
  EXPECT_EQ(l.entries, (std::set<Entry>{{kRootIno, "hard"}}));
  EXPECT_EQ(l.inodes, (std::set<Inode>{{fino, false}}));
  FsResult<CreateResult> g = n->Create(Root(), kRootIno, "g", 0644, CreateOptions{});
  ASSERT_FS_OK(g);
  l.Clear();
  ASSERT_FS_OK(n->Rename(Root(), d->ino, "f", kRootIno, "g", RenameFlags::kNone));
  EXPECT_EQ(l.entries, (std::set<Entry>{{d->ino, "f"}, {kRootIno, "g"}}));
  EXPECT_EQ(l.inodes, (std::set<Inode>{{fino, false}, {g->attr.ino, false}}));

  l.Clear();
  ASSERT_FS_OK(n->Unlink(Root(), kRootIno, "hard"));
  EXPECT_EQ(l.entries, (std::set<Entry>{{kRootIno, "hard"}}));
  EXPECT_EQ(l.inodes, (std::set<Inode>{{fino, false}}));
  l.Clear();
  ASSERT_FS_OK(n->Rmdir(Root(), kRootIno, "d"));
  EXPECT_EQ(l.entries, (std::set<Entry>{{kRootIno, "d"}}));
  EXPECT_EQ(l.inodes, (std::set<Inode>{{d->ino, false}}));
  EXPECT_EQ(l.flushes, 1);
  ASSERT_FS_OK(n->Release(f->handle));
}

}  // namespace
}  // namespace pail::fs::testing
