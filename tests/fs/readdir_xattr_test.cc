// Directory listing with stable cookies, statfs, and extended attributes.
#include <map>
#include <set>

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include "fs/reply_listing.h"
#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

using ReadDirTest = FsTest;
using XattrTest = FsTest;

std::vector<DirEntry> ListAll(FileSystem& fs, Ino dir, size_t page, bool attrs = false) {
  std::vector<DirEntry> all;
  uint64_t cookie = 0;
  for (int guard = 0; guard < 100000; ++guard) {
    auto r = fs.ReadDir(Root(), dir, cookie, page, attrs);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) break;
    for (auto& e : r->entries) {
      cookie = e.next_cookie;
      all.push_back(e);
    }
    if (r->eof) break;
  }
  return all;
}

TEST_F(ReadDirTest, ListsDotsAndEntriesWithTypesAndAttrs) {
  Ino d = MakeDir(kRootIno, "d");
  Ino f = MakeFile(d, "file");
  Ino sub = MakeDir(d, "sub");
  ASSERT_FS_OK(fs_->Symlink(Root(), d, "link", "file"));
  auto all = ListAll(*fs_, d, 0, true);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].name, ".");
  EXPECT_EQ(all[0].ino, d);
  EXPECT_EQ(all[1].name, "..");
  EXPECT_EQ(all[1].ino, kRootIno);
  EXPECT_EQ(all[2].name, "file");
  EXPECT_EQ(all[2].ino, f);
  EXPECT_EQ(all[2].type, static_cast<uint32_t>(S_IFREG));
  EXPECT_EQ(all[3].name, "sub");
  EXPECT_EQ(all[3].ino, sub);
  EXPECT_EQ(all[3].type, static_cast<uint32_t>(S_IFDIR));
  EXPECT_EQ(all[4].type, static_cast<uint32_t>(S_IFLNK));
  for (const auto& e : all) {
    ASSERT_TRUE(e.attr.has_value()) << e.name;
    EXPECT_EQ(e.attr->ino, e.ino);
  }
  EXPECT_EQ(all[4].attr->size, 4u);
  auto plain = fs_->ReadDir(Root(), d, 0, 0, false);
  ASSERT_FS_OK(plain);
  EXPECT_FALSE(plain->entries[2].attr.has_value());
  EXPECT_TRUE(plain->eof);
  EXPECT_ERRNO(fs_->ReadDir(Root(), f, 0, 0, false), ENOTDIR);
  EXPECT_ERRNO(fs_->ReadDir(Root(), 123456, 0, 0, false), ESTALE);
  // A cookie past anything the directory issued is refused, not "the end".
  EXPECT_ERRNO(fs_->ReadDir(Root(), d, 1u << 30, 10, false), kErrBadCookie);
}

TEST_F(ReadDirTest, PagesWithLimits) {
  Ino d = MakeDir(kRootIno, "d");
  for (int i = 0; i < 25; ++i) MakeFile(d, "f" + std::to_string(i));
  auto first = fs_->ReadDir(Root(), d, 0, 10, false);
  ASSERT_FS_OK(first);
  EXPECT_EQ(first->entries.size(), 10u);
  EXPECT_FALSE(first->eof);
  auto all = ListAll(*fs_, d, 7);
  EXPECT_EQ(all.size(), 27u);
  std::set<std::string> names;
  for (auto& e : all) names.insert(e.name);
  EXPECT_EQ(names.size(), 27u);
}

// A made-up reply format: 10 bytes of header per entry, then the name.
size_t TenPlusName(std::string_view name) { return 10 + name.size(); }

