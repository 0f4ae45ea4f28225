// ONC RPC version 2 messages (RFC 5531): call headers, credentials, replies.
//
// A call is: xid, CALL, rpcvers (2), program, version, procedure, the
// credential and verifier (each a flavor word and an opaque of at most 400
// bytes), then the procedure's arguments. A reply is: xid, REPLY, and either
// MSG_ACCEPTED (verifier, accept_stat, results) or MSG_DENIED (RPC_MISMATCH
// with the supported version range, or AUTH_ERROR with an auth_stat).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nfs/xdr.h"

namespace pail::nfs {

constexpr uint32_t kRpcVersion = 2;
constexpr uint32_t kMsgCall = 0;
constexpr uint32_t kMsgReply = 1;
constexpr uint32_t kReplyAccepted = 0;
constexpr uint32_t kReplyDenied = 1;
constexpr uint32_t kRejectRpcMismatch = 0;
constexpr uint32_t kRejectAuthError = 1;
constexpr uint32_t kMaxAuthBytes = 400;

constexpr uint32_t kAuthNone = 0;
constexpr uint32_t kAuthSys = 1;
// AUTH_SYS allows at most 16 supplementary groups and a 255-byte host name.
constexpr uint32_t kAuthSysMaxGroups = 16;
constexpr uint32_t kAuthSysMaxMachineName = 255;

enum class AcceptStat : uint32_t {
  kSuccess = 0,
  kProgUnavail = 1,
  kProgMismatch = 2,
  kProcUnavail = 3,
  kGarbageArgs = 4,
  kSystemErr = 5,
};

enum class AuthStat : uint32_t {
  kBadCred = 1,
  kRejectedCred = 2,
  kBadVerf = 3,
  kRejectedVerf = 4,
  kTooWeak = 5,
};

// Who is calling, as the credential says. AUTH_NONE callers get the
// server's anonymous ids.
struct RpcCredentials {
  uint32_t flavor = kAuthNone;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
  std::string machine_name;
};

struct RpcCall {
  uint32_t xid = 0;
  uint32_t program = 0;
  uint32_t version = 0;
  uint32_t procedure = 0;
  RpcCredentials credentials;
};

// Outcome of reading a call header.
enum class CallHeaderStatus {
  kOk,
  kNotACall,        // too short for an xid, or a REPLY: drop it
  kRpcMismatch,     // rpcvers != 2: deny with RPC_MISMATCH
  kBadCredentials,  // malformed or unsupported credential: deny with AUTH_ERROR
  kGarbage,         // truncated header: GARBAGE_ARGS
};

// Reads the header up to the arguments; `decoder` is left at the first
// argument byte. `auth_error` is set for kBadCredentials. `anon_uid/gid`
// fill in AUTH_NONE callers.
CallHeaderStatus DecodeCallHeader(XdrDecoder& decoder, uint32_t anon_uid, uint32_t anon_gid,
                                  RpcCall* call, AuthStat* auth_error);

// Reply construction. Each reply string starts with a 4-byte record mark
// that FinishRecord() fills in, so a reply is written with one send.
class ReplyBuilder {
 public:
  // Starts an accepted reply with SUCCESS; results follow via encoder().
  ReplyBuilder(uint32_t xid);

  XdrEncoder& encoder() { return encoder_; }
  // Replaces the (partial) results with an error accept_stat.
  void SetAcceptError(AcceptStat stat);
  void SetProgMismatch(uint32_t low, uint32_t high);
  // Replaces the whole body with MSG_DENIED.
  void SetRpcMismatch();
  void SetAuthError(AuthStat stat);
  // Fills in the record mark and hands over the bytes.
  std::string FinishRecord();

 private:
  void TruncateToAcceptStat(AcceptStat stat);

  std::string buffer_;
  XdrEncoder encoder_;
  size_t reply_stat_offset_ = 0;
  size_t accept_stat_offset_ = 0;
};

}  // namespace pail::nfs
