#include "nfs/rpc_dispatcher.h"

namespace pail::nfs {

std::optional<std::string> RpcDispatcher::Dispatch(std::string_view record,
                                                   const CallContext& context) const {
  XdrDecoder decoder(record);
  RpcCall call;
  AuthStat auth_error = AuthStat::kBadCred;
  CallHeaderStatus header = DecodeCallHeader(decoder, anon_uid_, anon_gid_, &call, &auth_error);
  if (header == CallHeaderStatus::kNotACall) return std::nullopt;

  ReplyBuilder reply(call.xid);
  switch (header) {
    case CallHeaderStatus::kRpcMismatch:
      reply.SetRpcMismatch();
      return reply.FinishRecord();
    case CallHeaderStatus::kBadCredentials:
      reply.SetAuthError(auth_error);
      return reply.FinishRecord();
    case CallHeaderStatus::kGarbage:
      reply.SetAcceptError(AcceptStat::kGarbageArgs);
      return reply.FinishRecord();
    default:
      break;
  }

  RpcProgram* program = nullptr;
  for (RpcProgram* candidate : programs_) {
    if (candidate->program() == call.program) program = candidate;
  }
  if (program == nullptr) {
    reply.SetAcceptError(AcceptStat::kProgUnavail);
  } else if (call.version < program->min_version() || call.version > program->max_version()) {
    reply.SetProgMismatch(program->min_version(), program->max_version());
  } else {
    AcceptStat stat = program->Call(call, context, decoder, reply.encoder());
    if (stat != AcceptStat::kSuccess) reply.SetAcceptError(stat);
  }
  return reply.FinishRecord();
}

}  // namespace pail::nfs
