// NFSv3, MOUNT and the port mapper through libnfs against the server running
// as its own process on a file:// bucket: every procedure, its main error
// cases, handles across restarts, and COMMIT durability across SIGKILL.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "nfs/xdr.h"
#include "nfs_test_client.h"
#include "raw_rpc.h"
#include "server_process.h"

namespace pail::nfs::test {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class NfsIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess(/*durable_commit=*/true);
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  static void TearDownTestSuite() {
    EXPECT_TRUE(server_->Stop()) << server_->log();
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    client_ = NfsClient::Connect(server_->port());
    ASSERT_NE(client_, nullptr);
    auto root = client_->Mount("/");
    ASSERT_TRUE(root.has_value());
    root_ = *root;
    // Each test works in its own directory.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(client_->Mkdir(root_, name, 0777, &dir_), NFS3_OK);
  }

  static ServerProcess* server_;
  std::unique_ptr<NfsClient> client_;
  std::string root_;
  std::string dir_;
};

ServerProcess* NfsIntegrationTest::server_ = nullptr;

TEST_F(NfsIntegrationTest, NullProceduresAndPortMapper) {
  EXPECT_TRUE(client_->nfs().Run(
      [](rpc_context* rpc, rpc_cb cb, void* c) { return rpc_nfs3_null_async(rpc, cb, c); }, nullptr));
  EXPECT_TRUE(client_->mount().Run(
      [](rpc_context* rpc, rpc_cb cb, void* c) { return rpc_mount3_null_async(rpc, cb, c); }, nullptr));

  auto pmap = RpcClient::Connect(server_->port(), PMAP_PROGRAM, PMAP_V2);
  ASSERT_NE(pmap, nullptr);
  auto getport = [&](int program, int version) {
    uint32_t port = 0;
    EXPECT_TRUE(pmap->Run(
        [&](rpc_context* rpc, rpc_cb cb, void* c) {
          return rpc_pmap2_getport_async(rpc, program, version, IPPROTO_TCP, cb, c);
        },
        [&](void* data) { port = *static_cast<uint32_t*>(data); }));
    return port;
  };
  EXPECT_EQ(getport(NFS_PROGRAM, NFS_V3), server_->port());
  EXPECT_EQ(getport(MOUNT_PROGRAM, MOUNT_V3), server_->port());
  EXPECT_EQ(getport(NFS_PROGRAM, 4), 0u);
}

TEST_F(NfsIntegrationTest, MountProcedures) {
  int status = 0;
  EXPECT_FALSE(client_->Mount("/no/such/dir", &status).has_value());
  EXPECT_EQ(status, MNT3ERR_NOENT);
  std::string file;
  ASSERT_EQ(client_->Create(dir_, "f", UNCHECKED, 0644, &file), NFS3_OK);
  std::string path = "/MountProcedures/f";
  EXPECT_FALSE(client_->Mount(path, &status).has_value());
  EXPECT_EQ(status, MNT3ERR_NOTDIR);
  auto sub = client_->Mount("/MountProcedures", &status);
  ASSERT_TRUE(sub.has_value());
  EXPECT_EQ(*sub, dir_);

  std::vector<std::string> export_dirs;
  ASSERT_TRUE(client_->mount().Run(
      [](rpc_context* rpc, rpc_cb cb, void* c) { return rpc_mount3_export_async(rpc, cb, c); },
      [&](void* data) {
        for (exportnode* e = *static_cast<exports*>(data); e; e = e->ex_next) {
          export_dirs.push_back(e->ex_dir);
        }
      }));
  EXPECT_EQ(export_dirs, std::vector<std::string>{"/"});

  auto dump = [&] {
    std::set<std::string> paths;
    EXPECT_TRUE(client_->mount().Run(
        [](rpc_context* rpc, rpc_cb cb, void* c) { return rpc_mount3_dump_async(rpc, cb, c); },
        [&](void* data) {
          for (mountbody* m = *static_cast<mountlist*>(data); m; m = m->ml_next) {
            if (std::string(m->ml_hostname) == "pail-test") paths.insert(m->ml_directory);
          }
        }));
    return paths;
  };
  EXPECT_TRUE(dump().count("/MountProcedures"));
  std::string umount_path = "/MountProcedures";
  EXPECT_TRUE(client_->mount().Run(
      [&](rpc_context* rpc, rpc_cb cb, void* c) {
        return rpc_mount3_umnt_async(rpc, cb, umount_path.data(), c);
      },
      nullptr));
  EXPECT_FALSE(dump().count("/MountProcedures"));
  EXPECT_TRUE(dump().count("/"));
  EXPECT_TRUE(client_->mount().Run(
      [](rpc_context* rpc, rpc_cb cb, void* c) { return rpc_mount3_umntall_async(rpc, cb, c); },
      nullptr));
  EXPECT_TRUE(dump().empty());
}

