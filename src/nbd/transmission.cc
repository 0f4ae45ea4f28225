#include "nbd/transmission.h"

#include <algorithm>
#include <cstring>

#include "metrics/protocol_metrics.h"
#include "nbd/protocol.h"

namespace pail::nbd {

namespace {

const fs::Credentials kRoot = fs::Credentials::Root();

// The command flags each command accepts (FUA is harmless everywhere).
uint16_t AllowedFlags(uint16_t type) {
  switch (type) {
    case kCmdRead: return kCmdFlagFua | kCmdFlagDf;
    case kCmdWriteZeroes: return kCmdFlagFua | kCmdFlagNoHole | kCmdFlagFastZero;
    case kCmdBlockStatus: return kCmdFlagFua | kCmdFlagReqOne;
    default: return kCmdFlagFua;
  }
}

bool HasRange(uint16_t type) {
  return type == kCmdRead || type == kCmdWrite || type == kCmdTrim || type == kCmdCache ||
         type == kCmdWriteZeroes || type == kCmdBlockStatus;
}

bool Writes(uint16_t type) {
  return type == kCmdWrite || type == kCmdTrim || type == kCmdWriteZeroes;
}

}  // namespace

Admission Admit(const Request& request) {
  Admission a;
  if (request.magic != kRequestMagic) {
    a.close = true;
    return a;
  }
  if (request.type == kCmdWrite) {
    // The data must be read to stay in step; more than we allow is a
    // client we cannot serve.
    if (request.length > kMaxPayloadBytes) {
      a.close = true;
      return a;
    }
    a.payload = request.length;
    a.memory = request.length;
  } else if (request.type == kCmdRead) {
    a.memory = std::min(request.length, kMaxPayloadBytes);
  }
  return a;
}

uint32_t Transmission::Check(const Request& request) const {
  if ((request.flags & ~AllowedFlags(request.type)) != 0) return kEinval;
  if ((request.flags & kCmdFlagDf) && !session_.structured_replies) return kEinval;
  if (!HasRange(request.type)) return 0;
  uint64_t size = session_.export_info.size;
  if (request.offset > size || request.length > size - request.offset) {
    return Writes(request.type) ? kEnospc : kEinval;
  }
  if (request.type == kCmdRead && request.length > kMaxPayloadBytes) return kEinval;
  if (request.type == kCmdBlockStatus) {
    if (!session_.structured_replies || !session_.base_allocation) return kEinval;
    if (request.length == 0) return kEinval;
  }
  return 0;
}

Outcome Transmission::Done(const Request& request, uint32_t error) const {
  Outcome o;
  o.error = error;
  if (!session_.structured_replies) {
    o.reply = SimpleReplyHeader(error, request.cookie);
  } else if (error != 0) {
    o.reply = ErrorChunk(request.cookie, error);
  } else {
    o.reply = ChunkHeader(kReplyFlagDone, kReplyTypeNone, request.cookie, 0);
  }
  return o;
}

Outcome Transmission::Failed(const Request& request, int error) const {
  switch (error) {
    case ENOSPC:
    case EFBIG:
      return Done(request, kEnospc);
    case EROFS:
    case EACCES:
    case EPERM:
      return Done(request, kEperm);
    case EINVAL:
      return Done(request, kEinval);
    case ESTALE:
    case ENOENT: {
      // The export's file was deleted: this client has nothing left to use.
      Outcome o = Done(request, kEio);
      o.close_after = true;
      return o;
    }
    default:
      return Done(request, kEio);
  }
}

namespace {

// The metrics' op label: a fixed set, whatever a client sends.
std::string_view CommandName(uint16_t type) {
  switch (type) {
    case kCmdRead: return "READ";
    case kCmdWrite: return "WRITE";
    case kCmdDisc: return "DISC";
    case kCmdFlush: return "FLUSH";
    case kCmdTrim: return "TRIM";
    case kCmdCache: return "CACHE";
    case kCmdWriteZeroes: return "WRITE_ZEROES";
    case kCmdBlockStatus: return "BLOCK_STATUS";
    default: return "OTHER";
  }
}

}  // namespace

Outcome Transmission::Execute(const Request& request, std::string_view payload) const {
  auto op = metrics::ProtocolMetrics::For("nbd").Start(CommandName(request.type));
  Outcome o = Run(request, payload);
  op.Done(static_cast<int>(o.error));
  return o;
}

Outcome Transmission::Run(const Request& request, std::string_view payload) const {
  if (request.type == kCmdDisc) {
    // No reply, whatever its flags: the client is going away.
    Outcome o;
    o.close_after = true;
    return o;
  }
  if (uint32_t error = Check(request)) return Done(request, error);
  const fs::Ino ino = session_.export_info.ino;
  bool fua = (request.flags & kCmdFlagFua) != 0;
  switch (request.type) {
    case kCmdRead:
      return Read(request);
    case kCmdWrite: {
      size_t done = 0;
      while (done < payload.size()) {
        auto w = fs_.Write(kRoot, ino, request.offset + done, payload.substr(done));
        if (!w.ok()) return Failed(request, w.error());
        if (w->written == 0) return Done(request, kEio);
        done += w->written;
      }
      break;
    }
    case kCmdTrim:
    case kCmdWriteZeroes: {
      // Our format stores no zeros at all, so zeroing is punching a hole,
      // which also gives the range's space back; with NO_HOLE the space
      // stays allocated instead (fallocate's zero range: the chunks stay
      // reserved against the quota), so writes there never meet ENOSPC.
      // Either is always fast.
      if (request.length == 0) break;
      auto zeroed = request.type == kCmdWriteZeroes && (request.flags & kCmdFlagNoHole) != 0
                        ? fs_.Fallocate(kRoot, ino, fs::kFallocZeroRange | fs::kFallocKeepSize,
                                        request.offset, request.length)
                        : fs_.PunchHole(kRoot, ino, request.offset, request.length);
      if (!zeroed.ok()) return Failed(request, zeroed.error());
      break;
    }
    case kCmdFlush:
      fua = true;
      break;
    case kCmdCache:
      // Advisory; the engine's caches fill on the first read anyway.
      break;
    case kCmdBlockStatus:
      return BlockStatus(request);
    default:
      return Done(request, kEinval);
  }
  if (fua) {
    // Every connection's acknowledged writes to this file sit in the same
    // write-back buffer, so one Fsync covers them all (CAN_MULTI_CONN).
    fs::FsStatus s = fs_.Fsync(kRoot, ino);
    if (!s.ok()) return Failed(request, s.error());
  }
  return Done(request, 0);
}

std::optional<Outcome> Transmission::TryExecute(const Request& request,
                                                std::string_view payload) const {
  if (request.length == 0 || Check(request) != 0) return std::nullopt;
  const fs::Ino ino = session_.export_info.ino;
  if (request.type == kCmdWrite && (request.flags & kCmdFlagFua) == 0) {
    auto op = metrics::ProtocolMetrics::For("nbd").Start(CommandName(request.type));
    auto w = fs_.TryWrite(kRoot, ino, request.offset, payload, 0);
    // A refused write changed nothing; one that failed is retried (and
    // counted) by Execute, as a refused one is.
    if (!w.ok() || w->written != payload.size()) return std::nullopt;
    op.Done(0);
    return Done(request, 0);
  }
  // Only whole reads: a short one (the file shrank) is left to Read().
  if (request.type != kCmdRead) return std::nullopt;
  auto op = metrics::ProtocolMetrics::For("nbd").Start(CommandName(request.type));
  auto r = fs_.TryRead(kRoot, ino, request.offset, request.length, 0);
  // Refused or failed: nothing counted here, the worker's retry is.
  if (!r.ok() || r->data.size() != request.length) return std::nullopt;
  Outcome o;
  o.reply = ReadReplyHeader(request);
  o.data = std::move(r->data);
  op.Done(0);
  return o;
}

std::string Transmission::ReadReplyHeader(const Request& request) const {
  std::string header;
  if (session_.structured_replies) {
    header = ChunkHeader(kReplyFlagDone, kReplyTypeOffsetData, request.cookie,
                         static_cast<uint32_t>(8 + request.length));
    PutU64(&header, request.offset);
  } else {
    header = SimpleReplyHeader(0, request.cookie);
  }
  return header;
}

Outcome Transmission::Read(const Request& request) const {
  Outcome o;
  if (session_.structured_replies && request.length == 0) return Done(request, 0);
  o.reply = ReadReplyHeader(request);
  // The file may have shrunk since the handshake: what the client was told
  // exists still reads, as zeros. A whole first read is the reply's data as
  // it is (the normal case).
  uint64_t done = 0;
  while (done < request.length) {
    auto r = fs_.Read(kRoot, session_.export_info.ino, request.offset + done,
                      static_cast<uint32_t>(request.length - done));
    if (!r.ok()) return Failed(request, r.error());
    if (r->data.empty()) break;
    if (done == 0 && r->data.size() == request.length) {
      o.data = std::move(r->data);
      return o;
    }
    if (o.data.empty()) o.data = ByteBuffer(request.length);
    std::memcpy(o.data.data() + done, r->data.data(), r->data.size());
    done += r->data.size();
  }
  if (o.data.empty()) o.data = ByteBuffer(request.length);
  std::memset(o.data.data() + done, 0, request.length - done);
  return o;
}

Outcome Transmission::BlockStatus(const Request& request) const {
  bool one = (request.flags & kCmdFlagReqOne) != 0;
  uint64_t end = request.offset + request.length;
  auto extents = fs_.MapExtents(kRoot, session_.export_info.ino, request.offset, request.length,
                                one ? 1 : kMaxStatusExtents);
  if (!extents.ok()) return Failed(request, extents.error());
  std::string body;
  PutU32(&body, kBaseAllocationId);
  uint64_t covered = request.offset;
  for (const fs::Extent& e : *extents) {
    PutU32(&body, static_cast<uint32_t>(e.length));
    PutU32(&body, e.data ? 0 : (kStateHole | kStateZero));
    covered = e.offset + e.length;
  }
  // Past the file's current end (it shrank since the handshake), or the
  // whole range when it did: reads as zeros.
  if (extents->empty() || (covered < end && extents->size() < kMaxStatusExtents && !one)) {
    if (covered < end) {
      PutU32(&body, static_cast<uint32_t>(end - covered));
      PutU32(&body, kStateHole | kStateZero);
    }
  }
  if (body.size() == 4) {  // nothing to describe cannot happen for length > 0
    return Done(request, kEio);
  }
  Outcome o;
  o.reply = ChunkHeader(kReplyFlagDone, kReplyTypeBlockStatus, request.cookie,
                        static_cast<uint32_t>(body.size()));
  o.reply.append(body);
  return o;
}

}  // namespace pail::nbd
