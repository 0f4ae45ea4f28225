#include "nfs/portmap_program.h"

namespace pail::nfs {

namespace {

enum PortmapProc : uint32_t {
  kNull = 0,
  kSet = 1,
  kUnset = 2,
  kGetPort = 3,
  kDump = 4,
};

struct Mapping {
  uint32_t program;
  uint32_t version;
};

// What this process serves over TCP, all on the port of the connection.
constexpr Mapping kServed[] = {
    {kPortmapProgram, kPortmapVersion},
    {kNfsProgram, kNfsVersion3},
    {kMountProgram, kMountVersion3},
};

}  // namespace

AcceptStat PortmapProgram::Call(const RpcCall& call, const CallContext& context, XdrDecoder& args,
                                XdrEncoder& results) {
  switch (call.procedure) {
    case kNull:
      return AcceptStat::kSuccess;
    case kSet:
    case kUnset: {
      // mapping: program, version, protocol, port
      for (int i = 0; i < 4; i++) args.U32();
      if (!args.ok()) return AcceptStat::kGarbageArgs;
      results.Bool(false);
      return AcceptStat::kSuccess;
    }
    case kGetPort: {
      uint32_t program = args.U32();
      uint32_t version = args.U32();
      uint32_t protocol = args.U32();
      args.U32();  // port: ignored in a query
      if (!args.ok()) return AcceptStat::kGarbageArgs;
      uint32_t port = 0;
      for (const Mapping& m : kServed) {
        if (m.program == program && m.version == version && protocol == kIpProtoTcp) {
          port = context.local_port;
        }
      }
      results.U32(port);
      return AcceptStat::kSuccess;
    }
    case kDump:
      // pmaplist: an optional-data chain of mappings.
      for (const Mapping& m : kServed) {
        results.Bool(true);
        results.U32(m.program);
        results.U32(m.version);
        results.U32(kIpProtoTcp);
        results.U32(context.local_port);
      }
      results.Bool(false);
      return AcceptStat::kSuccess;
    default:
      return AcceptStat::kProcUnavail;
  }
}

}  // namespace pail::nfs