TEST_F(ReadDirTest, ByteLimitListsExactlyWhatFits) {
  Ino d = MakeDir(kRootIno, "d");
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) {
    names.push_back(std::string(1 + (i * 7) % 23, static_cast<char>('a' + i % 26)) +
                    std::to_string(i));
    MakeFile(d, names.back());
  }
  for (bool attrs : {false, true}) {
    SCOPED_TRACE(attrs ? "with attributes" : "names only");
    std::vector<std::string> listed;
    uint64_t cookie = 0;
    for (int guard = 0; guard < 100; ++guard) {
      const size_t budget = 64 + 13 * (guard % 4);
      auto r = fs_->ReadDir(Root(), d, cookie, ReadDirLimit(budget, TenPlusName), attrs);
      ASSERT_FS_OK(r);
      ASSERT_FALSE(r->entries.empty());
      size_t used = 0;
      for (const DirEntry& e : r->entries) {
        used += TenPlusName(e.name);
        EXPECT_EQ(e.attr.has_value(), attrs) << e.name;
        listed.push_back(e.name);
        cookie = e.next_cookie;
      }
      EXPECT_LE(used, budget);
      if (r->eof) break;
      // The entry that came next did not fit what was left.
      auto next = fs_->ReadDir(Root(), d, cookie, 1, false);
      ASSERT_FS_OK(next);
      ASSERT_EQ(next->entries.size(), 1u);
      EXPECT_GT(used + TenPlusName(next->entries[0].name), budget);
    }
    std::vector<std::string> expected = {".", ".."};
    expected.insert(expected.end(), names.begin(), names.end());
    EXPECT_EQ(listed, expected);
  }
  // Room for no entry at all: nothing, and not the end either.
  auto none = fs_->ReadDir(Root(), d, 0, ReadDirLimit(5, TenPlusName), true);
  ASSERT_FS_OK(none);
  EXPECT_TRUE(none->entries.empty());
  EXPECT_FALSE(none->eof);
  // ".." does not fit after ".": no longer name may take its place.
  auto dot = fs_->ReadDir(Root(), d, 0, ReadDirLimit(11, TenPlusName), true);
  ASSERT_FS_OK(dot);
  ASSERT_EQ(dot->entries.size(), 1u);
  EXPECT_EQ(dot->entries[0].name, ".");
  EXPECT_TRUE(dot->entries[0].attr.has_value());
  EXPECT_FALSE(dot->eof);
  // A byte limit needs its price.
  EXPECT_ERRNO(fs_->ReadDir(Root(), d, 0, ReadDirLimit(100, nullptr), false), EINVAL);
}

// A reply-sized listing fills its bytes from several core batches, in
// cookie order, stops exactly where the next entry would not fit, and says
// when the next entry alone is too big or the directory ended.
TEST_F(ReadDirTest, ListForReplyFillsAcrossCoreBatches) {
  Ino d = MakeDir(kRootIno, "d");
  const size_t files = 2 * kReadDirBatch + 500;
  for (size_t i = 0; i < files; ++i) MakeFile(d, "f" + std::to_string(100000 + i));
  auto ten_bytes = [](std::string_view) -> size_t { return 10; };
  std::vector<std::string> names;
  uint64_t last_cookie = 0;
  auto add = [&](const DirEntry& e) {
    names.push_back(e.name);
    last_cookie = e.next_cookie;
  };
  // Room for all but the last 100 entries ("." and ".." included).
  const size_t first_part = files + 2 - 100;
  auto first = ListForReply(*fs_, Root(), d, 0, 10 * first_part, ten_bytes, false, add);
  ASSERT_FS_OK(first);
  EXPECT_EQ(first->entries, first_part);
  EXPECT_FALSE(first->eof);
  ASSERT_EQ(names.size(), first_part);
  // Resumed after the last entry handed over, with room to spare.
  auto rest = ListForReply(*fs_, Root(), d, last_cookie, 1 << 20, ten_bytes, false, add);
  ASSERT_FS_OK(rest);
  EXPECT_EQ(rest->entries, 100u);
  EXPECT_TRUE(rest->eof);
  ASSERT_EQ(names.size(), files + 2);
  EXPECT_EQ(names[0], ".");
  EXPECT_EQ(names[1], "..");
  for (size_t i = 0; i < files; ++i) EXPECT_EQ(names[i + 2], "f" + std::to_string(100000 + i));
  // Past the last entry: nothing, and the end.
  names.clear();
  auto end = ListForReply(*fs_, Root(), d, last_cookie, 1 << 20, ten_bytes, false, add);
  ASSERT_FS_OK(end);
  EXPECT_EQ(end->entries, 0u);
  EXPECT_TRUE(end->eof);
  // Room for no entry: nothing, and not the end.
  auto none = ListForReply(*fs_, Root(), d, 0, 9, ten_bytes, false, add);
  ASSERT_FS_OK(none);
  EXPECT_EQ(none->entries, 0u);
  EXPECT_FALSE(none->eof);
  // A first batch's error is the answer.
  Ino plain = MakeFile(kRootIno, "plain");
  EXPECT_ERRNO(ListForReply(*fs_, Root(), plain, 0, 100, ten_bytes, false, add), ENOTDIR);
  EXPECT_TRUE(names.empty());
}

