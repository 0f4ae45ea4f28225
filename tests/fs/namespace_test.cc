// Lookup, create, mkdir, mknod, symlink, readlink, link, unlink, rmdir.
#include <sys/sysmacros.h>

#include <algorithm>
#include <map>
#include <set>

#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

using NamespaceTest = FsTest;

TEST_F(NamespaceTest, RootExistsWithDefaults) {
  Attr root = Stat(kRootIno);
  EXPECT_EQ(root.mode, S_IFDIR | 0755u);
  EXPECT_EQ(root.nlink, 2u);
  EXPECT_EQ(root.uid, 0u);
  EXPECT_EQ(root.gid, 0u);
  EXPECT_NE(root.generation, kNoGeneration);
  auto dotdot = fs_->Lookup(Root(), kRootIno, "..");
  ASSERT_FS_OK(dotdot);
  EXPECT_EQ(dotdot->ino, kRootIno);
  auto dot = fs_->Lookup(Root(), kRootIno, ".");
  ASSERT_FS_OK(dot);
  EXPECT_EQ(dot->ino, kRootIno);
}

TEST_F(NamespaceTest, GenerationsAreRandomStableAndCheckedByResolveHandle) {
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  Attr attr_a = Stat(a), attr_b = Stat(b);
  EXPECT_NE(attr_a.generation, kNoGeneration);
  EXPECT_NE(attr_a.generation, attr_b.generation);
  EXPECT_NE(attr_a.generation + 1, attr_b.generation);  // not a counter
  auto found = fs_->Lookup(Root(), kRootIno, "a");
  ASSERT_FS_OK(found);
  EXPECT_EQ(found->generation, attr_a.generation);
  ASSERT_FS_OK(fs_->ResolveHandle(a, attr_a.generation));
  EXPECT_ERRNO(fs_->ResolveHandle(a, attr_b.generation), ESTALE);
  EXPECT_ERRNO(fs_->ResolveHandle(a, 1), ESTALE);
  Remount();
  EXPECT_EQ(Stat(a).generation, attr_a.generation);  // stored, not made up at open
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "a"));
  EXPECT_ERRNO(fs_->ResolveHandle(a, attr_a.generation), ESTALE);
}

TEST_F(NamespaceTest, BucketOfFormatOneIsRefusedClearly) {
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  std::string old_version;
  PutBigEndian64(&old_version, 1);
  rocksdb::WriteBatch batch;
  batch.Put(engine_->column_family(kMetaColumnFamily), SystemKey(kSystemFormat), old_version);
  ASSERT_TRUE(engine_->Write(&batch).ok());
  auto reopened = FileSystem::Open(*engine_, Options());
  ASSERT_FALSE(reopened.ok());
  EXPECT_NE(reopened.status().ToString().find("format 1"), std::string::npos)
      << reopened.status().ToString();
  EXPECT_NE(reopened.status().ToString().find("generations"), std::string::npos);
  // Format 2 kept file data in RocksDB blob files.
  PutBigEndian64(&old_version, 2);
  old_version = old_version.substr(8);
  rocksdb::WriteBatch batch2;
  batch2.Put(engine_->column_family(kMetaColumnFamily), SystemKey(kSystemFormat), old_version);
  ASSERT_TRUE(engine_->Write(&batch2).ok());
  reopened = FileSystem::Open(*engine_, Options());
  ASSERT_FALSE(reopened.ok());
  EXPECT_NE(reopened.status().ToString().find("format 2"), std::string::npos)
      << reopened.status().ToString();
}

