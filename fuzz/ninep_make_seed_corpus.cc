// Writes fuzz/corpus/ninep: one file per message type, each a stream that
// negotiates a version, attaches and then exercises that message (with the
// setup it needs), plus a few malformed streams. Run from the repo root:
//   build/tests/ninep/ninep_make_seed_corpus fuzz/corpus/ninep
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "../tests/ninep/p9_client.h"

using pail::ninep::test::Fields;
namespace t = pail::ninep::test;

namespace {

class Stream {
 public:
  Stream& msg(uint8_t type, const Fields& body) {
    Fields f;
    f.u32(static_cast<uint32_t>(7 + body.bytes().size())).u8(type).u16(tag_++).raw(body.bytes());
    bytes_ += f.bytes();
    return *this;
  }
  Stream& raw(const std::string& s) { bytes_ += s; return *this; }
  const std::string& bytes() const { return bytes_; }

 private:
  uint16_t tag_ = 1;
  std::string bytes_;
};

// version, attach fid 0, a directory "d" as fid 1, a file "d/f" as fid 2 (open rw).
Stream Setup() {
  Stream s;
  s.msg(t::Tversion, Fields().u32(65536).str("9P2000.L"));
  s.msg(t::Tattach, Fields().u32(0).u32(0xffffffff).str("root").str("").u32(0));
  s.msg(t::Tmkdir, Fields().u32(0).str("d").u32(0755).u32(0));
  s.msg(t::Twalk, Fields().u32(0).u32(1).u16(1).str("d"));
  s.msg(t::Twalk, Fields().u32(1).u32(2).u16(0));
  s.msg(t::Tlcreate, Fields().u32(2).str("f").u32(02 | 0100).u32(0644).u32(0));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::create_directories(argv[1]);
  std::map<std::string, std::function<void(Stream&)>> seeds = {
      {"version", [](Stream&) {}},
      {"version-unknown", [](Stream& s) { s.msg(t::Tversion, Fields().u32(8192).str("9P2000")); }},
      {"auth", [](Stream& s) { s.msg(t::Tauth, Fields().u32(5).str("u").str("").u32(0)); }},
      {"attach-aname", [](Stream& s) { s.msg(t::Tattach, Fields().u32(9).u32(0xffffffff).str("").str("/d").u32(1000)); }},
      {"walk", [](Stream& s) { s.msg(t::Twalk, Fields().u32(0).u32(3).u16(2).str("d").str("f")); }},
      {"walk-dotdot", [](Stream& s) { s.msg(t::Twalk, Fields().u32(1).u32(3).u16(3).str("..").str("..").str(".")); }},
      {"write-read", [](Stream& s) {
         s.msg(t::Twrite, Fields().u32(2).u64(0).u32(5).raw("hello"));
         s.msg(t::Tread, Fields().u32(2).u64(0).u32(100));
       }},
      {"lopen", [](Stream& s) {
         s.msg(t::Twalk, Fields().u32(1).u32(3).u16(1).str("f"));
         s.msg(t::Tlopen, Fields().u32(3).u32(01000 | 02));
       }},
      {"getattr-setattr", [](Stream& s) {
         s.msg(t::Tgetattr, Fields().u32(2).u64(0x7ff));
         s.msg(t::Tsetattr, Fields().u32(2).u32(0x1ff).u32(0600).u32(1).u32(2).u64(10).u64(1).u64(2).u64(3).u64(4));
       }},
      {"statfs-fsync", [](Stream& s) {
         s.msg(t::Tstatfs, Fields().u32(0));
         s.msg(t::Tfsync, Fields().u32(2).u32(1));
       }},
      {"readdir", [](Stream& s) {
         s.msg(t::Tlopen, Fields().u32(1).u32(0));
         s.msg(t::Treaddir, Fields().u32(1).u64(0).u32(4096));
         s.msg(t::Treaddir, Fields().u32(1).u64(3).u32(30));
       }},
      {"namespace", [](Stream& s) {
         s.msg(t::Tsymlink, Fields().u32(1).str("s").str("f").u32(0));
         s.msg(t::Tmknod, Fields().u32(1).str("n").u32(0010644).u32(0).u32(0).u32(0));
         s.msg(t::Tlink, Fields().u32(1).u32(2).str("h"));
         s.msg(t::Twalk, Fields().u32(1).u32(4).u16(1).str("s"));
         s.msg(t::Treadlink, Fields().u32(4));
         s.msg(t::Trename, Fields().u32(2).u32(0).str("moved"));
         s.msg(t::Trenameat, Fields().u32(1).str("h").u32(0).str("h2"));
         s.msg(t::Tunlinkat, Fields().u32(0).str("h2").u32(0));
         s.msg(t::Tunlinkat, Fields().u32(0).str("d").u32(0x200));
         s.msg(t::Tremove, Fields().u32(4));
         s.msg(t::Tclunk, Fields().u32(1));
       }},
      {"mkdir", [](Stream& s) { s.msg(t::Tmkdir, Fields().u32(1).str("sub").u32(0700).u32(5)); }},
      {"xattr", [](Stream& s) {
         s.msg(t::Twalk, Fields().u32(2).u32(5).u16(0));
         s.msg(t::Txattrcreate, Fields().u32(5).str("user.a").u64(3).u32(0));
         s.msg(t::Twrite, Fields().u32(5).u64(0).u32(3).raw("abc"));
         s.msg(t::Tclunk, Fields().u32(5));
         s.msg(t::Txattrwalk, Fields().u32(2).u32(6).str("user.a"));
         s.msg(t::Tread, Fields().u32(6).u64(0).u32(10));
         s.msg(t::Txattrwalk, Fields().u32(2).u32(7).str(""));
       }},
      {"lock", [](Stream& s) {
         s.msg(t::Tlock, Fields().u32(2).u8(1).u32(1).u64(0).u64(10).u32(42).str("host"));
         s.msg(t::Tgetlock, Fields().u32(2).u8(0).u64(5).u64(0).u32(43).str("other"));
         s.msg(t::Tlock, Fields().u32(2).u8(2).u32(0).u64(0).u64(0).u32(42).str("host"));
       }},
      {"flush", [](Stream& s) { s.msg(t::Tflush, Fields().u16(3)); }},
      {"malformed-short", [](Stream& s) { s.msg(t::Twalk, Fields().u32(0).u32(3).u16(9).str("x")); }},
      {"malformed-size", [](Stream& s) { s.raw(Fields().u32(3).bytes()); }},
      {"malformed-string", [](Stream& s) { s.msg(t::Tmkdir, Fields().u32(0).u16(500).raw("ab")); }},
  };
  for (auto& [name, add] : seeds) {
    Stream s = name == "version" || name == "malformed-size" ? Stream() : Setup();
    if (name == "version") s.msg(t::Tversion, Fields().u32(1 << 20).str("9P2000.L"));
    add(s);
    std::ofstream(std::filesystem::path(argv[1]) / name, std::ios::binary) << s.bytes();
  }
  return 0;
}