// Entries whose inode went away between the scan and the attributes are
// left out, and the room they took goes to the entries after them: a page
// comes back empty only at the end (an empty READDIRPLUS reply ends the
// listing for FUSE and NFS clients).
TEST_F(ReadDirTest, EntriesWhoseInodeWentAwayGiveTheirRoomBack) {
  Ino d = MakeDir(kRootIno, "d");
  std::vector<Ino> inos;
  for (int i = 0; i < 40; ++i) inos.push_back(MakeFile(d, "f" + std::to_string(i)));
  // The inodes of f0..f29 vanish behind the filesystem's back (what a
  // removal between the scan and the attribute lookup leaves).
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  auto* meta = engine_->column_family(kMetaColumnFamily);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(engine_->db()->Delete(rocksdb::WriteOptions(), meta, InodeKey(inos[i])).ok());
  }
  auto reopened = FileSystem::Open(*engine_, Options());
  ASSERT_TRUE(reopened.ok());
  fs_ = std::move(reopened).value();

  // By count: ten entries after the dots are f30..f39, and then the end.
  auto page = fs_->ReadDir(Root(), d, 2, 10, true);
  ASSERT_FS_OK(page);
  ASSERT_EQ(page->entries.size(), 10u);
  EXPECT_EQ(page->entries.front().name, "f30");
  EXPECT_EQ(page->entries.back().name, "f39");
  // By bytes: the same, in pages of three.
  std::vector<std::string> listed;
  uint64_t cookie = 2;
  for (int guard = 0; guard < 20; ++guard) {
    auto r = fs_->ReadDir(Root(), d, cookie, ReadDirLimit(3 * TenPlusName("f30"), TenPlusName), true);
    ASSERT_FS_OK(r);
    ASSERT_TRUE(!r->entries.empty() || r->eof);
    for (const DirEntry& e : r->entries) {
      listed.push_back(e.name);
      cookie = e.next_cookie;
    }
    if (r->eof) break;
  }
  std::vector<std::string> expected;
  for (int i = 30; i < 40; ++i) expected.push_back("f" + std::to_string(i));
  EXPECT_EQ(listed, expected);
  // Without attributes nothing is looked up, and all 40 are listed.
  EXPECT_EQ(ListAll(*fs_, d, 7).size(), 42u);
}