TEST_F(NamespaceTest, CreateThenLookupAndTimestamps) {
  Attr before = Stat(kRootIno);
  auto created = fs_->Create(User(1000, 100), kRootIno, "f", 0640, {});
  EXPECT_ERRNO(created, EACCES);  // root dir is 0755 root:root
  Chmod(kRootIno, 0777);
  before = Stat(kRootIno);
  created = fs_->Create(User(1000, 100), kRootIno, "f", 0640, {});
  ASSERT_FS_OK(created);
  EXPECT_TRUE(created->created);
  EXPECT_EQ(created->attr.mode, S_IFREG | 0640u);
  EXPECT_EQ(created->attr.uid, 1000u);
  EXPECT_EQ(created->attr.gid, 100u);
  EXPECT_EQ(created->attr.nlink, 1u);
  EXPECT_EQ(created->attr.size, 0u);
  auto found = fs_->Lookup(User(1000, 100), kRootIno, "f");
  ASSERT_FS_OK(found);
  EXPECT_EQ(found->ino, created->attr.ino);
  Attr after = Stat(kRootIno);
  EXPECT_TRUE(before.mtime < after.mtime);
  EXPECT_TRUE(after.mtime == after.ctime);
  EXPECT_TRUE(created->attr.mtime == created->attr.ctime);
  EXPECT_TRUE(created->attr.atime == created->attr.mtime);
}

TEST_F(NamespaceTest, CreateExclusiveAndNonExclusive) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, "hello");
  EXPECT_ERRNO(fs_->Create(Root(), kRootIno, "f", 0644, CreateOptions{true, false, {}}), EEXIST);
  auto again = fs_->Create(Root(), kRootIno, "f", 0600, CreateOptions{false, false, {}});
  ASSERT_FS_OK(again);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->attr.ino, f);
  EXPECT_EQ(again->attr.size, 5u);
  EXPECT_EQ(again->attr.mode, S_IFREG | 0644u);  // existing mode kept
  auto truncating = fs_->Create(Root(), kRootIno, "f", 0644, CreateOptions{false, true, O_RDWR});
  ASSERT_FS_OK(truncating);
  EXPECT_EQ(truncating->attr.size, 0u);
  EXPECT_NE(truncating->handle, 0u);
  ASSERT_FS_OK(fs_->Release(truncating->handle));
  Ino d = MakeDir(kRootIno, "d");
  EXPECT_ERRNO(fs_->Create(Root(), kRootIno, "d", 0644, {}), EISDIR);
  EXPECT_ERRNO(fs_->Create(Root(), f, "x", 0644, {}), ENOTDIR);
  EXPECT_ERRNO(fs_->Create(Root(), 999999, "x", 0644, {}), ESTALE);
  EXPECT_NE(d, 0u);
}

TEST_F(NamespaceTest, CreateOpensNewReadOnlyFileForWriting) {
  Chmod(kRootIno, 0777);
  auto c = fs_->Create(User(1000, 100), kRootIno, "ro", 0444, CreateOptions{true, false, O_WRONLY});
  ASSERT_FS_OK(c);
  ASSERT_FS_OK(fs_->Write(User(1000, 100), c->attr.ino, 0, "data", c->handle));
  ASSERT_FS_OK(fs_->Release(c->handle));
  EXPECT_ERRNO(fs_->Open(User(1000, 100), c->attr.ino, O_WRONLY), EACCES);
}

TEST_F(NamespaceTest, NamesOfAnyBytesUpTo255) {
  std::string longest(255, 'a');
  longest[0] = '\xff';
  longest[1] = '\n';
  longest[2] = '\x01';
  Ino f = MakeFile(kRootIno, longest);
  auto found = fs_->Lookup(Root(), kRootIno, longest);
  ASSERT_FS_OK(found);
  EXPECT_EQ(found->ino, f);
  std::string too_long(256, 'b');
  EXPECT_ERRNO(fs_->Create(Root(), kRootIno, too_long, 0644, {}), ENAMETOOLONG);
  EXPECT_ERRNO(fs_->Mkdir(Root(), kRootIno, too_long, 0755), ENAMETOOLONG);
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, too_long), ENAMETOOLONG);
  EXPECT_ERRNO(fs_->Unlink(Root(), kRootIno, too_long), ENAMETOOLONG);
  EXPECT_ERRNO(fs_->Symlink(Root(), kRootIno, too_long, "t"), ENAMETOOLONG);
  EXPECT_ERRNO(fs_->Link(Root(), f, kRootIno, too_long), ENAMETOOLONG);
  EXPECT_ERRNO(fs_->Rename(Root(), kRootIno, longest, kRootIno, too_long), ENAMETOOLONG);
  EXPECT_ERRNO(fs_->Create(Root(), kRootIno, "a/b", 0644, {}), EINVAL);
  EXPECT_ERRNO(fs_->Create(Root(), kRootIno, std::string("a\0b", 3), 0644, {}), EINVAL);
  EXPECT_ERRNO(fs_->Create(Root(), kRootIno, "", 0644, {}), EINVAL);
  EXPECT_ERRNO(fs_->Mkdir(Root(), kRootIno, ".", 0755), EEXIST);
  EXPECT_ERRNO(fs_->Mkdir(Root(), kRootIno, "..", 0755), EEXIST);
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, "missing"), ENOENT);
}

