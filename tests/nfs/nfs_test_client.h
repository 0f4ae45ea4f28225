// A synchronous NFSv3 / MOUNT / port mapper client for tests, on libnfs's
// raw RPC API (the same XDR code real libnfs users run), one TCP connection
// per client, AUTH_SYS with the identity given.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

extern "C" {
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
#include <nfsc/libnfs-raw-portmap.h>
}

namespace pail::nfs::test {

struct Identity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
};

// The views libnfs structs take for a handle we keep as bytes.
inline nfs_fh3 Fh(const std::string& handle) {
  nfs_fh3 fh;
  fh.data.data_len = static_cast<u_int>(handle.size());
  fh.data.data_val = const_cast<char*>(handle.data());
  return fh;
}
inline std::string FhBytes(const nfs_fh3& fh) { return std::string(fh.data.data_val, fh.data.data_len); }

class RpcClient {
 public:
  // Connects to 127.0.0.1:port for `program`/`version`; nullptr on failure.
  static std::unique_ptr<RpcClient> Connect(uint16_t port, int program, int version,
                                            const Identity& who = {});
  ~RpcClient();

  // Runs one call: `issue` queues it with libnfs's callback and cookie;
  // `on_reply` sees the decoded reply before libnfs frees it. False when the
  // call failed at the RPC level (then error() says why).
  bool Run(const std::function<int(rpc_context*, rpc_cb, void*)>& issue,
           const std::function<void(void*)>& on_reply);

  template <typename Res, typename Args>
  bool Call(int (*fn)(rpc_context*, rpc_cb, Args*, void*), Args* args,
            const std::function<void(Res*)>& on_reply) {
    return Run([&](rpc_context* rpc, rpc_cb cb, void* cookie) { return fn(rpc, cb, args, cookie); },
               [&](void* data) { on_reply(static_cast<Res*>(data)); });
  }

  rpc_context* rpc() { return rpc_; }
  const std::string& error() const { return error_; }

 private:
  explicit RpcClient(rpc_context* rpc) : rpc_(rpc) {}
  bool Wait(const bool& done);

  rpc_context* rpc_;
  std::string error_;
};

// MOUNT + NFS on one port, with helpers for the calls most tests make.
class NfsClient {
 public:
  static std::unique_ptr<NfsClient> Connect(uint16_t port, const Identity& who = {});

  RpcClient& mount() { return *mount_; }
  RpcClient& nfs() { return *nfs_; }

  // MNT; the root handle, or nullopt with *status set.
  std::optional<std::string> Mount(const std::string& path, int* status = nullptr);

  int GetAttr(const std::string& fh, fattr3* attr = nullptr);
  int Lookup(const std::string& dir, const std::string& name, std::string* fh = nullptr,
             fattr3* attr = nullptr);
  // UNCHECKED/GUARDED with the mode; EXCLUSIVE with `verifier`.
  int Create(const std::string& dir, const std::string& name, createmode3 how, uint32_t mode,
             std::string* fh = nullptr, uint64_t verifier = 0, fattr3* attr = nullptr);
  int Mkdir(const std::string& dir, const std::string& name, uint32_t mode,
            std::string* fh = nullptr);
  int Write(const std::string& fh, uint64_t offset, const std::string& data, stable_how stable,
            stable_how* committed = nullptr, uint64_t* verifier = nullptr,
            uint32_t* count = nullptr);
  int Read(const std::string& fh, uint64_t offset, uint32_t count, std::string* data,
           bool* eof = nullptr);
  int Commit(const std::string& fh, uint64_t* verifier = nullptr);
  int Remove(const std::string& dir, const std::string& name);
  int Rmdir(const std::string& dir, const std::string& name);
  int SetMode(const std::string& fh, uint32_t mode);
  // One entry of a READDIR(PLUS) reply, and the bytes RFC 1813 encodes it in.
  struct ListedEntry {
    std::string name;
    uint64_t fileid = 0;
    uint64_t cookie = 0;
    size_t xdr_bytes = 0;
  };
  // One READDIR (or READDIRPLUS, dircount = maxcount = count) from `cookie`.
  int ReadDirPage(const std::string& dir, bool plus, uint64_t cookie, uint32_t count,
                  std::vector<ListedEntry>* page, bool* eof);
  // READDIR (or READDIRPLUS) until eof: name -> fileid, in order;
  // `most_in_one_reply`, when given, the most entries a reply carried.
  int ListDir(const std::string& dir, bool plus, std::vector<std::pair<std::string, uint64_t>>* out,
              uint32_t count = 4096, size_t* most_in_one_reply = nullptr);

 private:
  std::unique_ptr<RpcClient> mount_;
  std::unique_ptr<RpcClient> nfs_;
};

sattr3 NoAttrs();

}  // namespace pail::nfs::test