TEST_F(ReadDirTest, CookiesStayValidWhileDirectoryChanges) {
  Ino d = MakeDir(kRootIno, "d");
  for (int i = 0; i < 100; ++i) MakeFile(d, "f" + std::to_string(i));
  auto page = fs_->ReadDir(Root(), d, 0, 32, false);  // ., .., f0..f29
  ASSERT_FS_OK(page);
  ASSERT_EQ(page->entries.back().name, "f29");
  uint64_t cookie = page->entries.back().next_cookie;
  // Remove the last returned entry, some already returned and some not yet
  // returned, and add new ones.
  for (int i : {29, 3, 10, 30, 50, 99}) {
    ASSERT_FS_OK(fs_->Unlink(Root(), d, "f" + std::to_string(i)));
  }
  for (int i = 0; i < 5; ++i) MakeFile(d, "new" + std::to_string(i));
  std::vector<std::string> rest;
  for (int guard = 0; guard < 1000; ++guard) {
    auto r = fs_->ReadDir(Root(), d, cookie, 9, false);
    ASSERT_FS_OK(r);
    for (auto& e : r->entries) {
      rest.push_back(e.name);
      cookie = e.next_cookie;
    }
    if (r->eof) break;
  }
  std::vector<std::string> expected;
  for (int i = 31; i < 99; ++i) {
    if (i != 50) expected.push_back("f" + std::to_string(i));
  }
  for (int i = 0; i < 5; ++i) expected.push_back("new" + std::to_string(i));
  EXPECT_EQ(rest, expected);
}

// The engine keeps the rows of removed entries as deletion markers until a
// compaction drops them. A directory that empties starts its listings past
// them: a scratch directory emptied and refilled over and over had every
// listing step over all the rows it ever held. A cookie handed out before
// it emptied still resumes, at the new entries.
TEST_F(ReadDirTest, EmptiedDirectoryListsPastItsRemovedEntries) {
  Ino d = MakeDir(kRootIno, "d");
  for (int i = 0; i < 2000; ++i) MakeFile(d, "old" + std::to_string(i));
  auto first_page = fs_->ReadDir(Root(), d, 0, 10, false);
  ASSERT_FS_OK(first_page);
  const uint64_t old_cookie = first_page->entries.back().next_cookie;
  for (int i = 0; i < 2000; ++i) ASSERT_FS_OK(fs_->Unlink(Root(), d, "old" + std::to_string(i)));
  for (int i = 0; i < 5; ++i) MakeFile(d, "new" + std::to_string(i));
  const std::vector<std::string> expected = {".", "..", "new0", "new1", "new2", "new3", "new4"};
  auto names = [](const std::vector<DirEntry>& entries) {
    std::vector<std::string> out;
    for (const DirEntry& e : entries) out.push_back(e.name);
    return out;
  };
  for (int pass = 0; pass < 2; ++pass) {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
    EXPECT_EQ(names(ListAll(*fs_, d, 0, /*attrs=*/true)), expected) << "pass " << pass;
    const uint64_t skipped = rocksdb::get_perf_context()->internal_delete_skipped_count;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    EXPECT_LT(skipped, 10u) << "pass " << pass;
    auto resumed = fs_->ReadDir(Root(), d, old_cookie, 0, false);
    ASSERT_FS_OK(resumed);
    EXPECT_EQ(names(resumed->entries),
              std::vector<std::string>(expected.begin() + 2, expected.end()));
    Remount();  // the start is part of the directory's record
  }
  ExpectFsckClean();
}