TEST_F(NamespaceTest, MkdirCountsLinksAndParents) {
  Ino a = MakeDir(kRootIno, "a", 0750);
  EXPECT_EQ(Stat(kRootIno).nlink, 3u);
  Attr attr = Stat(a);
  EXPECT_EQ(attr.mode, S_IFDIR | 0750u);
  EXPECT_EQ(attr.nlink, 2u);
  EXPECT_EQ(attr.size, kBlockSize);
  Ino b = MakeDir(a, "b");
  EXPECT_EQ(Stat(a).nlink, 3u);
  MakeFile(a, "file");
  EXPECT_EQ(Stat(a).nlink, 3u);  // files do not count
  auto up = fs_->Lookup(Root(), b, "..");
  ASSERT_FS_OK(up);
  EXPECT_EQ(up->ino, a);
  EXPECT_ERRNO(fs_->Mkdir(Root(), kRootIno, "a", 0755), EEXIST);
  EXPECT_ERRNO(fs_->Mkdir(Root(), 424242, "x", 0755), ESTALE);
}

TEST_F(NamespaceTest, MknodMakesSpecialFiles) {
  auto fifo = fs_->Mknod(Root(), kRootIno, "fifo", S_IFIFO | 0600, 0);
  ASSERT_FS_OK(fifo);
  EXPECT_EQ(fifo->mode, S_IFIFO | 0600u);
  auto sock = fs_->Mknod(Root(), kRootIno, "sock", S_IFSOCK | 0644, 0);
  ASSERT_FS_OK(sock);
  EXPECT_EQ(sock->type(), static_cast<uint32_t>(S_IFSOCK));
  auto chr = fs_->Mknod(Root(), kRootIno, "null", S_IFCHR | 0666, makedev(1, 3));
  ASSERT_FS_OK(chr);
  EXPECT_EQ(chr->rdev, makedev(1, 3));
  auto blk = fs_->Mknod(Root(), kRootIno, "sda", S_IFBLK | 0660, makedev(8, 0));
  ASSERT_FS_OK(blk);
  EXPECT_EQ(Stat(blk->ino).rdev, makedev(8, 0));
  auto reg = fs_->Mknod(Root(), kRootIno, "reg", S_IFREG | 0644, 0);
  ASSERT_FS_OK(reg);
  EXPECT_TRUE(reg->is_reg());
  Chmod(kRootIno, 0777);
  EXPECT_ERRNO(fs_->Mknod(User(1000, 100), kRootIno, "c", S_IFCHR | 0666, makedev(1, 3)), EPERM);
  EXPECT_ERRNO(fs_->Mknod(User(1000, 100), kRootIno, "b", S_IFBLK | 0666, makedev(1, 3)), EPERM);
  ASSERT_FS_OK(fs_->Mknod(User(1000, 100), kRootIno, "userfifo", S_IFIFO | 0644, 0));
  EXPECT_ERRNO(fs_->Mknod(Root(), kRootIno, "dir", S_IFDIR | 0755, 0), EINVAL);
  EXPECT_ERRNO(fs_->Mknod(Root(), kRootIno, "fifo", S_IFIFO | 0600, 0), EEXIST);
  EXPECT_ERRNO(fs_->Read(Root(), fifo->ino, 0, 10), EINVAL);
}

