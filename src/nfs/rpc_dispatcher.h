// RpcDispatcher: turns one RPC record into its reply.
//
// Programs (port mapper, MOUNT, NFS) register themselves; the dispatcher
// reads the call header, answers RPC_MISMATCH, AUTH_ERROR, PROG_UNAVAIL and
// PROG_MISMATCH itself, and hands everything else to the program. It holds no
// per-connection state, so any worker thread may call Dispatch().
//
// The access policy applies here, to every call of every program but NULL: a client
// outside allowed_clients, or on a port of 1024 or above with secure_port,
// gets AUTH_ERROR / AUTH_TOOWEAK (as the kernel server answers insecure
// ports) unless the program answers refused clients itself (MOUNT's MNT says
// MNT3ERR_ACCES); identities are squashed before any program sees them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nfs/rpc.h"
#include "nfs/xdr.h"
#include "server/access_policy.h"

namespace pail::nfs {

// Where a call arrived: programs that answer with addresses (the port
// mapper) or record clients (MOUNT's DUMP) need it.
struct CallContext {
  uint16_t local_port = 0;
  std::string peer_address;
  uint16_t peer_port = 0;
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
  // The most reply bytes this call can produce beyond a small header, read
  // from its arguments before it runs (READ's count, READDIR's maxcount), so
  // the transport can charge them against a connection's bound in advance.
  virtual size_t ReplyBytesBound(const RpcCall&, XdrDecoder&) const { return 0; }
  // Whether this call is answered from the core's memory and local cache
  // alone (never waiting for the bucket, for write-back room or for data),
  // read from its arguments before it runs: the transport may then run it
  // on its I/O thread instead of waking a worker for it.
  virtual bool Quick(const RpcCall&, XdrDecoder&) const { return false; }
  // For a call the access policy refuses: true after encoding a
  // program-level refusal into `results` (a successful RPC carrying an
  // error status); false to let the dispatcher deny it with AUTH_TOOWEAK.
  virtual bool AnswerRefusedClient(const RpcCall&, XdrEncoder&) { return false; }
};

class RpcDispatcher {
 public:
  explicit RpcDispatcher(server::AccessPolicy policy) : policy_(std::move(policy)) {}

  // Not thread-safe; register every program before the first Dispatch().
  void Register(RpcProgram* program) { programs_.push_back(program); }

  // The framed reply to `record`, or nullopt when the record is not a call
  // at all (too short for a header, or a reply): such input gets no answer.
  std::optional<std::string> Dispatch(std::string_view record, const CallContext& context) const;
  // What the transport learns of the call in `record` before running it:
  // RpcProgram::ReplyBytesBound and RpcProgram::Quick (0 and false when it
  // does not decode or its program is unknown; a NULL call is quick).
  struct CallShape {
    size_t reply_bytes_bound = 0;
    bool quick = false;
  };
  CallShape Examine(std::string_view record) const;

  const server::AccessPolicy& policy() const { return policy_; }

 private:
  RpcProgram* Find(uint32_t program) const;

  const server::AccessPolicy policy_;
  mutable server::RefusalLog refusals_;
  std::vector<RpcProgram*> programs_;
};

}  // namespace pail::nfs