// A directory drained from the front, as `rm -rf` or a cleanup does, while
// something lists it: each listing starts at the first live entry rather
// than stepping over the deletion markers before it. Middle removals and a
// rename of the first entry over the second (one batch removing both) keep
// the listing exact.
TEST_F(ReadDirTest, DirectoryDrainedFromTheFrontListsFromItsFirstLiveEntry) {
  Ino d = MakeDir(kRootIno, "d");
  const int n = 2000;
  for (int i = 0; i < n; ++i) MakeFile(d, "f" + std::to_string(i));
  auto first_page = fs_->ReadDir(Root(), d, 0, 10, false);
  ASSERT_FS_OK(first_page);
  const uint64_t old_cookie = first_page->entries.back().next_cookie;
  // Middle removals, and the first entry renamed over the second.
  for (int i = 100; i < 110; ++i) ASSERT_FS_OK(fs_->Unlink(Root(), d, "f" + std::to_string(i)));
  ASSERT_FS_OK(fs_->Rename(Root(), d, "f0", d, "f1"));
  std::set<std::string> live;
  for (int i = 0; i < n; ++i) live.insert("f" + std::to_string(i));
  for (int i = 100; i < 110; ++i) live.erase("f" + std::to_string(i));
  live.erase("f0");  // f1 now names f0's inode, at a new cookie: the last
  auto listed = [&](uint64_t cookie) {
    std::set<std::string> out;
    for (const DirEntry& e : ListAll(*fs_, d, cookie, /*attrs=*/false)) {
      if (e.name != "." && e.name != "..") out.insert(e.name);
    }
    return out;
  };
  EXPECT_EQ(listed(0), live);
  // Drained in creation order; every 100 removals, a listing.
  for (int i = 0; i < n - 5; ++i) {
    const std::string name = "f" + std::to_string(i);
    if (!live.count(name)) continue;
    ASSERT_FS_OK(fs_->Unlink(Root(), d, name));
    live.erase(name);
    if (i % 100 != 99) continue;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
    EXPECT_EQ(listed(0), live) << "after f" << i;
    const uint64_t skipped = rocksdb::get_perf_context()->internal_delete_skipped_count;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    EXPECT_LT(skipped, 20u) << "after f" << i;
  }
  EXPECT_EQ(live.size(), 5u);  // f1995..f1999
  // A cookie handed out before the drain still resumes.
  EXPECT_EQ(listed(old_cookie), live);
  Remount();
  EXPECT_EQ(listed(0), live);
  ExpectFsckClean();
}

// Removing a directory's first entry moves its listing start to the next
// cookie. When the entries left fill every cookie up to next_cookie (a
// directory drained in the order it was filled), that needs no engine
// lookup: draining from the front reads no more than draining from the back.
TEST_F(ReadDirTest, DrainingInCreationOrderLooksNothingUp) {
  const int n = 200;
  auto fill = [&](const std::string& dir) {
    Ino d = MakeDir(kRootIno, dir);
    for (int i = 0; i < n; ++i) MakeFile(d, "f" + std::to_string(i));
    return d;
  };
  auto engine_gets = [&](Ino d, bool from_front) {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
    for (int k = 0; k < n; ++k) {
      const int i = from_front ? k : n - 1 - k;
      EXPECT_TRUE(fs_->Unlink(Root(), d, "f" + std::to_string(i)).ok()) << i;
    }
    const uint64_t gets = rocksdb::get_perf_context()->get_from_memtable_count;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    return gets;
  };
  Ino front = fill("front");
  Ino back = fill("back");
  // Each removal from the front leaves the next name first in the listing.
  for (int i = 0; i < n; ++i) {
    ASSERT_FS_OK(fs_->Unlink(Root(), front, "f" + std::to_string(i)));
    if (i > 5 && i != n / 2 && i < n - 2) continue;
    std::vector<DirEntry> rest = ListAll(*fs_, front, 0, /*attrs=*/false);
    ASSERT_EQ(rest.size(), 2u + (n - 1 - i)) << "after f" << i;
    if (i < n - 1) EXPECT_EQ(rest[2].name, "f" + std::to_string(i + 1));
  }
  // The measured drains, on fresh directories.
  for (int i = 0; i < n; ++i) MakeFile(front, "f" + std::to_string(i));
  const uint64_t front_gets = engine_gets(front, /*from_front=*/true);
  const uint64_t back_gets = engine_gets(back, /*from_front=*/false);
  EXPECT_LE(front_gets, back_gets + 2) << "front " << front_gets << ", back " << back_gets;
  EXPECT_EQ(ListAll(*fs_, front, 0, false).size(), 2u);
  ExpectFsckClean();
}

TEST_F(ReadDirTest, NeedsReadPermission) {
  Ino d = MakeDir(kRootIno, "d", 0711);
  EXPECT_ERRNO(fs_->ReadDir(User(1000, 100), d, 0, 0, false), EACCES);
  Chmod(d, 0744);
  ASSERT_FS_OK(fs_->ReadDir(User(1000, 100), d, 0, 0, false));
}

