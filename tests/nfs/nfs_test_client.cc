#include "nfs_test_client.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace pail::nfs::test {

namespace {

constexpr auto kCallTimeout = std::chrono::seconds(30);

struct Pending {
  bool done = false;
  int status = RPC_STATUS_ERROR;
  std::string error;
  const std::function<void(void*)>* on_reply = nullptr;
};

void Complete(rpc_context*, int status, void* data, void* cookie) {
  auto* pending = static_cast<Pending*>(cookie);
  pending->done = true;
  pending->status = status;
  if (status == RPC_STATUS_SUCCESS) {
    if (pending->on_reply && *pending->on_reply) (*pending->on_reply)(data);
  } else if (data != nullptr && status == RPC_STATUS_ERROR) {
    pending->error = static_cast<const char*>(data);
  } else {
    pending->error = "rpc status " + std::to_string(status);
  }
}

}  // namespace

sattr3 NoAttrs() {
  sattr3 s;
  std::memset(&s, 0, sizeof(s));
  return s;
}

std::unique_ptr<RpcClient> RpcClient::Connect(uint16_t port, int program, int version,
                                              const Identity& who) {
  rpc_context* rpc = rpc_init_context();
  if (rpc == nullptr) return nullptr;
  std::unique_ptr<RpcClient> client(new RpcClient(rpc));
  std::vector<uint32_t> groups = who.groups;
  rpc_set_auth(rpc, libnfs_authunix_create("pail-test", who.uid, who.gid,
                                           static_cast<uint32_t>(groups.size()), groups.data()));
  Pending pending;
  if (rpc_connect_port_async(rpc, "127.0.0.1", port, program, version, Complete, &pending) != 0) {
    return nullptr;
  }
  if (!client->Wait(pending.done) || pending.status != RPC_STATUS_SUCCESS) return nullptr;
  return client;
}

RpcClient::~RpcClient() { rpc_destroy_context(rpc_); }

bool RpcClient::Wait(const bool& done) {
  auto deadline = std::chrono::steady_clock::now() + kCallTimeout;
  while (!done) {
    if (std::chrono::steady_clock::now() > deadline) {
      error_ = "timed out";
      return false;
    }
    pollfd pfd{rpc_get_fd(rpc_), static_cast<short>(rpc_which_events(rpc_)), 0};
    if (poll(&pfd, 1, 100) < 0) return false;
    if (rpc_service(rpc_, pfd.revents) < 0) {
      error_ = rpc_get_error(rpc_) ? rpc_get_error(rpc_) : "rpc_service failed";
      return done;
    }
  }
  return true;
}

bool RpcClient::Run(const std::function<int(rpc_context*, rpc_cb, void*)>& issue,
                    const std::function<void(void*)>& on_reply) {
  Pending pending;
  pending.on_reply = &on_reply;
  if (issue(rpc_, Complete, &pending) != 0) {
    error_ = rpc_get_error(rpc_) ? rpc_get_error(rpc_) : "could not queue the call";
    return false;
  }
  if (!Wait(pending.done)) return false;
  error_ = pending.error;
  return pending.status == RPC_STATUS_SUCCESS;
}

std::unique_ptr<NfsClient> NfsClient::Connect(uint16_t port, const Identity& who) {
  auto client = std::make_unique<NfsClient>();
  client->mount_ = RpcClient::Connect(port, MOUNT_PROGRAM, MOUNT_V3, who);
  client->nfs_ = RpcClient::Connect(port, NFS_PROGRAM, NFS_V3, who);
  if (!client->mount_ || !client->nfs_) return nullptr;
  return client;
}

std::optional<std::string> NfsClient::Mount(const std::string& path, int* status) {
  std::optional<std::string> root;
  int result = -1;
  bool ok = mount_->Run(
      [&](rpc_context* rpc, rpc_cb cb, void* cookie) {
        return rpc_mount3_mnt_async(rpc, cb, const_cast<char*>(path.c_str()), cookie);
      },
      [&](void* data) {
        auto* res = static_cast<mountres3*>(data);
        result = res->fhs_status;
        if (res->fhs_status == MNT3_OK) {
          const auto& fh = res->mountres3_u.mountinfo.fhandle;
          root = std::string(fh.fhandle3_val, fh.fhandle3_len);
        }
      });
  if (status) *status = ok ? result : -1;
  return root;
}

int NfsClient::GetAttr(const std::string& fh, fattr3* attr) {
  GETATTR3args args{Fh(fh)};
  int status = -1;
  nfs_->Call<GETATTR3res>(rpc_nfs3_getattr_async, &args, [&](GETATTR3res* res) {
    status = res->status;
    if (res->status == NFS3_OK && attr) *attr = res->GETATTR3res_u.resok.obj_attributes;
  });
  return status;
}

