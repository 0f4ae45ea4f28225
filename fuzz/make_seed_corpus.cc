// make_seed_corpus OUT_DIR: writes the seed corpus of nfs_rpc_fuzzer, one
// well-formed call per procedure of the port mapper, MOUNT and NFSv3 (as a
// single message, and as a record-marked stream split into fragments), plus
// a few RPC-level oddities. The corpus is checked in under fuzz/corpus;
// re-run this after changing the input format.
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nfs/file_handle.h"
#include "nfs/program_numbers.h"
#include "nfs/record_assembler.h"
#include "nfs/rpc.h"
#include "nfs/xdr.h"

using pail::nfs::XdrEncoder;

namespace {

std::string Header(uint32_t xid, uint32_t program, uint32_t version, uint32_t procedure) {
  std::string out;
  XdrEncoder e(&out);
  e.U32(xid);
  e.U32(pail::nfs::kMsgCall);
  e.U32(pail::nfs::kRpcVersion);
  e.U32(program);
  e.U32(version);
  e.U32(procedure);
  std::string cred;
  XdrEncoder c(&cred);
  c.U32(0);          // stamp
  c.String("seed");  // machine name
  c.U32(0);          // uid
  c.U32(0);          // gid
  c.U32(1);          // one supplementary group
  c.U32(10);
  e.U32(pail::nfs::kAuthSys);
  e.Opaque(cred);
  e.U32(pail::nfs::kAuthNone);
  e.U32(0);
  return out;
}

std::string Handle(uint64_t ino) { return pail::nfs::EncodeFileHandle(ino, 1); }

// sattr3 setting the mode, nothing else.
void ModeOnly(XdrEncoder& e, uint32_t mode) {
  e.Bool(true);
  e.U32(mode);
  for (int i = 0; i < 3; i++) e.Bool(false);  // uid, gid, size
  e.U32(0);                                    // atime: don't change
  e.U32(0);                                    // mtime
}

struct Seed {
  std::string name;
  std::string message;
};

std::vector<Seed> Seeds() {
  using namespace pail::nfs;
  std::vector<Seed> seeds;
  uint32_t xid = 1;
  auto add = [&](const std::string& name, uint32_t prog, uint32_t vers, uint32_t proc,
                 const std::function<void(XdrEncoder&)>& args) {
    std::string m = Header(xid++, prog, vers, proc);
    XdrEncoder e(&m);
    if (args) args(e);
    seeds.push_back({name, m});
  };
  auto none = std::function<void(XdrEncoder&)>();
  add("pmap-null", kPortmapProgram, 2, 0, none);
  add("pmap-getport", kPortmapProgram, 2, 3, [](XdrEncoder& e) {
    e.U32(kNfsProgram); e.U32(3); e.U32(kIpProtoTcp); e.U32(0);
  });
  add("pmap-dump", kPortmapProgram, 2, 4, none);
  add("pmap-set", kPortmapProgram, 2, 1, [](XdrEncoder& e) {
    e.U32(1); e.U32(1); e.U32(6); e.U32(1);
  });
  add("mount-null", kMountProgram, 3, 0, none);
  add("mount-mnt-root", kMountProgram, 3, 1, [](XdrEncoder& e) { e.String("/"); });
  add("mount-mnt-sub", kMountProgram, 3, 1, [](XdrEncoder& e) { e.String("/a/b"); });
  add("mount-dump", kMountProgram, 3, 2, none);
  add("mount-umnt", kMountProgram, 3, 3, [](XdrEncoder& e) { e.String("/"); });
  add("mount-umntall", kMountProgram, 3, 4, none);
  add("mount-export", kMountProgram, 3, 5, none);

  const std::string root = Handle(1);
  auto dirop = [&](XdrEncoder& e, const std::string& dir, const std::string& name) {
    e.Opaque(dir);
    e.String(name);
  };
  add("nfs-null", kNfsProgram, 3, 0, none);
  add("nfs-getattr", kNfsProgram, 3, 1, [&](XdrEncoder& e) { e.Opaque(root); });
  add("nfs-setattr-guard", kNfsProgram, 3, 2, [&](XdrEncoder& e) {
    e.Opaque(Handle(2));
    e.Bool(true); e.U32(0600);  // mode
    e.Bool(true); e.U32(1000);  // uid
    e.Bool(false);              // gid
    e.Bool(true); e.U64(3);     // size
    e.U32(1);                   // atime: server time
    e.U32(2); e.U32(1000); e.U32(1);  // mtime: client time
    e.Bool(true); e.U32(5); e.U32(6);  // guard
  });
  add("nfs-lookup", kNfsProgram, 3, 3, [&](XdrEncoder& e) { dirop(e, root, "a"); });
  add("nfs-access", kNfsProgram, 3, 4, [&](XdrEncoder& e) { e.Opaque(root); e.U32(0x3f); });
  add("nfs-readlink", kNfsProgram, 3, 5, [&](XdrEncoder& e) { e.Opaque(Handle(4)); });
  add("nfs-read", kNfsProgram, 3, 6, [&](XdrEncoder& e) { e.Opaque(Handle(2)); e.U64(0); e.U32(4096); });
  add("nfs-write", kNfsProgram, 3, 7, [&](XdrEncoder& e) {
    e.Opaque(Handle(2)); e.U64(10); e.U32(5); e.U32(0); e.Opaque("hello");
  });
  add("nfs-create-unchecked", kNfsProgram, 3, 8, [&](XdrEncoder& e) {
    dirop(e, root, "a"); e.U32(0); ModeOnly(e, 0644);
  });
  add("nfs-create-guarded", kNfsProgram, 3, 8, [&](XdrEncoder& e) {
    dirop(e, root, "b"); e.U32(1); ModeOnly(e, 0600);
  });
  add("nfs-create-exclusive", kNfsProgram, 3, 8, [&](XdrEncoder& e) {
    dirop(e, root, "c"); e.U32(2); e.U64(0x0102030405060708ull);
  });
  add("nfs-mkdir", kNfsProgram, 3, 9, [&](XdrEncoder& e) { dirop(e, root, "d"); ModeOnly(e, 0755); });
  add("nfs-symlink", kNfsProgram, 3, 10, [&](XdrEncoder& e) {
    dirop(e, root, "l"); ModeOnly(e, 0777); e.String("a/../b");
  });
  add("nfs-mknod-chr", kNfsProgram, 3, 11, [&](XdrEncoder& e) {
    dirop(e, root, "dev"); e.U32(4); ModeOnly(e, 0600); e.U32(1); e.U32(3);
  });
  add("nfs-mknod-fifo", kNfsProgram, 3, 11, [&](XdrEncoder& e) {
    dirop(e, root, "fifo"); e.U32(7); ModeOnly(e, 0600);
  });
  add("nfs-remove", kNfsProgram, 3, 12, [&](XdrEncoder& e) { dirop(e, root, "a"); });
  add("nfs-rmdir", kNfsProgram, 3, 13, [&](XdrEncoder& e) { dirop(e, root, "d"); });
  add("nfs-rename", kNfsProgram, 3, 14, [&](XdrEncoder& e) {
    dirop(e, root, "b"); dirop(e, Handle(3), "b2");
  });
  add("nfs-link", kNfsProgram, 3, 15, [&](XdrEncoder& e) { e.Opaque(Handle(2)); dirop(e, root, "hl"); });
  add("nfs-readdir", kNfsProgram, 3, 16, [&](XdrEncoder& e) {
    e.Opaque(root); e.U64(0); e.U64(0); e.U32(4096);
  });
  add("nfs-readdirplus", kNfsProgram, 3, 17, [&](XdrEncoder& e) {
    e.Opaque(root); e.U64(3); e.U64(0); e.U32(1024); e.U32(8192);
  });
  add("nfs-fsstat", kNfsProgram, 3, 18, [&](XdrEncoder& e) { e.Opaque(root); });
  add("nfs-fsinfo", kNfsProgram, 3, 19, [&](XdrEncoder& e) { e.Opaque(root); });
  add("nfs-pathconf", kNfsProgram, 3, 20, [&](XdrEncoder& e) { e.Opaque(root); });
  add("nfs-commit", kNfsProgram, 3, 21, [&](XdrEncoder& e) { e.Opaque(Handle(2)); e.U64(0); e.U32(0); });
  add("rpc-prog-unavail", 123456, 1, 0, none);
  add("rpc-prog-mismatch", kNfsProgram, 4, 0, none);
  add("rpc-proc-unavail", kNfsProgram, 3, 99, none);
  return seeds;
}

// The same message as a record-marked stream in two fragments, twice.
std::string AsStream(const std::string& message) {
  std::string stream;
  XdrEncoder e(&stream);
  for (int copy = 0; copy < 2; copy++) {
    size_t half = message.size() / 2;
    e.U32(static_cast<uint32_t>(half));
    stream += message.substr(0, half);
    e.U32(pail::nfs::kLastFragmentBit | static_cast<uint32_t>(message.size() - half));
    stream += message.substr(half);
  }
  return stream;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  int written = 0;
  for (const Seed& seed : Seeds()) {
    std::ofstream(dir + "/" + seed.name, std::ios::binary) << std::string(1, '\0') << seed.message;
    std::ofstream(dir + "/" + seed.name + ".stream", std::ios::binary)
        << std::string(1, '\1') << AsStream(seed.message);
    written += 2;
  }
  std::printf("wrote %d seeds to %s\n", written, dir.c_str());
  return 0;
}