TEST_F(XattrTest, SetGetListRemove) {
  Ino f = MakeFile(kRootIno, "f");
  Attr before = Stat(f);
  std::string binary("\0\xff\x01value", 8);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.one", binary, 0));
  EXPECT_TRUE(before.ctime < Stat(f).ctime);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.two", "", 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "trusted.t", "root only", 0));
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "security.s", "label", 0));
  auto one = fs_->GetXattr(Root(), f, "user.one");
  ASSERT_FS_OK(one);
  EXPECT_EQ(*one, binary);
  auto two = fs_->GetXattr(Root(), f, "user.two");
  ASSERT_FS_OK(two);
  EXPECT_EQ(*two, "");
  auto names = fs_->ListXattr(Root(), f);
  ASSERT_FS_OK(names);
  EXPECT_EQ(std::set<std::string>(names->begin(), names->end()),
            (std::set<std::string>{"user.one", "user.two", "trusted.t", "security.s"}));
  auto user_names = fs_->ListXattr(User(1000, 100), f);
  ASSERT_FS_OK(user_names);
  EXPECT_EQ(std::set<std::string>(user_names->begin(), user_names->end()),
            (std::set<std::string>{"user.one", "user.two", "security.s"}));
  ASSERT_FS_OK(fs_->RemoveXattr(Root(), f, "user.one"));
  EXPECT_ERRNO(fs_->GetXattr(Root(), f, "user.one"), ENODATA);
  EXPECT_ERRNO(fs_->RemoveXattr(Root(), f, "user.one"), ENODATA);
  // Xattrs work on directories and survive a remount.
  Ino d = MakeDir(kRootIno, "d");
  ASSERT_FS_OK(fs_->SetXattr(Root(), d, "user.dir", "yes", 0));
  Remount();
  EXPECT_EQ(*fs_->GetXattr(Root(), d, "user.dir"), "yes");
  EXPECT_EQ(*fs_->GetXattr(Root(), f, "trusted.t"), "root only");
  // They go away with their inode.
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
  ExpectFsckClean();
}

TEST_F(XattrTest, CreateAndReplaceFlags) {
  Ino f = MakeFile(kRootIno, "f");
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.a", "1", kXattrReplace), ENODATA);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.a", "1", kXattrCreate));
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.a", "2", kXattrCreate), EEXIST);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.a", "3", kXattrReplace));
  EXPECT_EQ(*fs_->GetXattr(Root(), f, "user.a"), "3");
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.a", "4", 0));
  EXPECT_EQ(*fs_->GetXattr(Root(), f, "user.a"), "4");
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.a", "5", kXattrCreate | kXattrReplace), EINVAL);
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.a", "5", 8), EINVAL);
}

TEST_F(XattrTest, NamespacesLimitsAndPermissions) {
  Ino f = MakeFile(kRootIno, "f", 0644);
  Chown(f, 1000, 100);
  Credentials owner = User(1000, 100), other = User(2000, 200);
  ASSERT_FS_OK(fs_->SetXattr(owner, f, "user.mine", "v", 0));
  ASSERT_FS_OK(fs_->GetXattr(other, f, "user.mine"));
  EXPECT_ERRNO(fs_->SetXattr(other, f, "user.theirs", "v", 0), EACCES);
  EXPECT_ERRNO(fs_->RemoveXattr(other, f, "user.mine"), EACCES);
  Chmod(f, 0600);
  EXPECT_ERRNO(fs_->GetXattr(other, f, "user.mine"), EACCES);
  EXPECT_ERRNO(fs_->SetXattr(owner, f, "trusted.x", "v", 0), EPERM);
  EXPECT_ERRNO(fs_->SetXattr(owner, f, "security.x", "v", 0), EPERM);
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "system.posix_acl_access", "v", 0), EOPNOTSUPP);
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "nonamespace", "v", 0), EOPNOTSUPP);
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user." + std::string(251, 'n'), "v", 0), ERANGE);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user." + std::string(250, 'n'), "v", 0));
  EXPECT_ERRNO(fs_->SetXattr(Root(), f, "user.big", std::string(kXattrValueMax + 1, 'v'), 0), E2BIG);
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.big", std::string(kXattrValueMax, 'v'), 0));
  EXPECT_ERRNO(fs_->GetXattr(Root(), f, "user.absent"), ENODATA);
  auto fifo = fs_->Mknod(Root(), kRootIno, "fifo", S_IFIFO | 0666, 0);
  ASSERT_FS_OK(fifo);
  EXPECT_ERRNO(fs_->SetXattr(Root(), fifo->ino, "user.x", "v", 0), EPERM);
  EXPECT_ERRNO(fs_->GetXattr(Root(), fifo->ino, "user.x"), ENODATA);
  ASSERT_FS_OK(fs_->SetXattr(Root(), fifo->ino, "trusted.x", "v", 0));
  EXPECT_ERRNO(fs_->GetXattr(Root(), 8888888, "user.x"), ESTALE);
}