int NfsClient::Lookup(const std::string& dir, const std::string& name, std::string* fh,
                      fattr3* attr) {
  LOOKUP3args args;
  args.what.dir = Fh(dir);
  args.what.name = const_cast<char*>(name.c_str());
  int status = -1;
  nfs_->Call<LOOKUP3res>(rpc_nfs3_lookup_async, &args, [&](LOOKUP3res* res) {
    status = res->status;
    if (res->status != NFS3_OK) return;
    if (fh) *fh = FhBytes(res->LOOKUP3res_u.resok.object);
    const post_op_attr& a = res->LOOKUP3res_u.resok.obj_attributes;
    if (attr && a.attributes_follow) *attr = a.post_op_attr_u.attributes;
  });
  return status;
}

int NfsClient::Create(const std::string& dir, const std::string& name, createmode3 how,
                      uint32_t mode, std::string* fh, uint64_t verifier, fattr3* attr) {
  CREATE3args args;
  std::memset(&args, 0, sizeof(args));
  args.where.dir = Fh(dir);
  args.where.name = const_cast<char*>(name.c_str());
  args.how.mode = how;
  if (how == EXCLUSIVE) {
    for (int i = 0; i < 8; i++) args.how.createhow3_u.verf[i] = static_cast<char>(verifier >> (56 - 8 * i));
  } else {
    args.how.createhow3_u.obj_attributes = NoAttrs();
    args.how.createhow3_u.obj_attributes.mode.set_it = 1;
    args.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = mode;
  }
  int status = -1;
  nfs_->Call<CREATE3res>(rpc_nfs3_create_async, &args, [&](CREATE3res* res) {
    status = res->status;
    if (res->status != NFS3_OK) return;
    const CREATE3resok& ok = res->CREATE3res_u.resok;
    if (fh && ok.obj.handle_follows) *fh = FhBytes(ok.obj.post_op_fh3_u.handle);
    if (attr && ok.obj_attributes.attributes_follow) *attr = ok.obj_attributes.post_op_attr_u.attributes;
  });
  return status;
}

int NfsClient::Mkdir(const std::string& dir, const std::string& name, uint32_t mode,
                     std::string* fh) {
  MKDIR3args args;
  args.where.dir = Fh(dir);
  args.where.name = const_cast<char*>(name.c_str());
  args.attributes = NoAttrs();
  args.attributes.mode.set_it = 1;
  args.attributes.mode.set_mode3_u.mode = mode;
  int status = -1;
  nfs_->Call<MKDIR3res>(rpc_nfs3_mkdir_async, &args, [&](MKDIR3res* res) {
    status = res->status;
    if (res->status == NFS3_OK && fh && res->MKDIR3res_u.resok.obj.handle_follows) {
      *fh = FhBytes(res->MKDIR3res_u.resok.obj.post_op_fh3_u.handle);
    }
  });
  return status;
}

int NfsClient::Write(const std::string& fh, uint64_t offset, const std::string& data,
                     stable_how stable, stable_how* committed, uint64_t* verifier,
                     uint32_t* count) {
  WRITE3args args;
  args.file = Fh(fh);
  args.offset = offset;
  args.count = static_cast<count3>(data.size());
  args.stable = stable;
  args.data.data_len = static_cast<u_int>(data.size());
  args.data.data_val = const_cast<char*>(data.data());
  int status = -1;
  nfs_->Call<WRITE3res>(rpc_nfs3_write_async, &args, [&](WRITE3res* res) {
    status = res->status;
    if (res->status != NFS3_OK) return;
    const WRITE3resok& ok = res->WRITE3res_u.resok;
    if (committed) *committed = ok.committed;
    if (count) *count = ok.count;
    if (verifier) std::memcpy(verifier, ok.verf, 8);
  });
  return status;
}

int NfsClient::Read(const std::string& fh, uint64_t offset, uint32_t count, std::string* data,
                    bool* eof) {
  READ3args args;
  args.file = Fh(fh);
  args.offset = offset;
  args.count = count;
  int status = -1;
  nfs_->Call<READ3res>(rpc_nfs3_read_async, &args, [&](READ3res* res) {
    status = res->status;
    if (res->status != NFS3_OK) return;
    const READ3resok& ok = res->READ3res_u.resok;
    if (data) data->assign(ok.data.data_val, ok.data.data_len);
    if (eof) *eof = ok.eof != 0;
  });
  return status;
}

