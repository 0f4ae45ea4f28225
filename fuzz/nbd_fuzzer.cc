// libFuzzer target: the NBD handshake (client flags, option headers and
// every option's data) and transmission (request headers, admission,
// payloads, every command), driven in the order a connection drives them,
// against a real filesystem core on an in-memory bucket with exports in
// /.nbd/. Replies are checked to be well formed.
//
// Input format: the bytes a client would send after reading the greeting:
// client flags, options until one starts transmission (or the stream
// ends), then requests with their payloads.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "delete_at_exit.h"
#include "engine/engine.h"
#include "fs/filesystem.h"
#include "nbd/exports.h"
#include "nbd/handshake.h"
#include "nbd/protocol.h"
#include "nbd/transmission.h"
#include "nbd/wire.h"
#include "objstore/memory_store.h"

namespace {

using namespace pail::nbd;

struct Target {
  std::unique_ptr<pail::engine::Engine> engine;
  std::unique_ptr<pail::fs::FileSystem> fs;
  std::unique_ptr<Exports> exports;
};

Target* MakeTarget() {
  auto* t = new Target;
  pail::engine::EngineOptions options;
  options.store = std::make_shared<pail::MemoryStore>();
  std::string cache = (std::filesystem::temp_directory_path() /
                       ("pail-nbd-fuzz-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(cache);
  options.cache_dir = cache;
  options.column_families = pail::fs::FileSystem::ColumnFamilies();
  auto engine = pail::engine::Engine::Open(options);
  if (!engine.ok()) abort();
  t->engine = std::move(engine).value();
  auto fs = pail::fs::FileSystem::Open(*t->engine, pail::fs::FsOptions{});
  if (!fs.ok()) abort();
  t->fs = std::move(fs).value();
  t->exports = std::make_unique<Exports>(*t->fs);
  if (!t->exports->EnsureDirectory().ok()) abort();
  // Two exports (1 MiB with some data, and an empty one) and a directory
  // that must never serve as one.
  auto root = pail::fs::Credentials::Root();
  auto dir = t->fs->Lookup(root, pail::fs::kRootIno, kExportDirectory);
  if (!dir.ok()) abort();
  for (const char* name : {"disk", "empty"}) {
    auto made = t->fs->Create(root, dir->ino, name, 0600, {});
    if (!made.ok()) abort();
    if (std::string(name) == "disk") {
      pail::fs::SetAttrRequest req;
      req.size = 1 << 20;
      if (!t->fs->SetAttr(root, made->attr.ino, req).ok()) abort();
      if (!t->fs->Write(root, made->attr.ino, 4096, std::string(5000, 'x')).ok()) abort();
    }
  }
  if (!t->fs->Mkdir(root, dir->ino, "subdir", 0755).ok()) abort();
  return t;
}

// Takes n bytes off the front of `in`.
bool Take(std::string_view* in, size_t n, std::string_view* out) {
  if (in->size() < n) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

void CheckOptionReplies(std::string_view replies, uint32_t option) {
  WireReader r(replies);
  while (r.remaining() > 0) {
    if (r.U64() != kOptionReplyMagic || r.U32() != option) abort();
    r.U32();
    r.Bytes(r.U32());
    if (!r.ok()) abort();
  }
}

void CheckReply(const std::string& reply, const Request& request, bool structured) {
  WireReader r(reply);
  uint32_t magic = r.U32();
  if (structured) {
    if (magic != kStructuredReplyMagic) abort();
    r.U16();
    r.U16();
    if (r.U64() != request.cookie) abort();
    uint32_t length = r.U32();
    if (!r.ok() || r.remaining() != length) abort();
  } else {
    if (magic != kSimpleReplyMagic) abort();
    uint32_t error = r.U32();
    if (r.U64() != request.cookie || !r.ok()) abort();
    size_t data = (error == 0 && request.type == kCmdRead) ? request.length : 0;
    if (r.remaining() != data) abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Target* target = DeleteAtExit(MakeTarget());
  std::string_view in(reinterpret_cast<const char*>(data), size);
  Handshake handshake(*target->exports);
  std::string_view piece;
  if (!Take(&in, 4, &piece) || !handshake.SetClientFlags(WireReader(piece).U32())) return 0;
  for (;;) {
    if (!Take(&in, kOptionHeaderBytes, &piece)) return 0;
    OptionHeader header = DecodeOptionHeader(piece);
    if (header.magic != kOptionMagic || header.length > kMaxOptionBytes) return 0;
    if (!Take(&in, header.length, &piece)) return 0;
    std::string replies;
    OptionOutcome outcome = handshake.HandleOption(header.option, piece, &replies);
    if (header.option != kOptExportName) CheckOptionReplies(replies, header.option);
    if (outcome == OptionOutcome::kClose) return 0;
    if (outcome == OptionOutcome::kTransmit) break;
  }
  const Session& session = handshake.session();
  Transmission transmission(*target->fs, session);
  for (;;) {
    if (!Take(&in, kRequestHeaderBytes, &piece)) return 0;
    Request request = DecodeRequest(piece);
    Admission admission = Admit(request);
    if (admission.close) return 0;
    if (!Take(&in, admission.payload, &piece)) return 0;
    Outcome outcome = transmission.Execute(request, piece);
    if (request.type == kCmdDisc) {
      if (!outcome.reply.empty()) abort();
      return 0;
    }
    // A READ's data goes out right behind its header.
    CheckReply(outcome.reply + std::string(outcome.data.view()), request,
               session.structured_replies);
    if (outcome.close_after) return 0;
  }
}