TEST_F(NamespaceTest, SymlinkAndReadlink) {
  std::string target = "../some/where\xff";
  auto s = fs_->Symlink(Root(), kRootIno, "link", target);
  ASSERT_FS_OK(s);
  EXPECT_EQ(s->mode, S_IFLNK | 0777u);
  EXPECT_EQ(s->size, target.size());
  auto read = fs_->Readlink(Root(), s->ino);
  ASSERT_FS_OK(read);
  EXPECT_EQ(*read, target);
  Ino f = MakeFile(kRootIno, "f");
  EXPECT_ERRNO(fs_->Readlink(Root(), f), EINVAL);
  EXPECT_ERRNO(fs_->Symlink(Root(), kRootIno, "empty", ""), ENOENT);
  EXPECT_ERRNO(fs_->Symlink(Root(), kRootIno, "long", std::string(kSymlinkMax + 1, 'x')),
               ENAMETOOLONG);
  ASSERT_FS_OK(fs_->Symlink(Root(), kRootIno, "max", std::string(kSymlinkMax, 'x')));
  EXPECT_ERRNO(fs_->Symlink(Root(), kRootIno, "link", "x"), EEXIST);
  EXPECT_ERRNO(fs_->Open(Root(), s->ino, O_RDONLY), ELOOP);
}

TEST_F(NamespaceTest, HardLinks) {
  Ino d = MakeDir(kRootIno, "d");
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, "shared data");
  Attr before = Stat(f);
  auto l = fs_->Link(Root(), f, d, "g");
  ASSERT_FS_OK(l);
  EXPECT_EQ(l->ino, f);
  EXPECT_EQ(l->nlink, 2u);
  EXPECT_TRUE(before.ctime < l->ctime);
  auto g = fs_->Lookup(Root(), d, "g");
  ASSERT_FS_OK(g);
  EXPECT_EQ(g->ino, f);
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
  EXPECT_EQ(Stat(f).nlink, 1u);
  EXPECT_EQ(ReadAt(f, 0, 100), "shared data");
  EXPECT_ERRNO(fs_->Link(Root(), d, kRootIno, "dirlink"), EPERM);
  EXPECT_ERRNO(fs_->Link(Root(), f, d, "g"), EEXIST);
  EXPECT_ERRNO(fs_->Link(Root(), f, f, "x"), ENOTDIR);
  EXPECT_ERRNO(fs_->Link(Root(), 777777, d, "x"), ESTALE);
  Chmod(d, 0777);
  EXPECT_ERRNO(fs_->Link(User(1000, 100), f, kRootIno, "nope"), EACCES);
  ExpectFsckClean();
}

TEST_F(NamespaceTest, LinkCountLimit) {
  Ino d = MakeDir(kRootIno, "d");
  Ino f = MakeFile(d, "f0");
  for (uint32_t i = 1; i < kMaxLinks; ++i) {
    auto r = fs_->Link(Root(), f, d, "f" + std::to_string(i));
    ASSERT_TRUE(r.ok()) << i;
  }
  EXPECT_EQ(Stat(f).nlink, kMaxLinks);
  EXPECT_ERRNO(fs_->Link(Root(), f, d, "one-too-many"), EMLINK);
}

TEST_F(NamespaceTest, UnlinkErrors) {
  Ino d = MakeDir(kRootIno, "d");
  Ino f = MakeFile(kRootIno, "f");
  EXPECT_ERRNO(fs_->Unlink(Root(), kRootIno, "missing"), ENOENT);
  EXPECT_ERRNO(fs_->Unlink(Root(), kRootIno, "d"), EISDIR);
  EXPECT_ERRNO(fs_->Unlink(Root(), f, "x"), ENOTDIR);
  EXPECT_ERRNO(fs_->Unlink(Root(), 31337, "x"), ESTALE);
  Chmod(d, 0755);
  MakeFile(d, "g");
  EXPECT_ERRNO(fs_->Unlink(User(1000, 100), d, "g"), EACCES);
  Attr before = Stat(kRootIno);
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
  EXPECT_TRUE(before.mtime < Stat(kRootIno).mtime);
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, "f"), ENOENT);
  EXPECT_ERRNO(fs_->GetAttr(Root(), f), ESTALE);
}

