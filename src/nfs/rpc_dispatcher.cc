#include "nfs/rpc_dispatcher.h"

namespace pail::nfs {

std::optional<std::string> RpcDispatcher::Dispatch(std::string_view record,
                                                   const CallContext& context) const {
  XdrDecoder decoder(record);
  RpcCall call;
  AuthStat auth_error = AuthStat::kBadCred;
  CallHeaderStatus header =
      DecodeCallHeader(decoder, policy_.anonuid, policy_.anongid, &call, &auth_error);
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

  RpcProgram* program = Find(call.program);
  // NULL (procedure 0 of every program) reveals nothing and is answered to
  // anyone, so a refused client learns why from its first real call (MNT
  // says MNT3ERR_ACCES) instead of seeing a dead server.
  std::optional<std::string> refusal;
  if (call.procedure != 0) refusal = policy_.RefusalReason(context.peer_address, context.peer_port);
  if (refusal) {
    refusals_.Refused("rpc: refusing calls from " + context.peer_address + ": " + *refusal);
    if (program == nullptr || !program->AnswerRefusedClient(call, reply.encoder())) {
      reply.SetAuthError(AuthStat::kTooWeak);
    }
    return reply.FinishRecord();
  }
  RpcCredentials& claimed = call.credentials;
  server::ClientIdentity identity = policy_.Squashed(
      {claimed.uid, claimed.gid, claimed.groups}, claimed.flavor == kAuthSys);
  claimed.uid = identity.uid;
  claimed.gid = identity.gid;
  claimed.groups = std::move(identity.groups);

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

namespace pail::nfs {

RpcProgram* RpcDispatcher::Find(uint32_t program) const {
  for (RpcProgram* candidate : programs_) {
    if (candidate->program() == program) return candidate;
  }
  return nullptr;
}

RpcDispatcher::CallShape RpcDispatcher::Examine(std::string_view record) const {
  XdrDecoder decoder(record);
  RpcCall call;
  AuthStat ignored;
  if (DecodeCallHeader(decoder, 0, 0, &call, &ignored) != CallHeaderStatus::kOk) return {};
  RpcProgram* program = Find(call.program);
  if (program == nullptr) return {};
  if (call.procedure == 0) return {0, true};
  CallShape shape;
  // Both read the arguments from where the header ends.
  XdrDecoder for_quick = decoder;
  shape.reply_bytes_bound = program->ReplyBytesBound(call, decoder);
  shape.quick = program->Quick(call, for_quick);
  return shape;
}

}  // namespace pail::nfs