// Capabilities go with every change of a file's data or owner (Linux's
// rule; the FUSE mount relies on it, fuse/device_io.h), and whoever may
// write the file may remove them, since a write would.
TEST_F(XattrTest, CapabilitiesGoWithWritesTruncatesAndChowns) {
  Ino f = MakeFile(kRootIno, "f", 0664);
  Chown(f, 1000, 100);
  const std::string capability("\x01\x00\x00\x02\x00\x04\x00\x00", 8);
  auto give = [&] {
    ASSERT_FS_OK(fs_->SetXattr(Root(), f, "security.capability", capability, 0));
  };
  auto has = [&] { return fs_->GetXattr(Root(), f, "security.capability").ok(); };
  give();
  ASSERT_FS_OK(fs_->Write(Root(), f, 0, "data"));
  EXPECT_FALSE(has()) << "a write, even root's";
  give();  // the file's write-back buffer already exists: still noticed
  ASSERT_FS_OK(fs_->Write(User(1000, 100), f, 4, "more"));
  EXPECT_FALSE(has()) << "a second write into the same buffer";
  give();
  SetAttrRequest shrink;
  shrink.size = 2;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, shrink));
  EXPECT_FALSE(has()) << "a truncate";
  give();
  Chown(f, 1001, 100);
  EXPECT_FALSE(has()) << "a chown";
  give();
  Chmod(f, 0775);
  EXPECT_TRUE(has()) << "a chmod keeps them";
  ASSERT_FS_OK(fs_->SetXattr(Root(), f, "user.other", "v", 0));
  ASSERT_FS_OK(fs_->Write(Root(), f, 0, "x"));
  EXPECT_FALSE(has());
  EXPECT_TRUE(fs_->GetXattr(Root(), f, "user.other").ok()) << "other attributes stay";

  give();
  EXPECT_ERRNO(fs_->RemoveXattr(User(3000, 300), f, "security.capability"), EPERM);
  EXPECT_ERRNO(fs_->RemoveXattr(User(3000, 300), f, "security.other"), EPERM);
  ASSERT_FS_OK(fs_->RemoveXattr(User(2000, 100), f, "security.capability"));  // group may write
  EXPECT_FALSE(has());
}

TEST_F(ReadDirTest, StatFsReportsUsage) {
  auto empty = fs_->StatFs(Root(), kRootIno);
  ASSERT_FS_OK(empty);
  EXPECT_EQ(empty->block_size, kBlockSize);
  EXPECT_EQ(empty->total_blocks, (1ull << 34) / kBlockSize);
  EXPECT_EQ(empty->free_blocks, empty->total_blocks);
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, std::string(10 * kBlockSize, 'x'));
  auto used = fs_->StatFs(Root(), kRootIno);
  ASSERT_FS_OK(used);
  EXPECT_EQ(used->total_blocks - used->free_blocks, 10u);
  EXPECT_EQ(empty->free_files - used->free_files, 1u);
}

