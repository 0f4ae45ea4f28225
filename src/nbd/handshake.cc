#include "nbd/handshake.h"

#include <vector>

#include "nbd/protocol.h"
#include "nbd/wire.h"

namespace pail::nbd {

namespace {
// The reply for a failed lookup: unknown export, or the filesystem failed.
uint32_t LookupError(int error) { return error == ENOENT ? kRepErrUnknown : kRepErrInvalid; }
}  // namespace

std::string Handshake::Greeting() {
  std::string out;
  PutU64(&out, kNbdMagic);
  PutU64(&out, kOptionMagic);
  PutU16(&out, kFlagFixedNewstyle | kFlagNoZeroes);
  return out;
}

bool Handshake::SetClientFlags(uint32_t flags) {
  if ((flags & ~(kClientFixedNewstyle | kClientNoZeroes)) != 0) return false;
  no_zeroes_ = (flags & kClientNoZeroes) != 0;
  return true;
}

uint16_t Handshake::TransmissionFlags() const {
  uint16_t flags = kTransHasFlags | kTransSendFlush | kTransSendFua | kTransSendTrim |
                   kTransSendWriteZeroes | kTransCanMultiConn | kTransSendCache |
                   kTransSendFastZero;
  if (session_.structured_replies) flags |= kTransSendDf;
  return flags;
}

OptionOutcome Handshake::HandleOption(uint32_t option, std::string_view data, std::string* out) {
  switch (option) {
    case kOptExportName:
      return ExportName(data, out);
    case kOptAbort:
      out->append(OptionReply(option, kRepAck));
      return OptionOutcome::kClose;
    case kOptList:
      return List(data, out);
    case kOptStartTls:
      out->append(OptionReply(option, kRepErrPolicy, "TLS is not offered by this server"));
      return OptionOutcome::kContinue;
    case kOptInfo:
    case kOptGo:
      return InfoOrGo(option, data, out);
    case kOptStructuredReply:
      if (!data.empty()) {
        out->append(OptionReply(option, kRepErrInvalid, "option takes no data"));
      } else if (session_.structured_replies) {
        out->append(OptionReply(option, kRepErrInvalid, "structured replies already on"));
      } else {
        session_.structured_replies = true;
        out->append(OptionReply(option, kRepAck));
      }
      return OptionOutcome::kContinue;
    case kOptListMetaContext:
    case kOptSetMetaContext:
      return MetaContext(option, data, out);
    default:
      out->append(OptionReply(option, kRepErrUnsup, "unsupported option"));
      return OptionOutcome::kContinue;
  }
}

OptionOutcome Handshake::ExportName(std::string_view data, std::string* out) {
  auto found = exports_.Find(data);
  // This option has no error reply: the only way to refuse is to hang up.
  if (!found.ok()) return OptionOutcome::kClose;
  if (session_.base_allocation && meta_export_ != found->name) session_.base_allocation = false;
  session_.export_info = std::move(*found);
  session_.transmission_flags = TransmissionFlags();
  PutU64(out, session_.export_info.size);
  PutU16(out, session_.transmission_flags);
  if (!no_zeroes_) out->append(kExportNameReplyZeroes, '\0');
  return OptionOutcome::kTransmit;
}

OptionOutcome Handshake::InfoOrGo(uint32_t option, std::string_view data, std::string* out) {
  WireReader r(data);
  uint32_t name_length = r.U32();
  std::string_view name = r.Bytes(name_length);
  uint16_t count = r.U16();
  std::vector<uint16_t> requests;
  for (uint16_t i = 0; i < count && r.ok(); i++) requests.push_back(r.U16());
  if (!r.ok() || r.remaining() != 0) {
    out->append(OptionReply(option, kRepErrInvalid, "malformed request"));
    return OptionOutcome::kContinue;
  }
  auto found = exports_.Find(name);
  if (!found.ok()) {
    out->append(OptionReply(option, LookupError(found.error()), "no such export"));
    return OptionOutcome::kContinue;
  }
  uint16_t flags = TransmissionFlags();
  std::string info;
  PutU16(&info, kInfoExport);
  PutU64(&info, found->size);
  PutU16(&info, flags);
  out->append(OptionReply(option, kRepInfo, info));
  for (uint16_t request : requests) {
    if (request != kInfoName) continue;
    info.clear();
    PutU16(&info, kInfoName);
    info.append(found->name);
    out->append(OptionReply(option, kRepInfo, info));
    break;
  }
  info.clear();
  PutU16(&info, kInfoBlockSize);
  PutU32(&info, kMinBlockSize);
  PutU32(&info, kPreferredBlockSize);
  PutU32(&info, kMaxPayloadBytes);
  out->append(OptionReply(option, kRepInfo, info));
  out->append(OptionReply(option, kRepAck));
  if (option == kOptInfo) return OptionOutcome::kContinue;
  if (session_.base_allocation && meta_export_ != found->name) session_.base_allocation = false;
  session_.export_info = std::move(*found);
  session_.transmission_flags = flags;
  return OptionOutcome::kTransmit;
}

OptionOutcome Handshake::List(std::string_view data, std::string* out) {
  if (!data.empty()) {
    out->append(OptionReply(kOptList, kRepErrInvalid, "option takes no data"));
    return OptionOutcome::kContinue;
  }
  auto names = exports_.List(kMaxListedExports);
  if (!names.ok()) {
    // No /.nbd (removed by hand): no exports.
    if (names.error() != ENOENT) {
      out->append(OptionReply(kOptList, kRepErrInvalid, "cannot read the export directory"));
      return OptionOutcome::kContinue;
    }
  } else {
    for (const std::string& name : *names) {
      std::string entry;
      PutU32(&entry, static_cast<uint32_t>(name.size()));
      entry.append(name);
      out->append(OptionReply(kOptList, kRepServer, entry));
    }
  }
  out->append(OptionReply(kOptList, kRepAck));
  return OptionOutcome::kContinue;
}

OptionOutcome Handshake::MetaContext(uint32_t option, std::string_view data, std::string* out) {
  bool set = option == kOptSetMetaContext;
  WireReader r(data);
  uint32_t name_length = r.U32();
  std::string_view name = r.Bytes(name_length);
  uint32_t count = r.U32();
  std::vector<std::string_view> queries;
  for (uint32_t i = 0; i < count && r.ok(); i++) {
    uint32_t length = r.U32();
    queries.push_back(r.Bytes(length));
  }
  if (!r.ok() || r.remaining() != 0) {
    out->append(OptionReply(option, kRepErrInvalid, "malformed request"));
    return OptionOutcome::kContinue;
  }
  if (set && !session_.structured_replies) {
    out->append(OptionReply(option, kRepErrInvalid, "negotiate structured replies first"));
    return OptionOutcome::kContinue;
  }
  auto found = exports_.Find(name);
  if (!found.ok()) {
    out->append(OptionReply(option, LookupError(found.error()), "no such export"));
    return OptionOutcome::kContinue;
  }
  bool matched = false;
  if (!set && queries.empty()) matched = true;  // LIST with no query: everything
  for (std::string_view query : queries) {
    if (query == kBaseAllocation || (!set && query == "base:")) matched = true;
  }
  if (matched) {
    std::string context;
    PutU32(&context, set ? kBaseAllocationId : 0);
    context.append(kBaseAllocation);
    out->append(OptionReply(option, kRepMetaContext, context));
  }
  if (set) {
    session_.base_allocation = matched;
    meta_export_ = found->name;
  }
  out->append(OptionReply(option, kRepAck));
  return OptionOutcome::kContinue;
}

}  // namespace pail::nbd