int NfsClient::Commit(const std::string& fh, uint64_t* verifier) {
  COMMIT3args args;
  args.file = Fh(fh);
  args.offset = 0;
  args.count = 0;
  int status = -1;
  nfs_->Call<COMMIT3res>(rpc_nfs3_commit_async, &args, [&](COMMIT3res* res) {
    status = res->status;
    if (res->status == NFS3_OK && verifier) std::memcpy(verifier, res->COMMIT3res_u.resok.verf, 8);
  });
  return status;
}

int NfsClient::Remove(const std::string& dir, const std::string& name) {
  REMOVE3args args;
  args.object.dir = Fh(dir);
  args.object.name = const_cast<char*>(name.c_str());
  int status = -1;
  nfs_->Call<REMOVE3res>(rpc_nfs3_remove_async, &args, [&](REMOVE3res* res) { status = res->status; });
  return status;
}

int NfsClient::Rmdir(const std::string& dir, const std::string& name) {
  RMDIR3args args;
  args.object.dir = Fh(dir);
  args.object.name = const_cast<char*>(name.c_str());
  int status = -1;
  nfs_->Call<RMDIR3res>(rpc_nfs3_rmdir_async, &args, [&](RMDIR3res* res) { status = res->status; });
  return status;
}

int NfsClient::SetMode(const std::string& fh, uint32_t mode) {
  SETATTR3args args;
  std::memset(&args, 0, sizeof(args));
  args.object = Fh(fh);
  args.new_attributes.mode.set_it = 1;
  args.new_attributes.mode.set_mode3_u.mode = mode;
  int status = -1;
  nfs_->Call<SETATTR3res>(rpc_nfs3_setattr_async, &args, [&](SETATTR3res* res) { status = res->status; });
  return status;
}

int NfsClient::ReadDirPage(const std::string& dir, bool plus, uint64_t cookie, uint32_t count,
                           std::vector<ListedEntry>* page, bool* eof) {
  page->clear();
  *eof = false;
  auto padded = [](size_t n) { return (n + 3) / 4 * 4; };
  // "an entry follows", fileid, name, cookie.
  auto entry_bytes = [&](const char* name) { return 4 + 8 + 4 + padded(std::strlen(name)) + 8; };
  int status = -1;
  bool called;
  if (plus) {
    READDIRPLUS3args args;
    std::memset(&args, 0, sizeof(args));
    args.dir = Fh(dir);
    args.cookie = cookie;
    args.dircount = count;
    args.maxcount = count;
    called = nfs_->Call<READDIRPLUS3res>(rpc_nfs3_readdirplus_async, &args, [&](READDIRPLUS3res* res) {
      status = res->status;
      if (res->status != NFS3_OK) return;
      for (entryplus3* e = res->READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
        size_t bytes = entry_bytes(e->name) + 4 + 4;  // and the two "follows" flags
        if (e->name_attributes.attributes_follow) bytes += 84;
        if (e->name_handle.handle_follows) {
          bytes += 4 + padded(e->name_handle.post_op_fh3_u.handle.data.data_len);
        }
        page->push_back({e->name, e->fileid, e->cookie, bytes});
      }
      *eof = res->READDIRPLUS3res_u.resok.reply.eof;
    });
  } else {
    READDIR3args args;
    std::memset(&args, 0, sizeof(args));
    args.dir = Fh(dir);
    args.cookie = cookie;
    args.count = count;
    called = nfs_->Call<READDIR3res>(rpc_nfs3_readdir_async, &args, [&](READDIR3res* res) {
      status = res->status;
      if (res->status != NFS3_OK) return;
      for (entry3* e = res->READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
        page->push_back({e->name, e->fileid, e->cookie, entry_bytes(e->name)});
      }
      *eof = res->READDIR3res_u.resok.reply.eof;
    });
  }
  return called ? status : -1;
}

int NfsClient::ListDir(const std::string& dir, bool plus,
                       std::vector<std::pair<std::string, uint64_t>>* out, uint32_t count,
                       size_t* most_in_one_reply) {
  out->clear();
  if (most_in_one_reply != nullptr) *most_in_one_reply = 0;
  uint64_t cookie = 0;
  bool eof = false;
  std::vector<ListedEntry> page;
  while (!eof) {
    int status = ReadDirPage(dir, plus, cookie, count, &page, &eof);
    if (status != NFS3_OK) return status;
    for (const ListedEntry& e : page) {
      out->emplace_back(e.name, e.fileid);
      cookie = e.cookie;
    }
    if (most_in_one_reply != nullptr) *most_in_one_reply = std::max(*most_in_one_reply, page.size());
  }
  return NFS3_OK;
}

}  // namespace pail::nfs::test
