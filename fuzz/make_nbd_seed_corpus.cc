// make_nbd_seed_corpus OUT_DIR: writes the seed corpus of nbd_fuzzer (see
// its input format): every option alone and in the sequences real clients
// use, then every command with and without structured replies. Checked in
// under fuzz/corpus/nbd; re-run after changing the input format.
#include <cstdio>
#include <fstream>
#include <string>

#include "nbd/protocol.h"
#include "nbd/wire.h"

using namespace pail::nbd;

namespace {

std::string Flags(uint32_t flags) {
  std::string out;
  PutU32(&out, flags);
  return out;
}

std::string Option(uint32_t option, const std::string& data) {
  std::string out;
  PutU64(&out, kOptionMagic);
  PutU32(&out, option);
  PutU32(&out, static_cast<uint32_t>(data.size()));
  return out + data;
}

std::string Name(const std::string& name) {
  std::string out;
  PutU32(&out, static_cast<uint32_t>(name.size()));
  return out + name;
}

std::string Go(uint32_t option, const std::string& name, bool ask_name) {
  std::string data = Name(name);
  PutU16(&data, ask_name ? 2 : 0);
  if (ask_name) {
    PutU16(&data, kInfoName);
    PutU16(&data, kInfoBlockSize);
  }
  return Option(option, data);
}

std::string Meta(uint32_t option, const std::string& name, const std::string& query) {
  std::string data = Name(name);
  PutU32(&data, query.empty() ? 0 : 1);
  if (!query.empty()) data += Name(query);
  return Option(option, data);
}

std::string Request(uint16_t flags, uint16_t type, uint64_t offset, uint32_t length,
                    const std::string& payload = {}) {
  static uint64_t cookie = 1;
  std::string out;
  PutU32(&out, kRequestMagic);
  PutU16(&out, flags);
  PutU16(&out, type);
  PutU64(&out, cookie++);
  PutU64(&out, offset);
  PutU32(&out, length);
  return out + payload;
}

std::string Commands() {
  std::string s;
  s += Request(0, kCmdWrite, 100, 6, "abcdef");
  s += Request(kCmdFlagFua, kCmdWrite, 70000, 3, "xyz");
  s += Request(0, kCmdRead, 0, 8192);
  s += Request(kCmdFlagDf, kCmdRead, 100, 10);
  s += Request(0, kCmdFlush, 0, 0);
  s += Request(0, kCmdTrim, 4096, 65536);
  s += Request(kCmdFlagNoHole, kCmdWriteZeroes, 0, 100);
  s += Request(kCmdFlagFastZero | kCmdFlagFua, kCmdWriteZeroes, 200, 1000);
  s += Request(0, kCmdCache, 0, 4096);
  s += Request(0, kCmdBlockStatus, 0, 1 << 20);
  s += Request(kCmdFlagReqOne, kCmdBlockStatus, 4096, 100000);
  s += Request(0, kCmdRead, (1 << 20) - 1, 2);  // out of range
  s += Request(0, kCmdWrite, (1 << 20) - 1, 2, "zz");
  s += Request(0, 42, 0, 0);
  s += Request(0, kCmdDisc, 0, 0);
  return s;
}

void Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  std::string hello = Flags(kClientFixedNewstyle | kClientNoZeroes);
  std::string structured = Option(kOptStructuredReply, "");
  Write(dir, "list", hello + Option(kOptList, "") + Option(kOptAbort, ""));
  Write(dir, "list-with-data", hello + Option(kOptList, "x"));
  Write(dir, "starttls", hello + Option(kOptStartTls, ""));
  Write(dir, "unknown-option", hello + Option(99, "whatever"));
  Write(dir, "info", hello + Go(kOptInfo, "disk", true) + Go(kOptInfo, "missing", false));
  Write(dir, "info-truncated", hello + Option(kOptInfo, Name("disk")));
  Write(dir, "go-subdir", hello + Go(kOptGo, "subdir", false));
  Write(dir, "list-meta", hello + Meta(kOptListMetaContext, "disk", "") +
                              Meta(kOptListMetaContext, "disk", "base:"));
  Write(dir, "set-meta-unstructured", hello + Meta(kOptSetMetaContext, "disk", kBaseAllocation));
  Write(dir, "export-name-zeroes", Flags(kClientFixedNewstyle) + Option(kOptExportName, "disk") +
                                       Commands());
  Write(dir, "export-name-missing", hello + Option(kOptExportName, "nope"));
  Write(dir, "go-simple", hello + Go(kOptGo, "disk", true) + Commands());
  Write(dir, "go-structured", hello + structured +
                                  Meta(kOptSetMetaContext, "disk", kBaseAllocation) +
                                  Go(kOptGo, "disk", false) + Commands());
  Write(dir, "go-structured-other-export",
        hello + structured + Meta(kOptSetMetaContext, "empty", kBaseAllocation) +
            Go(kOptGo, "disk", false) + Commands());
  Write(dir, "go-empty-export", hello + structured + Go(kOptGo, "empty", false) + Commands());
  Write(dir, "bad-request-magic", hello + Go(kOptGo, "disk", false) + std::string(28, '\x7f'));
  return 0;
}
