// libFuzzer target: RPC record marking, call headers, credentials and every
// MOUNT, port mapper and NFSv3 argument decoder, run against a real
// filesystem core on an in-memory bucket (so decoded calls also execute and
// encode their replies).
//
// Input format: the first byte picks the path.
//  - even: the rest is one RPC message, dispatched as is;
//  - odd:  the rest is a TCP byte stream, cut into records by the record
//          marking assembler (with a small cap, so oversized-record handling
//          is reached) and each record dispatched.
// Nothing here may crash, hang or leak; replies are checked to carry a
// record mark that matches their length.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <memory>
#include <string>

#include "delete_at_exit.h"
#include "engine/engine.h"
#include "fs/filesystem.h"
#include "nfs/mount_program.h"
#include "nfs/nfs3_program.h"
#include "nfs/portmap_program.h"
#include "nfs/record_assembler.h"
#include "nfs/rpc_dispatcher.h"
#include "objstore/memory_store.h"

namespace {

// Small enough that a fuzzer-built stream can exceed it.
constexpr size_t kFuzzRecordCap = 64 * 1024;

struct Target {
  std::unique_ptr<pail::engine::Engine> engine;
  std::unique_ptr<pail::fs::FileSystem> fs;
  std::unique_ptr<pail::nfs::Nfs3Program> nfs;
  std::unique_ptr<pail::nfs::MountProgram> mount;
  pail::nfs::PortmapProgram portmap;
  std::unique_ptr<pail::nfs::RpcDispatcher> dispatcher;
};

Target* MakeTarget() {
  auto* t = new Target;
  pail::engine::EngineOptions options;
  options.store = std::make_shared<pail::MemoryStore>();
  std::string cache = (std::filesystem::temp_directory_path() /
                       ("pail-nfs-fuzz-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(cache);
  options.cache_dir = cache;
  options.column_families = pail::fs::FileSystem::ColumnFamilies();
  auto engine = pail::engine::Engine::Open(options);
  if (!engine.ok()) {
    fprintf(stderr, "fuzzer setup: %s\n", engine.status().ToString().c_str());
    abort();
  }
  t->engine = std::move(engine).value();
  auto fs = pail::fs::FileSystem::Open(*t->engine, pail::fs::FsOptions{});
  if (!fs.ok()) {
    fprintf(stderr, "fuzzer setup: %s\n", fs.status().ToString().c_str());
    abort();
  }
  t->fs = std::move(fs).value();
  t->nfs = std::make_unique<pail::nfs::Nfs3Program>(*t->fs, /*durable_commit=*/false, 42);
  // Identities as sent, so the fuzzer reaches root's paths through the core;
  // a second peer address (input bit 1) exercises the refusal path.
  pail::server::AccessPolicy policy;
  policy.squash = pail::server::Squash::kNone;
  t->mount = std::make_unique<pail::nfs::MountProgram>(*t->fs, policy.AllowedClientStrings());
  t->dispatcher = std::make_unique<pail::nfs::RpcDispatcher>(policy);
  t->dispatcher->Register(&t->portmap);
  t->dispatcher->Register(t->mount.get());
  t->dispatcher->Register(t->nfs.get());
  return t;
}

void CheckReply(const std::optional<std::string>& reply) {
  if (!reply) return;
  if (reply->size() < 4) abort();
  pail::nfs::XdrDecoder d(*reply);
  uint32_t mark = d.U32();
  if (mark != (pail::nfs::kLastFragmentBit | (reply->size() - 4))) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Target* target = DeleteAtExit(MakeTarget());
  if (size == 0) return 0;
  pail::nfs::CallContext context;
  context.local_port = 2049;
  context.peer_address = (data[0] & 2) ? "192.0.2.1" : "127.0.0.1";
  context.peer_port = 40000;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  size_t length = size - 1;
  if ((data[0] & 1) == 0) {
    std::string_view record(bytes, length);
    if (target->dispatcher->Examine(record).reply_bytes_bound > (16u << 20)) abort();
    CheckReply(target->dispatcher->Dispatch(record, context));
    return 0;
  }
  pail::nfs::RecordAssembler assembler(kFuzzRecordCap);
  size_t offset = 0;
  while (offset < length) {
    bool ready = false;
    pail::Result<size_t> used = assembler.Feed(bytes + offset, length - offset, &ready);
    if (!used.ok()) break;  // the server closes the connection here
    offset += *used;
    if (ready) CheckReply(target->dispatcher->Dispatch(assembler.TakeRecord(), context));
  }
  return 0;
}
