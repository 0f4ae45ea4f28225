// RpcDispatcher: turns one RPC record into its reply.
//
// Programs (port mapper, MOUNT, NFS) register themselves; the dispatcher
// reads the call header, answers RPC_MISMATCH, AUTH_ERROR, PROG_UNAVAIL and
// PROG_MISMATCH itself, and hands everything else to the program. It holds no
// per-connection state, so any worker thread may call Dispatch().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nfs/rpc.h"
#include "nfs/xdr.h"

namespace pail::nfs {

// Where a call arrived: programs that answer with addresses (the port
// mapper) or record clients (MOUNT's DUMP) need it.
struct CallContext {
  uint16_t local_port = 0;
  std::string peer_address;
};

class RpcProgram {
 public:
  virtual ~RpcProgram() = default;
  virtual uint32_t program() const = 0;
  virtual uint32_t min_version() const = 0;
  virtual uint32_t max_version() const = 0;
  // Decodes the arguments from `args`, runs the procedure and encodes its
  // results into `results`. Anything but kSuccess discards the results:
  // kProcUnavail for an unknown procedure, kGarbageArgs when `args` did not
  // decode, kSystemErr when the server itself failed.
  virtual AcceptStat Call(const RpcCall& call, const CallContext& context, XdrDecoder& args,
                          XdrEncoder& results) = 0;
};

class RpcDispatcher {
 public:
  RpcDispatcher(uint32_t anon_uid, uint32_t anon_gid) : anon_uid_(anon_uid), anon_gid_(anon_gid) {}

  // Not thread-safe; register every program before the first Dispatch().
  void Register(RpcProgram* program) { programs_.push_back(program); }

  // The framed reply to `record`, or nullopt when the record is not a call
  // at all (too short for a header, or a reply): such input gets no answer.
  std::optional<std::string> Dispatch(std::string_view record, const CallContext& context) const;

 private:
  uint32_t anon_uid_;
  uint32_t anon_gid_;
  std::vector<RpcProgram*> programs_;
};

}  // namespace pail::nfs
