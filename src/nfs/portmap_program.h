// The port mapper (program 100000, version 2, RFC 1833), answered on the NFS
// port itself.
//
// Clients that do not know where NFS and MOUNT listen ask GETPORT; the answer
// is the port the question arrived on, for NFS v3 and MOUNT v3 over TCP,
// and 0 ("not registered") for anything else. SET and UNSET are refused:
// nothing else registers with this mapper. CALLIT is not offered (it exists
// for UDP broadcast and only amplifies traffic).
#pragma once

#include "nfs/program_numbers.h"
#include "nfs/rpc_dispatcher.h"

namespace pail::nfs {

class PortmapProgram : public RpcProgram {
 public:
  uint32_t program() const override { return kPortmapProgram; }
  uint32_t min_version() const override { return kPortmapVersion; }
  uint32_t max_version() const override { return kPortmapVersion; }
  AcceptStat Call(const RpcCall& call, const CallContext& context, XdrDecoder& args,
                  XdrEncoder& results) override;
};

}  // namespace pail::nfs