TEST_F(FsTest, ReadDirRefusesCookiesNeverIssued) {
  Ino dir = MakeDir(kRootIno, "d");
  for (int i = 0; i < 3; i++) MakeFile(dir, "f" + std::to_string(i));
  auto all = fs_->ReadDir(Root(), dir, 0, 0, false);
  ASSERT_FS_OK(all);
  ASSERT_EQ(all->entries.size(), 5u);
  uint64_t last = all->entries.back().next_cookie;
  auto after_last = fs_->ReadDir(Root(), dir, last, 0, false);
  ASSERT_FS_OK(after_last);
  EXPECT_TRUE(after_last->entries.empty());
  EXPECT_TRUE(after_last->eof);
  EXPECT_ERRNO(fs_->ReadDir(Root(), dir, last + 1, 0, false), kErrBadCookie);
  EXPECT_ERRNO(fs_->ReadDir(Root(), dir, ~uint64_t{0}, 0, false), kErrBadCookie);
  ASSERT_FS_OK(fs_->ReadDir(Root(), dir, 2, 0, false));
}

TEST_F(FsTest, ReadDirPlusGivesAttributesOnlyWithSearchPermission) {
  Ino dir = MakeDir(kRootIno, "shelf", 0744);
  MakeFile(dir, "book");
  auto listed = fs_->ReadDir(User(1000, 1000), dir, 0, 0, /*with_attrs=*/true);
  ASSERT_FS_OK(listed);
  ASSERT_EQ(listed->entries.size(), 3u);
  for (const DirEntry& e : listed->entries) EXPECT_FALSE(e.attr.has_value()) << e.name;
  auto owner = fs_->ReadDir(Root(), dir, 0, 0, true);
  ASSERT_FS_OK(owner);
  for (const DirEntry& e : owner->entries) EXPECT_TRUE(e.attr.has_value()) << e.name;
}

// READDIRPLUS loads its entries' attributes a batch at a time (one lock
// hold and one MultiGet per batch): across several batches, with one inode
// named many times in a batch and with a file whose written data is still
// in the write-back buffer, every entry shows what GetAttr shows.
TEST_F(ReadDirTest, ReadDirPlusAttributesMatchGetAttrAcrossBatches) {
  Ino d = MakeDir(kRootIno, "many");
  Ino shared = MakeFile(d, "shared");
  std::vector<Ino> files;
  for (int i = 0; i < 150; ++i) {
    if (i % 10 == 0) {
      ASSERT_FS_OK(fs_->Link(Root(), shared, d, "link" + std::to_string(i)));
    } else {
      files.push_back(MakeFile(d, "f" + std::to_string(i), 0600 + (i % 64)));
    }
  }
  // Unflushed: its size lives only in the write-back buffer.
  WriteAt(files[3], 0, std::string(5000, 'x'));
  auto all = ListAll(*fs_, d, 0, true);
  ASSERT_EQ(all.size(), 153u);
  for (const DirEntry& e : all) {
    ASSERT_TRUE(e.attr.has_value()) << e.name;
    auto want = fs_->GetAttr(Root(), e.ino);
    ASSERT_FS_OK(want);
    EXPECT_EQ(e.attr->ino, e.ino) << e.name;
    EXPECT_EQ(e.attr->mode, want->mode) << e.name;
    EXPECT_EQ(e.attr->size, want->size) << e.name;
    EXPECT_EQ(e.attr->nlink, want->nlink) << e.name;
  }
  auto written = fs_->GetAttr(Root(), files[3]);
  ASSERT_FS_OK(written);
  EXPECT_EQ(written->size, 5000u);
  auto shared_attr = fs_->GetAttr(Root(), shared);
  ASSERT_FS_OK(shared_attr);
  EXPECT_EQ(shared_attr->nlink, 16u);
  // One page of 100 entries: "." and ".." and 98 names, all with attributes.
  auto page = fs_->ReadDir(Root(), d, 0, 100, true);
  ASSERT_FS_OK(page);
  EXPECT_EQ(page->entries.size(), 100u);
  EXPECT_FALSE(page->eof);
}

}  // namespace
}  // namespace pail::fs::testing