TEST_F(NfsIntegrationTest, GetAttrAndBadHandles) {
  fattr3 attr;
  ASSERT_EQ(client_->GetAttr(root_, &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3DIR);
  EXPECT_EQ(attr.fileid, 1u);
  EXPECT_EQ(client_->GetAttr("short", &attr), NFS3ERR_BADHANDLE);
  std::string wrong_generation = root_;
  wrong_generation.back() ^= 0x55;
  EXPECT_EQ(client_->GetAttr(wrong_generation), NFS3ERR_STALE);
  std::string never_existed = root_;
  never_existed[5] = 0x7f;  // an inode number far beyond any allocated
  EXPECT_EQ(client_->GetAttr(never_existed), NFS3ERR_STALE);
}

TEST_F(NfsIntegrationTest, CreateModes) {
  std::string a, again;
  fattr3 attr;
  ASSERT_EQ(client_->Create(dir_, "a", UNCHECKED, 0640, &a, 0, &attr), NFS3_OK);
  EXPECT_EQ(attr.mode, 0640u);
  EXPECT_EQ(attr.type, NF3REG);
  EXPECT_EQ(client_->Create(dir_, "a", UNCHECKED, 0600, &again), NFS3_OK);
  EXPECT_EQ(again, a);
  EXPECT_EQ(client_->Create(dir_, "a", GUARDED, 0600), NFS3ERR_EXIST);
  EXPECT_EQ(client_->Create(dir_, "g", GUARDED, 0600), NFS3_OK);

  std::string x, x_retry;
  ASSERT_EQ(client_->Create(dir_, "x", EXCLUSIVE, 0, &x, 0x1122334455667788ull), NFS3_OK);
  // The retransmission of the same exclusive create succeeds with the same file...
  ASSERT_EQ(client_->Create(dir_, "x", EXCLUSIVE, 0, &x_retry, 0x1122334455667788ull), NFS3_OK);
  EXPECT_EQ(x_retry, x);
  // ... a different one does not.
  EXPECT_EQ(client_->Create(dir_, "x", EXCLUSIVE, 0, nullptr, 0x99ull), NFS3ERR_EXIST);
  EXPECT_EQ(client_->Create(dir_, "a", EXCLUSIVE, 0, nullptr, 0x1122334455667788ull), NFS3ERR_EXIST);

  EXPECT_EQ(client_->Create(dir_, std::string(300, 'n'), UNCHECKED, 0644), NFS3ERR_NAMETOOLONG);
  EXPECT_EQ(client_->Create(a, "inside-a-file", UNCHECKED, 0644), NFS3ERR_NOTDIR);
}

TEST_F(NfsIntegrationTest, WriteReadCommitDurableMode) {
  std::string f;
  ASSERT_EQ(client_->Create(dir_, "data", UNCHECKED, 0644, &f), NFS3_OK);
  std::string one_mib = RandomBytes(1 << 20, 1);
  stable_how committed;
  uint64_t write_verifier = 0, commit_verifier = 0;
  uint32_t count = 0;
  ASSERT_EQ(client_->Write(f, 0, one_mib, UNSTABLE, &committed, &write_verifier, &count), NFS3_OK);
  EXPECT_EQ(count, 1u << 20);
  EXPECT_EQ(committed, UNSTABLE);
  ASSERT_EQ(client_->Write(f, 1 << 20, "tail", FILE_SYNC, &committed), NFS3_OK);
  EXPECT_EQ(committed, FILE_SYNC);
  ASSERT_EQ(client_->Commit(f, &commit_verifier), NFS3_OK);
  EXPECT_EQ(commit_verifier, write_verifier);

  std::string data;
  bool eof = true;
  ASSERT_EQ(client_->Read(f, 0, 1 << 20, &data, &eof), NFS3_OK);
  EXPECT_EQ(data, one_mib);
  EXPECT_FALSE(eof);
  ASSERT_EQ(client_->Read(f, 1 << 20, 100, &data, &eof), NFS3_OK);
  EXPECT_EQ(data, "tail");
  EXPECT_TRUE(eof);
  ASSERT_EQ(client_->Read(f, 5 << 20, 100, &data, &eof), NFS3_OK);
  EXPECT_EQ(data, "");
  EXPECT_TRUE(eof);

  fattr3 attr;
  ASSERT_EQ(client_->GetAttr(f, &attr), NFS3_OK);
  EXPECT_EQ(attr.size, (1u << 20) + 4);
  EXPECT_EQ(client_->Read(dir_, 0, 10, &data), NFS3ERR_ISDIR);
  EXPECT_NE(client_->Write(dir_, 0, "x", UNSTABLE), NFS3_OK);
}

TEST_F(NfsIntegrationTest, SetAttrWithGuard) {
  std::string f;
  fattr3 attr;
  ASSERT_EQ(client_->Create(dir_, "f", UNCHECKED, 0644, &f), NFS3_OK);
  ASSERT_EQ(client_->Write(f, 0, "0123456789", FILE_SYNC), NFS3_OK);
  ASSERT_EQ(client_->GetAttr(f, &attr), NFS3_OK);

  auto setattr = [&](std::optional<nfstime3> guard, uint32_t mode, std::optional<uint64_t> size,
                     wcc_data* wcc) {
    SETATTR3args args;
    std::memset(&args, 0, sizeof(args));
    args.object = Fh(f);
    args.new_attributes.mode.set_it = 1;
    args.new_attributes.mode.set_mode3_u.mode = mode;
    if (size) {
      args.new_attributes.size.set_it = 1;
      args.new_attributes.size.set_size3_u.size = *size;
    }
    if (guard) {
      args.guard.check = 1;
      args.guard.sattrguard3_u.obj_ctime = *guard;
    }
    int status = -1;
    client_->nfs().Call<SETATTR3res>(rpc_nfs3_setattr_async, &args, [&](SETATTR3res* res) {
      status = res->status;
      *wcc = res->SETATTR3res_u.resok.obj_wcc;
    });
    return status;
  };
  wcc_data wcc;
  nfstime3 wrong = attr.ctime;
  wrong.seconds -= 100;
  EXPECT_EQ(setattr(wrong, 0600, std::nullopt, &wcc), NFS3ERR_NOT_SYNC);
  ASSERT_EQ(setattr(attr.ctime, 0600, 4, &wcc), NFS3_OK);
  ASSERT_TRUE(wcc.before.attributes_follow);
  EXPECT_EQ(wcc.before.pre_op_attr_u.attributes.size, 10u);
  ASSERT_TRUE(wcc.after.attributes_follow);
  EXPECT_EQ(wcc.after.post_op_attr_u.attributes.mode, 0600u);
  EXPECT_EQ(wcc.after.post_op_attr_u.attributes.size, 4u);
  ASSERT_EQ(setattr(std::nullopt, 0604, std::nullopt, &wcc), NFS3_OK);
  // A size change is a data change: mtime moves to the server's now.
  int64_t now = time(nullptr);
  EXPECT_NEAR(static_cast<double>(wcc.after.post_op_attr_u.attributes.ctime.seconds), now, 60);
  ASSERT_EQ(client_->GetAttr(f, &attr), NFS3_OK);
  EXPECT_NEAR(static_cast<double>(attr.mtime.seconds), now, 60);

  // Times from the client.
  SETATTR3args args;
  std::memset(&args, 0, sizeof(args));
  args.object = Fh(f);
  args.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
  args.new_attributes.mtime.set_mtime_u.mtime = {1000000000, 5};
  int status = -1;
  client_->nfs().Call<SETATTR3res>(rpc_nfs3_setattr_async, &args,
                                   [&](SETATTR3res* res) { status = res->status; });
  ASSERT_EQ(status, NFS3_OK);
  ASSERT_EQ(client_->GetAttr(f, &attr), NFS3_OK);
  EXPECT_EQ(attr.mtime.seconds, 1000000000u);
  EXPECT_EQ(attr.mtime.nseconds, 5u);
  args.new_attributes.mtime.set_mtime_u.mtime = {0, 1};
  client_->nfs().Call<SETATTR3res>(rpc_nfs3_setattr_async, &args,
                                   [&](SETATTR3res* res) { status = res->status; });
  ASSERT_EQ(status, NFS3_OK);
  ASSERT_EQ(client_->GetAttr(f, &attr), NFS3_OK);
  EXPECT_EQ(attr.mtime.seconds, 0u);
  EXPECT_EQ(attr.mtime.nseconds, 1u);
}

TEST_F(NfsIntegrationTest, LookupErrors) {
  std::string f, found;
  fattr3 attr;
  ASSERT_EQ(client_->Create(dir_, "f", UNCHECKED, 0644, &f), NFS3_OK);
  ASSERT_EQ(client_->Lookup(dir_, "f", &found, &attr), NFS3_OK);
  EXPECT_EQ(found, f);
  EXPECT_EQ(attr.type, NF3REG);
  EXPECT_EQ(client_->Lookup(dir_, "missing"), NFS3ERR_NOENT);
  EXPECT_EQ(client_->Lookup(f, "x"), NFS3ERR_NOTDIR);
  EXPECT_EQ(client_->Lookup(dir_, std::string(256, 'y')), NFS3ERR_NAMETOOLONG);
  ASSERT_EQ(client_->Lookup(dir_, "..", &found), NFS3_OK);
  EXPECT_EQ(found, root_);
}

TEST_F(NfsIntegrationTest, AccessFollowsModeAndCredentials) {
  std::string f;
  ASSERT_EQ(client_->Create(dir_, "f", UNCHECKED, 0640, &f), NFS3_OK);
  auto access = [&](NfsClient& c, const std::string& fh, uint32_t want, uint32_t* got) {
    ACCESS3args args{Fh(fh), want};
    int status = -1;
    c.nfs().Call<ACCESS3res>(rpc_nfs3_access_async, &args, [&](ACCESS3res* res) {
      status = res->status;
      if (res->status == NFS3_OK) *got = res->ACCESS3res_u.resok.access;
    });
    return status;
  };
  const uint32_t all = ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND |
                       ACCESS3_DELETE | ACCESS3_EXECUTE;
  uint32_t got = 0;
  ASSERT_EQ(access(*client_, f, all, &got), NFS3_OK);
  EXPECT_EQ(got, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND);

  auto other = NfsClient::Connect(server_->port(), Identity{1000, 1000, {}});
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(access(*other, f, all, &got), NFS3_OK);
  EXPECT_EQ(got, 0u);
  auto group_member = NfsClient::Connect(server_->port(), Identity{1000, 1000, {0}});
  ASSERT_NE(group_member, nullptr);
  ASSERT_EQ(access(*group_member, f, all, &got), NFS3_OK);
  EXPECT_EQ(got, ACCESS3_READ);
  ASSERT_EQ(access(*other, dir_, all, &got), NFS3_OK);
  EXPECT_EQ(got, ACCESS3_READ | ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE);

  // The core enforces the same permissions on the operations themselves.
  std::string data;
  EXPECT_EQ(other->Read(f, 0, 10, &data), NFS3ERR_ACCES);
  EXPECT_EQ(other->Create(root_, "not-allowed", UNCHECKED, 0644), NFS3ERR_ACCES);
  EXPECT_EQ(other->SetMode(f, 0777), NFS3ERR_PERM);
}

TEST_F(NfsIntegrationTest, AuthNoneActsAsAnonymous) {
  auto anon = NfsClient::Connect(server_->port());
  ASSERT_NE(anon, nullptr);
  rpc_set_auth(anon->nfs().rpc(), libnfs_authnone_create());
  std::string f;
  fattr3 attr;
  ASSERT_EQ(anon->Create(dir_, "anon-file", UNCHECKED, 0644, &f, 0, &attr), NFS3_OK);
  EXPECT_EQ(attr.uid, 65534u);
  EXPECT_EQ(attr.gid, 65534u);
  EXPECT_EQ(anon->Create(root_, "anon-in-root", UNCHECKED, 0644), NFS3ERR_ACCES);
}

TEST_F(NfsIntegrationTest, SymlinkAndReadlink) {
  SYMLINK3args args;
  std::memset(&args, 0, sizeof(args));
  args.where.dir = Fh(dir_);
  args.where.name = const_cast<char*>("link");
  args.symlink.symlink_attributes = NoAttrs();
  args.symlink.symlink_data = const_cast<char*>("some/target/path");
  int status = -1;
  std::string link;
  client_->nfs().Call<SYMLINK3res>(rpc_nfs3_symlink_async, &args, [&](SYMLINK3res* res) {
    status = res->status;
    if (status == NFS3_OK) link = FhBytes(res->SYMLINK3res_u.resok.obj.post_op_fh3_u.handle);
  });
  ASSERT_EQ(status, NFS3_OK);
  fattr3 attr;
  ASSERT_EQ(client_->GetAttr(link, &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3LNK);
  EXPECT_EQ(attr.size, 16u);

  auto readlink = [&](const std::string& fh, std::string* target) {
    READLINK3args rargs{Fh(fh)};
    int s = -1;
    client_->nfs().Call<READLINK3res>(rpc_nfs3_readlink_async, &rargs, [&](READLINK3res* res) {
      s = res->status;
      if (s == NFS3_OK) *target = res->READLINK3res_u.resok.data;
    });
    return s;
  };
  std::string target;
  ASSERT_EQ(readlink(link, &target), NFS3_OK);
  EXPECT_EQ(target, "some/target/path");
  EXPECT_EQ(readlink(dir_, &target), NFS3ERR_INVAL);
  // Symlink over an existing name.
  client_->nfs().Call<SYMLINK3res>(rpc_nfs3_symlink_async, &args,
                                   [&](SYMLINK3res* res) { status = res->status; });
  EXPECT_EQ(status, NFS3ERR_EXIST);
}

TEST_F(NfsIntegrationTest, Mknod) {
  auto mknod = [&](const char* name, ftype3 type, uint32_t major, uint32_t minor, fattr3* attr) {
    MKNOD3args args;
    std::memset(&args, 0, sizeof(args));
    args.where.dir = Fh(dir_);
    args.where.name = const_cast<char*>(name);
    args.what.type = type;
    if (type == NF3CHR || type == NF3BLK) {
      args.what.mknoddata3_u.chr_device.dev_attributes = NoAttrs();
      args.what.mknoddata3_u.chr_device.dev_attributes.mode.set_it = 1;
      args.what.mknoddata3_u.chr_device.dev_attributes.mode.set_mode3_u.mode = 0600;
      args.what.mknoddata3_u.chr_device.spec = {major, minor};
    } else if (type == NF3FIFO || type == NF3SOCK) {
      args.what.mknoddata3_u.pipe_attributes = NoAttrs();
    }
    int status = -1;
    client_->nfs().Call<MKNOD3res>(rpc_nfs3_mknod_async, &args, [&](MKNOD3res* res) {
      status = res->status;
      if (status == NFS3_OK && attr) *attr = res->MKNOD3res_u.resok.obj_attributes.post_op_attr_u.attributes;
    });
    return status;
  };
  fattr3 attr;
  ASSERT_EQ(mknod("fifo", NF3FIFO, 0, 0, &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3FIFO);
  ASSERT_EQ(mknod("chr", NF3CHR, 4, 7, &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3CHR);
  EXPECT_EQ(attr.rdev.specdata1, 4u);
  EXPECT_EQ(attr.rdev.specdata2, 7u);
  EXPECT_EQ(attr.mode, 0600u);
  ASSERT_EQ(mknod("sock", NF3SOCK, 0, 0, &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3SOCK);
  EXPECT_EQ(mknod("reg", NF3REG, 0, 0, nullptr), NFS3ERR_BADTYPE);
  EXPECT_EQ(mknod("fifo", NF3FIFO, 0, 0, nullptr), NFS3ERR_EXIST);
}

TEST_F(NfsIntegrationTest, RemoveAndRmdir) {
  std::string f, sub;
  ASSERT_EQ(client_->Create(dir_, "f", UNCHECKED, 0644, &f), NFS3_OK);
  ASSERT_EQ(client_->Mkdir(dir_, "sub", 0755, &sub), NFS3_OK);
  ASSERT_EQ(client_->Create(sub, "inner", UNCHECKED, 0644), NFS3_OK);
  EXPECT_EQ(client_->Rmdir(dir_, "sub"), NFS3ERR_NOTEMPTY);
  EXPECT_EQ(client_->Rmdir(dir_, "f"), NFS3ERR_NOTDIR);
  EXPECT_EQ(client_->Remove(dir_, "missing"), NFS3ERR_NOENT);
  EXPECT_EQ(client_->Mkdir(dir_, "sub", 0755), NFS3ERR_EXIST);
  ASSERT_EQ(client_->Remove(sub, "inner"), NFS3_OK);
  ASSERT_EQ(client_->Rmdir(dir_, "sub"), NFS3_OK);
  ASSERT_EQ(client_->Remove(dir_, "f"), NFS3_OK);
  EXPECT_EQ(client_->GetAttr(f), NFS3ERR_STALE);
  EXPECT_EQ(client_->GetAttr(sub), NFS3ERR_STALE);
  EXPECT_EQ(client_->Lookup(dir_, "f"), NFS3ERR_NOENT);
}

TEST_F(NfsIntegrationTest, RenameAndLink) {
  std::string a, b, sub;
  ASSERT_EQ(client_->Create(dir_, "a", UNCHECKED, 0644, &a), NFS3_OK);
  ASSERT_EQ(client_->Create(dir_, "b", UNCHECKED, 0644, &b), NFS3_OK);
  ASSERT_EQ(client_->Mkdir(dir_, "sub", 0755, &sub), NFS3_OK);
  auto rename = [&](const std::string& from_dir, const char* from, const std::string& to_dir,
                    const char* to, RENAME3resok* wcc) {
    RENAME3args args;
    args.from.dir = Fh(from_dir);
    args.from.name = const_cast<char*>(from);
    args.to.dir = Fh(to_dir);
    args.to.name = const_cast<char*>(to);
    int status = -1;
    client_->nfs().Call<RENAME3res>(rpc_nfs3_rename_async, &args, [&](RENAME3res* res) {
      status = res->status;
      if (wcc) *wcc = res->RENAME3res_u.resok;
    });
    return status;
  };
  RENAME3resok wcc;
  ASSERT_EQ(rename(dir_, "a", sub, "moved", &wcc), NFS3_OK);
  EXPECT_TRUE(wcc.fromdir_wcc.before.attributes_follow);
  EXPECT_TRUE(wcc.todir_wcc.after.attributes_follow);
  std::string found;
  ASSERT_EQ(client_->Lookup(sub, "moved", &found), NFS3_OK);
  EXPECT_EQ(found, a);
  // Over an existing file: the target's inode goes away.
  ASSERT_EQ(rename(sub, "moved", dir_, "b", nullptr), NFS3_OK);
  EXPECT_EQ(client_->GetAttr(b), NFS3ERR_STALE);
  EXPECT_EQ(rename(dir_, "missing", dir_, "x", nullptr), NFS3ERR_NOENT);
  EXPECT_EQ(rename(dir_, "b", dir_, "sub", nullptr), NFS3ERR_ISDIR);

  LINK3args largs;
  largs.file = Fh(a);
  largs.link.dir = Fh(sub);
  largs.link.name = const_cast<char*>("hard");
  int status = -1;
  uint32_t nlink = 0;
  client_->nfs().Call<LINK3res>(rpc_nfs3_link_async, &largs, [&](LINK3res* res) {
    status = res->status;
    if (status == NFS3_OK) nlink = res->LINK3res_u.resok.file_attributes.post_op_attr_u.attributes.nlink;
  });
  ASSERT_EQ(status, NFS3_OK);
  EXPECT_EQ(nlink, 2u);
  client_->nfs().Call<LINK3res>(rpc_nfs3_link_async, &largs,
                                [&](LINK3res* res) { status = res->status; });
  EXPECT_EQ(status, NFS3ERR_EXIST);
  largs.file = Fh(sub);
  largs.link.name = const_cast<char*>("dirlink");
  client_->nfs().Call<LINK3res>(rpc_nfs3_link_async, &largs,
                                [&](LINK3res* res) { status = res->status; });
  EXPECT_TRUE(status == NFS3ERR_PERM || status == NFS3ERR_ISDIR) << status;
}

TEST_F(NfsIntegrationTest, ReadDirPagesThroughLargeDirectory) {
  std::set<std::string> expected = {".", ".."};
  for (int i = 0; i < 300; i++) {
    std::string name = "file-with-a-longish-name-" + std::to_string(i);
    ASSERT_EQ(client_->Create(dir_, name, UNCHECKED, 0644), NFS3_OK);
    expected.insert(name);
  }
  for (bool plus : {false, true}) {
    std::vector<std::pair<std::string, uint64_t>> entries;
    // A small count forces many round trips, each continuing at a cookie.
    ASSERT_EQ(client_->ListDir(dir_, plus, &entries, 1024), NFS3_OK) << plus;
    std::set<std::string> names;
    for (auto& [name, fileid] : entries) EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(names, expected) << plus;
  }
  // One entry does not fit in 120 bytes with the reply's own overhead.
  READDIR3args args;
  std::memset(&args, 0, sizeof(args));
  args.dir = Fh(dir_);
  args.count = 120;
  int status = -1;
  client_->nfs().Call<READDIR3res>(rpc_nfs3_readdir_async, &args,
                                   [&](READDIR3res* res) { status = res->status; });
  EXPECT_EQ(status, NFS3ERR_TOOSMALL);
  std::string f;
  ASSERT_EQ(client_->Lookup(dir_, "file-with-a-longish-name-1", &f), NFS3_OK);
  std::vector<std::pair<std::string, uint64_t>> entries;
  EXPECT_EQ(client_->ListDir(f, false, &entries), NFS3ERR_NOTDIR);
}

// Each reply is within the client's limit and, unless it ends the
// listing, full: the next entry would not have fitted. Sizes are counted as
// RFC 1813 encodes them.
TEST_F(NfsIntegrationTest, ReadDirRepliesFillTheClientsLimit) {
  for (int i = 0; i < 120; i++) {
    ASSERT_EQ(client_->Create(dir_, std::string(1 + i % 37, 'n') + std::to_string(i), UNCHECKED, 0644),
              NFS3_OK);
  }
  // status, post_op_attr of the directory, cookieverf, end of list, eof.
  const size_t overhead = 4 + 4 + 84 + 8 + 4 + 4;
  for (bool plus : {false, true}) {
    for (uint32_t limit : {600u, 1024u, 3000u}) {
      SCOPED_TRACE(std::string(plus ? "READDIRPLUS " : "READDIR ") + std::to_string(limit));
      uint64_t cookie = 0;
      size_t listed = 0;
      bool eof = false;
      std::vector<NfsClient::ListedEntry> page;
      size_t last_used = 0;  // of the reply before
      for (int guard = 0; guard < 1000 && !eof; ++guard) {
        ASSERT_EQ(client_->ReadDirPage(dir_, plus, cookie, limit, &page, &eof), NFS3_OK);
        ASSERT_FALSE(page.empty());
        // The reply before stopped only for want of room: this one's first
        // entry did not fit there.
        if (guard > 0) EXPECT_GT(last_used + page[0].xdr_bytes, limit) << "reply " << guard - 1;
        size_t used = overhead;
        for (const auto& e : page) used += e.xdr_bytes;
        EXPECT_LE(used, limit);
        last_used = used;
        listed += page.size();
        cookie = page.back().cookie;
      }
      EXPECT_TRUE(eof);
      EXPECT_EQ(listed, 122u);
    }
  }
  // More entries than the server asks of its core at once still come in
  // one reply when it has room for them.
  for (int i = 120; i < 1100; i++) {
    ASSERT_EQ(client_->Create(dir_, "m" + std::to_string(i), UNCHECKED, 0644), NFS3_OK);
  }
  for (bool plus : {false, true}) {
    SCOPED_TRACE(plus ? "READDIRPLUS" : "READDIR");
    size_t in_one_reply = 0;
    std::vector<std::pair<std::string, uint64_t>> all;
    ASSERT_EQ(client_->ListDir(dir_, plus, &all, 1u << 20, &in_one_reply), NFS3_OK);
    EXPECT_EQ(all.size(), 1102u);
    EXPECT_EQ(in_one_reply, 1102u);
  }
}

TEST_F(NfsIntegrationTest, FsStatFsInfoPathConf) {
  FSINFO3args info_args{Fh(root_)};
  FSINFO3resok info;
  int status = -1;
  client_->nfs().Call<FSINFO3res>(rpc_nfs3_fsinfo_async, &info_args, [&](FSINFO3res* res) {
    status = res->status;
    info = res->FSINFO3res_u.resok;
  });
  ASSERT_EQ(status, NFS3_OK);
  EXPECT_EQ(info.rtmax, 1u << 20);
  EXPECT_EQ(info.wtmax, 1u << 20);
  EXPECT_TRUE(info.properties & FSF3_LINK);
  EXPECT_TRUE(info.properties & FSF3_SYMLINK);

  FSSTAT3args stat_args{Fh(root_)};
  FSSTAT3resok st;
  client_->nfs().Call<FSSTAT3res>(rpc_nfs3_fsstat_async, &stat_args, [&](FSSTAT3res* res) {
    status = res->status;
    st = res->FSSTAT3res_u.resok;
  });
  ASSERT_EQ(status, NFS3_OK);
  EXPECT_GT(st.tbytes, 0u);
  EXPECT_LE(st.abytes, st.tbytes);

  PATHCONF3args pc_args{Fh(root_)};
  PATHCONF3resok pc;
  client_->nfs().Call<PATHCONF3res>(rpc_nfs3_pathconf_async, &pc_args, [&](PATHCONF3res* res) {
    status = res->status;
    pc = res->PATHCONF3res_u.resok;
  });
  ASSERT_EQ(status, NFS3_OK);
  EXPECT_EQ(pc.name_max, 255u);
  EXPECT_TRUE(pc.no_trunc);
  EXPECT_TRUE(pc.case_preserving);

  std::string gone = root_;
  gone[5] = 0x7e;
  FSSTAT3args stale_args{Fh(gone)};
  client_->nfs().Call<FSSTAT3res>(rpc_nfs3_fsstat_async, &stale_args,
                                  [&](FSSTAT3res* res) { status = res->status; });
  EXPECT_EQ(status, NFS3ERR_STALE);
}

TEST_F(NfsIntegrationTest, ManyCallsInFlightOnOneConnection) {
  constexpr int kFiles = 32;
  constexpr int kBlocks = 8;
  std::vector<std::string> handles(kFiles);
  for (int i = 0; i < kFiles; i++) {
    ASSERT_EQ(client_->Create(dir_, "p" + std::to_string(i), UNCHECKED, 0644, &handles[i]), NFS3_OK);
  }
  // Queue every WRITE before waiting for any reply.
  struct Slot {
    WRITE3args args;
    std::string data;
    bool done = false;
    int status = -1;
  };
  std::vector<Slot> slots(kFiles * kBlocks);
  rpc_context* rpc = client_->nfs().rpc();
  int completed = 0;
  for (int i = 0; i < kFiles * kBlocks; i++) {
    Slot& s = slots[i];
    s.data = RandomBytes(64 * 1024, i);
    s.args.file = Fh(handles[i % kFiles]);
    s.args.offset = static_cast<uint64_t>(i / kFiles) * s.data.size();
    s.args.count = static_cast<count3>(s.data.size());
    s.args.stable = UNSTABLE;
    s.args.data.data_len = s.args.count;
    s.args.data.data_val = s.data.data();
    ASSERT_EQ(rpc_nfs3_write_async(
                  rpc,
                  [](rpc_context*, int st, void* data, void* cookie) {
                    auto* slot = static_cast<Slot*>(cookie);
                    slot->done = true;
                    if (st == RPC_STATUS_SUCCESS) slot->status = static_cast<WRITE3res*>(data)->status;
                  },
                  &s.args, &s),
              0);
  }
  while (completed < kFiles * kBlocks) {
    pollfd pfd{rpc_get_fd(rpc), static_cast<short>(rpc_which_events(rpc)), 0};
    ASSERT_GE(poll(&pfd, 1, 1000), 0);
    ASSERT_GE(rpc_service(rpc, pfd.revents), 0);
    completed = 0;
    for (Slot& s : slots) completed += s.done;
  }
  for (Slot& s : slots) EXPECT_EQ(s.status, NFS3_OK);
  for (int i = 0; i < kFiles * kBlocks; i += 37) {
    std::string data;
    ASSERT_EQ(client_->Read(handles[i % kFiles], slots[i].args.offset, 64 * 1024, &data), NFS3_OK);
    EXPECT_EQ(data, slots[i].data) << i;
  }
}

TEST_F(NfsIntegrationTest, ManyConnectionsAtOnce) {
  constexpr int kClients = 12;
  constexpr int kFilesEach = 15;
  // One directory per client, owned by that client's uid.
  std::vector<std::string> dirs(kClients);
  for (int c = 0; c < kClients; c++) {
    ASSERT_EQ(client_->Mkdir(dir_, "c" + std::to_string(c), 0755, &dirs[c]), NFS3_OK);
    SETATTR3args chown;
    std::memset(&chown, 0, sizeof(chown));
    chown.object = Fh(dirs[c]);
    chown.new_attributes.uid.set_it = 1;
    chown.new_attributes.uid.set_uid3_u.uid = 2000 + c;
    int status = -1;
    client_->nfs().Call<SETATTR3res>(rpc_nfs3_setattr_async, &chown,
                                     [&](SETATTR3res* res) { status = res->status; });
    ASSERT_EQ(status, NFS3_OK);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; c++) {
    threads.emplace_back([&, c] {
      auto client = NfsClient::Connect(server_->port(), Identity{2000u + c, 2000u + c, {}});
      if (!client) {
        failures++;
        return;
      }
      for (int i = 0; i < kFilesEach; i++) {
        std::string f, back;
        std::string body = RandomBytes(1000 + i, c * 100 + i);
        bool ok = client->Create(dirs[c], "f" + std::to_string(i), GUARDED, 0644, &f) == NFS3_OK &&
                  client->Write(f, 0, body, UNSTABLE) == NFS3_OK &&
                  client->Read(f, 0, 4096, &back) == NFS3_OK && back == body;
        // Someone else's directory stays closed to this uid.
        ok = ok && client->Create(dirs[(c + 1) % kClients], "intruder", UNCHECKED, 0644) == NFS3ERR_ACCES;
        if (!ok) failures++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<std::pair<std::string, uint64_t>> entries;
  ASSERT_EQ(client_->ListDir(dirs[0], true, &entries), NFS3_OK);
  EXPECT_EQ(entries.size(), kFilesEach + 2u);
}

TEST_F(NfsIntegrationTest, HighLevelLibnfsMountByUrl) {
  nfs_context* nfs = nfs_init_context();
  ASSERT_NE(nfs, nullptr);
  std::string url = "nfs://127.0.0.1/?version=3&nfsport=" + std::to_string(server_->port()) +
                    "&mountport=" + std::to_string(server_->port());
  nfs_url* parsed = nfs_parse_url_dir(nfs, url.c_str());
  ASSERT_NE(parsed, nullptr) << nfs_get_error(nfs);
  ASSERT_EQ(nfs_mount(nfs, parsed->server, parsed->path), 0) << nfs_get_error(nfs);
  nfsfh* fh = nullptr;
  ASSERT_EQ(nfs_creat(nfs, "/HighLevelLibnfsMountByUrl/hello", 0644, &fh), 0) << nfs_get_error(nfs);
  std::string text = "hello through libnfs";
  EXPECT_EQ(nfs_write(nfs, fh, text.size(), text.data()), static_cast<int>(text.size()));
  EXPECT_EQ(nfs_fsync(nfs, fh), 0);
  EXPECT_EQ(nfs_close(nfs, fh), 0);
  struct nfs_stat_64 st;
  ASSERT_EQ(nfs_stat64(nfs, "/HighLevelLibnfsMountByUrl/hello", &st), 0);
  EXPECT_EQ(st.nfs_size, text.size());
  ASSERT_EQ(nfs_open(nfs, "/HighLevelLibnfsMountByUrl/hello", O_RDONLY, &fh), 0);
  char buf[64] = {};
  EXPECT_EQ(nfs_read(nfs, fh, sizeof(buf), buf), static_cast<int>(text.size()));
  EXPECT_EQ(std::string(buf), text);
  nfs_close(nfs, fh);
  EXPECT_EQ(nfs_mkdir(nfs, "/HighLevelLibnfsMountByUrl/d"), 0);
  EXPECT_EQ(nfs_rename(nfs, "/HighLevelLibnfsMountByUrl/hello", "/HighLevelLibnfsMountByUrl/d/h"), 0);
  nfsdir* dir = nullptr;
  ASSERT_EQ(nfs_opendir(nfs, "/HighLevelLibnfsMountByUrl/d", &dir), 0);
  std::set<std::string> names;
  while (nfsdirent* e = nfs_readdir(nfs, dir)) names.insert(e->name);
  nfs_closedir(nfs, dir);
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "h"}));
  nfs_destroy_url(parsed);
  nfs_destroy_context(nfs);
}

// ---- Bad input over a raw socket.

TEST_F(NfsIntegrationTest, BadInputGetsRpcErrorsAndNeverStopsTheServer) {
  RawConnection raw(server_->port());
  ASSERT_TRUE(raw.connected());
  uint32_t xid = 0;
  ASSERT_TRUE(raw.SendRecord(Call(1, 123456, 1, 0)));
  EXPECT_EQ(ReplyStat(raw.ReadRecord(), &xid), 1u);  // PROG_UNAVAIL
  EXPECT_EQ(xid, 1u);
  ASSERT_TRUE(raw.SendRecord(Call(2, 100003, 4, 0)));
  EXPECT_EQ(ReplyStat(raw.ReadRecord()), 2u);  // PROG_MISMATCH
  ASSERT_TRUE(raw.SendRecord(Call(3, 100003, 3, 99)));
  EXPECT_EQ(ReplyStat(raw.ReadRecord()), 3u);  // PROC_UNAVAIL
  ASSERT_TRUE(raw.SendRecord(Call(4, 100003, 3, 1, "\0\0")));
  EXPECT_EQ(ReplyStat(raw.ReadRecord()), 4u);  // GARBAGE_ARGS: truncated handle
  std::string huge_length;
  XdrEncoder(&huge_length).U32(0xffffff00u);
  ASSERT_TRUE(raw.SendRecord(Call(5, 100003, 3, 1, huge_length)));
  EXPECT_EQ(ReplyStat(raw.ReadRecord()), 4u);  // GARBAGE_ARGS: hostile opaque length
  ASSERT_TRUE(raw.SendRecord(Call(6, 100005, 3, 1, huge_length)));
  EXPECT_EQ(ReplyStat(raw.ReadRecord()), 4u);  // MOUNT too
  std::string rpcvers3 = Call(7, 100003, 3, 0);
  rpcvers3[11] = 3;
  ASSERT_TRUE(raw.SendRecord(rpcvers3));
  EXPECT_EQ(ReplyStat(raw.ReadRecord()), 100u);  // MSG_DENIED, RPC_MISMATCH
  // The same connection still serves a good call.
  ASSERT_TRUE(raw.SendRecord(Call(8, 100003, 3, 0)));
  EXPECT_EQ(ReplyStat(raw.ReadRecord(), &xid), 0u);
  EXPECT_EQ(xid, 8u);

  // A record claiming 2 GiB closes the connection without an allocation.
  RawConnection oversized(server_->port());
  std::string header;
  XdrEncoder(&header).U32(0xfffffff0u);
  ASSERT_TRUE(oversized.Send(header + "xxxx"));
  EXPECT_TRUE(oversized.ClosedByPeer());

  // Random garbage on several connections.
  for (uint32_t seed = 0; seed < 8; seed++) {
    RawConnection junk(server_->port());
    junk.Send(RandomBytes(4096, seed));
  }
  // A truncated record then a hang-up.
  {
    RawConnection cut(server_->port());
    cut.Send(std::string("\x80\x00\x01\x00", 4) + "partial");
  }
  EXPECT_EQ(client_->GetAttr(root_), NFS3_OK);
  RawConnection after(server_->port());
  ASSERT_TRUE(after.SendRecord(Call(9, 100003, 3, 0)));
  EXPECT_EQ(ReplyStat(after.ReadRecord()), 0u);
}

TEST_F(NfsIntegrationTest, MultiFragmentRecord) {
  RawConnection raw(server_->port());
  std::string args;
  XdrEncoder(&args).Opaque(root_);
  std::string body = Call(77, 100003, 3, 1, args);  // GETATTR of the root
  std::string stream;
  XdrEncoder e(&stream);
  size_t half = body.size() / 2;
  e.U32(static_cast<uint32_t>(half));
  stream += body.substr(0, half);
  e.U32(0);  // an empty middle fragment is legal
  e.U32(0x80000000u | static_cast<uint32_t>(body.size() - half));
  stream += body.substr(half);
  ASSERT_TRUE(raw.Send(stream));
  std::string reply = raw.ReadRecord();
  uint32_t xid = 0;
  EXPECT_EQ(ReplyStat(reply, &xid), 0u);
  EXPECT_EQ(xid, 77u);
  XdrDecoder d(reply);
  d.U32(); d.U32(); d.U32(); d.U32(); d.Opaque(400); d.U32();
  EXPECT_EQ(d.U32(), 0u);  // NFS3_OK
  EXPECT_EQ(d.U32(), 2u);  // NF3DIR
}

// ---- Restarts.

TEST(NfsRestartTest, HandlesSurviveRestartAndStaleOnlyWhenGone) {
  ServerProcess server(/*durable_commit=*/true);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, kept, removed;
  {
    auto c = NfsClient::Connect(server.port());
    ASSERT_NE(c, nullptr);
    root = *c->Mount("/");
    ASSERT_EQ(c->Create(root, "kept", UNCHECKED, 0644, &kept), NFS3_OK);
    ASSERT_EQ(c->Write(kept, 0, "still here", FILE_SYNC), NFS3_OK);
    ASSERT_EQ(c->Create(root, "removed", UNCHECKED, 0644, &removed), NFS3_OK);
    ASSERT_EQ(c->Remove(root, "removed"), NFS3_OK);
  }
  ASSERT_TRUE(server.Stop()) << server.log();
  ASSERT_TRUE(server.Start()) << server.log();
  auto c = NfsClient::Connect(server.port());
  ASSERT_NE(c, nullptr);
  // No MNT: the old handles work as they are.
  std::string data;
  ASSERT_EQ(c->Read(kept, 0, 100, &data), NFS3_OK);
  EXPECT_EQ(data, "still here");
  EXPECT_EQ(c->GetAttr(root), NFS3_OK);
  EXPECT_EQ(c->GetAttr(removed), NFS3ERR_STALE);
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsRestartTest, CommittedDataSurvivesSigkill) {
  ServerProcess server(/*durable_commit=*/true);
  ASSERT_TRUE(server.Start()) << server.log();
  std::string root, f;
  std::string payload = RandomBytes(3 << 20, 42);
  uint64_t verifier_before = 0, verifier_after = 0;
  {
    auto c = NfsClient::Connect(server.port());
    ASSERT_NE(c, nullptr);
    root = *c->Mount("/");
    ASSERT_EQ(c->Create(root, "committed", UNCHECKED, 0644, &f), NFS3_OK);
    for (size_t off = 0; off < payload.size(); off += 1 << 20) {
      stable_how committed;
      ASSERT_EQ(c->Write(f, off, payload.substr(off, 1 << 20), UNSTABLE, &committed, &verifier_before),
                NFS3_OK);
      EXPECT_EQ(committed, UNSTABLE);
    }
    uint64_t commit_verifier = 0;
    ASSERT_EQ(c->Commit(f, &commit_verifier), NFS3_OK);
    EXPECT_EQ(commit_verifier, verifier_before);
  }
  server.Kill();
  ASSERT_TRUE(server.Start()) << server.log();
  auto c = NfsClient::Connect(server.port());
  ASSERT_NE(c, nullptr);
  std::string back;
  for (size_t off = 0; off < payload.size(); off += 1 << 20) {
    std::string piece;
    ASSERT_EQ(c->Read(f, off, 1 << 20, &piece), NFS3_OK);
    back += piece;
  }
  EXPECT_TRUE(back == payload) << "read back " << back.size() << " bytes";
  // A new verifier tells clients to resend anything they had not committed.
  ASSERT_EQ(c->Write(f, 0, "x", UNSTABLE, nullptr, &verifier_after), NFS3_OK);
  EXPECT_NE(verifier_after, verifier_before);
  ASSERT_TRUE(server.Stop()) << server.log();
}

TEST(NfsAsyncModeTest, WritesAreAnsweredFileSync) {
  ServerProcess server(/*durable_commit=*/false);
  ASSERT_TRUE(server.Start()) << server.log();
  auto c = NfsClient::Connect(server.port());
  ASSERT_NE(c, nullptr);
  std::string root = *c->Mount("/"), f;
  ASSERT_EQ(c->Create(root, "f", UNCHECKED, 0644, &f), NFS3_OK);
  stable_how committed = UNSTABLE;
  ASSERT_EQ(c->Write(f, 0, "fast", UNSTABLE, &committed), NFS3_OK);
  EXPECT_EQ(committed, FILE_SYNC);
  EXPECT_EQ(c->Commit(f), NFS3_OK);
  c.reset();
  // A clean stop flushes: the data is there after a restart.
  ASSERT_TRUE(server.Stop()) << server.log();
  ASSERT_TRUE(server.Start()) << server.log();
  c = NfsClient::Connect(server.port());
  ASSERT_NE(c, nullptr);
  std::string data;
  ASSERT_EQ(c->Read(f, 0, 10, &data), NFS3_OK);
  EXPECT_EQ(data, "fast");
  ASSERT_TRUE(server.Stop()) << server.log();
}

}  // namespace
}  // namespace pail::nfs::test
