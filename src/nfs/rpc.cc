#include "nfs/rpc.h"

#include "nfs/record_assembler.h"

namespace pail::nfs {

namespace {

// Fills `creds` from an AUTH_SYS body: stamp, machine name, uid, gid, groups.
bool DecodeAuthSys(std::string_view body, RpcCredentials* creds) {
  XdrDecoder d(body);
  d.U32();  // stamp: arbitrary, unused
  creds->machine_name = std::string(d.String(kAuthSysMaxMachineName));
  creds->uid = d.U32();
  creds->gid = d.U32();
  uint32_t count = d.U32();
  if (!d.ok() || count > kAuthSysMaxGroups) return false;
  creds->groups.clear();
  for (uint32_t i = 0; i < count; i++) creds->groups.push_back(d.U32());
  return d.ok();
}

}  // namespace

CallHeaderStatus DecodeCallHeader(XdrDecoder& d, uint32_t anon_uid, uint32_t anon_gid,
                                  RpcCall* call, AuthStat* auth_error) {
  call->xid = d.U32();
  uint32_t message_type = d.U32();
  if (!d.ok() || message_type != kMsgCall) return CallHeaderStatus::kNotACall;
  uint32_t rpc_version = d.U32();
  if (!d.ok()) return CallHeaderStatus::kGarbage;
  if (rpc_version != kRpcVersion) return CallHeaderStatus::kRpcMismatch;
  call->program = d.U32();
  call->version = d.U32();
  call->procedure = d.U32();
  uint32_t cred_flavor = d.U32();
  std::string_view cred_body = d.Opaque(kMaxAuthBytes);
  d.U32();  // verifier flavor: AUTH_NONE or AUTH_SYS callers send no verifier we check
  d.Opaque(kMaxAuthBytes);
  if (!d.ok()) return CallHeaderStatus::kGarbage;

  call->credentials = RpcCredentials{};
  call->credentials.flavor = cred_flavor;
  if (cred_flavor == kAuthNone) {
    call->credentials.uid = anon_uid;
    call->credentials.gid = anon_gid;
    return CallHeaderStatus::kOk;
  }
  if (cred_flavor == kAuthSys) {
    if (DecodeAuthSys(cred_body, &call->credentials)) return CallHeaderStatus::kOk;
    *auth_error = AuthStat::kBadCred;
    return CallHeaderStatus::kBadCredentials;
  }
  // RPCSEC_GSS and others: this server speaks only AUTH_SYS and AUTH_NONE.
  *auth_error = AuthStat::kTooWeak;
  return CallHeaderStatus::kBadCredentials;
}

ReplyBuilder::ReplyBuilder(uint32_t xid) : encoder_(&buffer_) {
  buffer_.reserve(256);
  encoder_.U32(0);  // record mark, filled in by FinishRecord()
  encoder_.U32(xid);
  encoder_.U32(kMsgReply);
  reply_stat_offset_ = encoder_.size();
  encoder_.U32(kReplyAccepted);
  encoder_.U32(kAuthNone);  // verifier: AUTH_NONE, empty
  encoder_.U32(0);
  accept_stat_offset_ = encoder_.size();
  encoder_.U32(static_cast<uint32_t>(AcceptStat::kSuccess));
}

void ReplyBuilder::TruncateToAcceptStat(AcceptStat stat) {
  buffer_.resize(accept_stat_offset_);
  encoder_.U32(static_cast<uint32_t>(stat));
}

void ReplyBuilder::SetAcceptError(AcceptStat stat) { TruncateToAcceptStat(stat); }

void ReplyBuilder::SetProgMismatch(uint32_t low, uint32_t high) {
  TruncateToAcceptStat(AcceptStat::kProgMismatch);
  encoder_.U32(low);
  encoder_.U32(high);
}

void ReplyBuilder::SetRpcMismatch() {
  buffer_.resize(reply_stat_offset_);
  encoder_.U32(kReplyDenied);
  encoder_.U32(kRejectRpcMismatch);
  encoder_.U32(kRpcVersion);
  encoder_.U32(kRpcVersion);
}

void ReplyBuilder::SetAuthError(AuthStat stat) {
  buffer_.resize(reply_stat_offset_);
  encoder_.U32(kReplyDenied);
  encoder_.U32(kRejectAuthError);
  encoder_.U32(static_cast<uint32_t>(stat));
}

std::string ReplyBuilder::FinishRecord() {
  encoder_.PatchU32(0, kLastFragmentBit | static_cast<uint32_t>(buffer_.size() - 4));
  return std::move(buffer_);
}

}  // namespace pail::nfs