TEST_F(NamespaceTest, RmdirRules) {
  Ino a = MakeDir(kRootIno, "a");
  MakeDir(a, "b");
  MakeFile(kRootIno, "f");
  EXPECT_ERRNO(fs_->Rmdir(Root(), kRootIno, "a"), ENOTEMPTY);
  EXPECT_ERRNO(fs_->Rmdir(Root(), kRootIno, "f"), ENOTDIR);
  EXPECT_ERRNO(fs_->Rmdir(Root(), kRootIno, "missing"), ENOENT);
  EXPECT_ERRNO(fs_->Rmdir(Root(), a, "."), EINVAL);
  EXPECT_ERRNO(fs_->Rmdir(Root(), a, ".."), ENOTEMPTY);
  EXPECT_EQ(Stat(kRootIno).nlink, 3u);
  ASSERT_FS_OK(fs_->Rmdir(Root(), a, "b"));
  EXPECT_EQ(Stat(a).nlink, 2u);
  ASSERT_FS_OK(fs_->Rmdir(Root(), kRootIno, "a"));
  EXPECT_EQ(Stat(kRootIno).nlink, 2u);
  EXPECT_ERRNO(fs_->GetAttr(Root(), a), ESTALE);
  EXPECT_ERRNO(fs_->Mkdir(Root(), a, "x", 0755), ESTALE);
  ExpectFsckClean();
}

TEST_F(NamespaceTest, RemovedButOpenDirectoryRefusesNewEntries) {
  Ino a = MakeDir(kRootIno, "a");
  auto h = fs_->Open(Root(), a, O_RDONLY | O_DIRECTORY);
  ASSERT_FS_OK(h);
  ASSERT_FS_OK(fs_->Rmdir(Root(), kRootIno, "a"));
  EXPECT_EQ(Stat(a).nlink, 0u);
  EXPECT_ERRNO(fs_->Create(Root(), a, "x", 0644, {}), ENOENT);
  EXPECT_ERRNO(fs_->Mkdir(Root(), a, "x", 0755), ENOENT);
  ASSERT_FS_OK(fs_->Release(*h));
  EXPECT_ERRNO(fs_->GetAttr(Root(), a), ESTALE);
  ExpectFsckClean();
}

// Every inode's attributes as GetAttr and READDIRPLUS show them, keyed by
// path, from the root down.
std::map<std::string, std::string> AttrsByPath(FileSystem& fs) {
  std::map<std::string, std::string> out;
  auto describe = [](const Attr& a) {
    return std::to_string(a.ino) + " mode " + std::to_string(a.mode) + " nlink " +
           std::to_string(a.nlink) + " uid " + std::to_string(a.uid) + " size " +
           std::to_string(a.size) + " mtime " + std::to_string(a.mtime.tv_sec) + "." +
           std::to_string(a.mtime.tv_nsec) + " ctime " + std::to_string(a.ctime.tv_sec) + "." +
           std::to_string(a.ctime.tv_nsec);
  };
  std::vector<std::pair<std::string, Ino>> dirs{{"", kRootIno}};
  while (!dirs.empty()) {
    auto [path, dir] = dirs.back();
    dirs.pop_back();
    auto listing = fs.ReadDir(Root(), dir, 0, 0, /*with_attrs=*/true);
    EXPECT_TRUE(listing.ok());
    if (!listing.ok()) break;
    for (const DirEntry& e : listing->entries) {
      if (e.name == "." || e.name == "..") continue;
      const std::string child = path + "/" + e.name;
      auto attr = fs.GetAttr(Root(), e.ino);
      EXPECT_TRUE(attr.ok()) << child;
      if (!attr.ok() || !e.attr.has_value()) continue;
      out[child] = describe(*attr);
      out[child + " (listed)"] = describe(*e.attr);
      if (attr->is_dir()) dirs.emplace_back(child, e.ino);
    }
  }
  return out;
}

