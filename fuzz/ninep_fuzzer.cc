// libFuzzer target: 9P2000.L message decoding and handling. The input is a
// byte stream of messages (size[4] type[1] tag[2] ...), cut by their size
// fields as the transport does (a size below the header or above msize ends
// the stream, as it closes a connection), and each message is handled by a
// fresh Session on a real filesystem core over an in-memory bucket, so
// decoded requests also execute and encode their replies.
// Nothing may crash, hang or leak; every reply must carry its own length
// and the request's tag.
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
#include "fs/byte_range_locks.h"
#include "fs/filesystem.h"
#include "ninep/session.h"
#include "objstore/memory_store.h"

namespace {

// Small, so a fuzzer-built stream can exceed it.
constexpr uint32_t kFuzzMsize = 64 * 1024;

struct Target {
  std::unique_ptr<pail::engine::Engine> engine;
  std::unique_ptr<pail::fs::FileSystem> fs;
  pail::fs::ByteRangeLocks locks;
};

Target* MakeTarget() {
  auto* t = new Target;
  pail::engine::EngineOptions options;
  options.store = std::make_shared<pail::MemoryStore>();
  std::string cache = (std::filesystem::temp_directory_path() /
                       ("pail-ninep-fuzz-" + std::to_string(getpid()))).string();
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
  return t;
}

uint32_t Load32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Target* target = DeleteAtExit(MakeTarget());
  static uint64_t session_id = 0;
  pail::ninep::SessionOptions options;
  options.max_msize = kFuzzMsize;
  options.max_fids = 64;
  pail::ninep::Session session(*target->fs, target->locks, options, ++session_id);
  size_t pos = 0;
  while (size - pos >= 4) {
    uint32_t message_size = Load32(data + pos);
    if (message_size < pail::ninep::kHeaderBytes || message_size > session.msize() ||
        message_size > size - pos) {
      break;
    }
    std::string message(reinterpret_cast<const char*>(data + pos), message_size);
    pos += message_size;
    std::string reply = session.Handle(message);
    if (reply.size() < pail::ninep::kHeaderBytes ||
        Load32(reinterpret_cast<const uint8_t*>(reply.data())) != reply.size() ||
        reply.size() > session.msize() + 0u || reply.compare(5, 2, message, 5, 2) != 0) {
      abort();
    }
  }
  return 0;
}
