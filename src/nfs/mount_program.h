// MOUNT version 3 (RFC 1813 appendix I): how a client gets the root handle.
//
// The whole filesystem is one export, "/". MNT also accepts a path below it
// ("/a/b"), resolved one component at a time with the caller's credentials,
// and answers with that directory's handle and AUTH_SYS as the only flavor.
// DUMP lists the mounts this process has seen (host, path), at most
// kMaxMountEntries of them, forgetting the oldest; UMNT and UMNTALL remove
// entries. The list is advisory, as in every implementation: handles work
// without a MNT. EXPORT lists "/" with the allowed client blocks; MNT from a
// client the access policy refuses gets MNT3ERR_ACCES.
#pragma once

#include <deque>
#include "util/mutex.h"
#include <string>
#include <vector>

#include "fs/filesystem.h"
#include "nfs/program_numbers.h"
#include "nfs/rpc_dispatcher.h"

namespace pail::nfs {

constexpr size_t kMaxMountEntries = 1024;
// MNTPATHLEN and MNTNAMLEN.
constexpr uint32_t kMaxMountPath = 1024;
constexpr uint32_t kMaxMountHostName = 255;
constexpr char kExportPath[] = "/";

class MountProgram : public RpcProgram {
 public:
  // `export_clients`: the allow-list as EXPORT shows it ("127.0.0.0/8", ...).
  MountProgram(fs::FileSystem& fs, std::vector<std::string> export_clients)
      : fs_(fs), export_clients_(std::move(export_clients)) {}

  uint32_t program() const override { return kMountProgram; }
  uint32_t min_version() const override { return kMountVersion3; }
  uint32_t max_version() const override { return kMountVersion3; }
  AcceptStat Call(const RpcCall& call, const CallContext& context, XdrDecoder& args,
                  XdrEncoder& results) override;
  bool AnswerRefusedClient(const RpcCall& call, XdrEncoder& results) override;

 private:
  struct MountEntry {
    std::string host;
    std::string path;
  };

  void Mount(const RpcCall& call, const std::string& host, std::string_view path, XdrEncoder& out);

  fs::FileSystem& fs_;
  const std::vector<std::string> export_clients_;
  Mutex mu_;
  std::deque<MountEntry> mounts_ GUARDED_BY(mu_);
};

}  // namespace pail::nfs