// What looking up each (directory, name) finds: "absent" or the inode.
std::map<std::string, std::string> LookupsOf(FileSystem& fs,
                                             const std::set<std::pair<Ino, std::string>>& names) {
  std::map<std::string, std::string> out;
  for (const auto& [dir, name] : names) {
    auto attr = fs.Lookup(Root(), dir, name);
    const std::string where = std::to_string(dir) + "/" + name;
    if (!attr.ok()) {
      out[where] = attr.error() == ENOENT ? "absent" : "error " + std::to_string(attr.error());
    } else {
      out[where] = std::to_string(attr->ino);
    }
  }
  return out;
}

// The inode and dentry caches serve what the engine holds: after random
// changes, every inode reads the same from the cache as from the bucket
// after a restart, and every name ever used (removed ones too) looks up the
// same.
TEST_F(NamespaceTest, CachedInodesMatchTheBucketAfterRandomChanges) {
  std::mt19937 rng(20261203);
  std::vector<Ino> dirs{kRootIno};
  std::vector<std::pair<Ino, std::string>> names;  // (parent, name) of non-directories
  std::set<std::pair<Ino, std::string>> used;      // every (parent, name) ever made
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  for (int step = 0; step < 600; ++step) {
    const Ino dir = dirs[pick(dirs.size())];
    const std::string name = "n" + std::to_string(step);
    used.emplace(dir, name);
    // Looked up first, as the kernel does before it creates: the absence
    // is cached, and the create must replace it.
    ASSERT_EQ(fs_->Lookup(Root(), dir, name).error(), ENOENT);
    switch (pick(8)) {
      case 0: {
        auto d = fs_->Mkdir(Root(), dir, name, 0755);
        ASSERT_FS_OK(d);
        dirs.push_back(d->ino);
        break;
      }
      case 1:
        MakeFile(dir, name);
        names.emplace_back(dir, name);
        break;
      case 2:
        ASSERT_FS_OK(fs_->Symlink(Root(), dir, name, "target-" + name));
        names.emplace_back(dir, name);
        break;
      default: {
        if (names.empty()) break;
        const size_t i = pick(names.size());
        auto [parent, old_name] = names[i];
        auto attr = fs_->Lookup(Root(), parent, old_name);
        ASSERT_FS_OK(attr);
        switch (pick(6)) {
          case 0: {
            SetAttrRequest req;
            req.mode = static_cast<uint32_t>(0400 + pick(0377));
            if (!attr->is_reg()) req.mode.reset();
            req.mtime = TimeChange::At({static_cast<time_t>(1000 + step), 7});
            ASSERT_FS_OK(fs_->SetAttr(Root(), attr->ino, req));
            break;
          }
          case 1:
            if (attr->is_reg()) {
              SetAttrRequest req;
              req.size = pick(100000);
              ASSERT_FS_OK(fs_->SetAttr(Root(), attr->ino, req));
            }
            break;
          case 2:
            ASSERT_FS_OK(fs_->Link(Root(), attr->ino, dir, name));
            names.emplace_back(dir, name);
            break;
          case 3:
            ASSERT_FS_OK(fs_->Rename(Root(), parent, old_name, dir, name));
            names[i] = {dir, name};
            break;
          case 4:
            ASSERT_FS_OK(fs_->Unlink(Root(), parent, old_name));
            names.erase(names.begin() + static_cast<std::ptrdiff_t>(i));
            break;
          case 5: {
            const size_t j = pick(names.size());
            if (j == i) break;
            auto [other_parent, other_name] = names[j];
            ASSERT_FS_OK(fs_->Rename(Root(), parent, old_name, other_parent, other_name,
                                     RenameFlags::kExchange));
            break;
          }
        }
      }
    }
  }
  const std::map<std::string, std::string> cached = AttrsByPath(*fs_);
  EXPECT_GT(cached.size(), 200u);
  const std::map<std::string, std::string> looked_up = LookupsOf(*fs_, used);
  EXPECT_GT(std::count_if(looked_up.begin(), looked_up.end(),
                          [](const auto& kv) { return kv.second == "absent"; }),
            50);
  Remount();
  EXPECT_EQ(cached, AttrsByPath(*fs_));
  EXPECT_EQ(looked_up, LookupsOf(*fs_, used));
  ExpectFsckClean();
}

}  // namespace
}  // namespace pail::fs::testing
