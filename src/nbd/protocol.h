// The NBD protocol's numbers (the "fixed newstyle" negotiation and the
// transmission phase of the NBD protocol document, doc/proto.md of the nbd
// project). Everything on the wire is big-endian.
//
// Negotiation: the server sends kNbdMagic, kOptionMagic and 16 bits of
// handshake flags; the client answers with 32 bits of client flags. Then
// the client sends options, each kOptionMagic, option (32), length (32) and
// `length` bytes of data, and the server answers each with one or more
// replies: kOptionReplyMagic, option (32), reply type (32), length (32),
// data. NBD_OPT_GO (or NBD_OPT_EXPORT_NAME, which has its own reply without
// the reply header) ends negotiation.
//
// Transmission: requests are kRequestMagic, command flags (16), type (16),
// cookie (64), offset (64), length (32), then `length` bytes for WRITE.
// Simple replies are kSimpleReplyMagic, error (32), cookie (64), then the
// data for a successful READ. Structured replies (once negotiated) are
// chunks: kStructuredReplyMagic, flags (16), type (16), cookie (64),
// length (32), payload; the last chunk of a request carries kReplyFlagDone.
#pragma once

#include <cstdint>

namespace pail::nbd {

inline constexpr uint64_t kNbdMagic = 0x4e42444d41474943;          // "NBDMAGIC"
inline constexpr uint64_t kOptionMagic = 0x49484156454f5054;       // "IHAVEOPT"
inline constexpr uint64_t kOptionReplyMagic = 0x0003e889045565a9;
inline constexpr uint32_t kRequestMagic = 0x25609513;
inline constexpr uint32_t kSimpleReplyMagic = 0x67446698;
inline constexpr uint32_t kStructuredReplyMagic = 0x668e33ef;

// Handshake flags (server) and client flags.
inline constexpr uint16_t kFlagFixedNewstyle = 1 << 0;
inline constexpr uint16_t kFlagNoZeroes = 1 << 1;
inline constexpr uint32_t kClientFixedNewstyle = 1 << 0;
inline constexpr uint32_t kClientNoZeroes = 1 << 1;

// Options.
inline constexpr uint32_t kOptExportName = 1;
inline constexpr uint32_t kOptAbort = 2;
inline constexpr uint32_t kOptList = 3;
inline constexpr uint32_t kOptStartTls = 5;
inline constexpr uint32_t kOptInfo = 6;
inline constexpr uint32_t kOptGo = 7;
inline constexpr uint32_t kOptStructuredReply = 8;
inline constexpr uint32_t kOptListMetaContext = 9;
inline constexpr uint32_t kOptSetMetaContext = 10;

// Option reply types; errors have the top bit set.
inline constexpr uint32_t kRepAck = 1;
inline constexpr uint32_t kRepServer = 2;
inline constexpr uint32_t kRepInfo = 3;
inline constexpr uint32_t kRepMetaContext = 4;
inline constexpr uint32_t kRepErrUnsup = 0x80000001;
inline constexpr uint32_t kRepErrPolicy = 0x80000002;
inline constexpr uint32_t kRepErrInvalid = 0x80000003;
inline constexpr uint32_t kRepErrUnknown = 0x80000006;
inline constexpr uint32_t kRepErrTooBig = 0x80000009;

// NBD_REP_INFO types.
inline constexpr uint16_t kInfoExport = 0;
inline constexpr uint16_t kInfoName = 1;
inline constexpr uint16_t kInfoDescription = 2;
inline constexpr uint16_t kInfoBlockSize = 3;

// Transmission flags.
inline constexpr uint16_t kTransHasFlags = 1 << 0;
inline constexpr uint16_t kTransSendFlush = 1 << 2;
inline constexpr uint16_t kTransSendFua = 1 << 3;
inline constexpr uint16_t kTransSendTrim = 1 << 5;
inline constexpr uint16_t kTransSendWriteZeroes = 1 << 6;
inline constexpr uint16_t kTransSendDf = 1 << 7;
inline constexpr uint16_t kTransCanMultiConn = 1 << 8;
inline constexpr uint16_t kTransSendCache = 1 << 10;
inline constexpr uint16_t kTransSendFastZero = 1 << 11;

// Commands and their flags.
inline constexpr uint16_t kCmdRead = 0;
inline constexpr uint16_t kCmdWrite = 1;
inline constexpr uint16_t kCmdDisc = 2;
inline constexpr uint16_t kCmdFlush = 3;
inline constexpr uint16_t kCmdTrim = 4;
inline constexpr uint16_t kCmdCache = 5;
inline constexpr uint16_t kCmdWriteZeroes = 6;
inline constexpr uint16_t kCmdBlockStatus = 7;
inline constexpr uint16_t kCmdFlagFua = 1 << 0;
inline constexpr uint16_t kCmdFlagNoHole = 1 << 1;
inline constexpr uint16_t kCmdFlagDf = 1 << 2;
inline constexpr uint16_t kCmdFlagReqOne = 1 << 3;
inline constexpr uint16_t kCmdFlagFastZero = 1 << 4;

// Structured reply chunk flags and types.
inline constexpr uint16_t kReplyFlagDone = 1 << 0;
inline constexpr uint16_t kReplyTypeNone = 0;
inline constexpr uint16_t kReplyTypeOffsetData = 1;
inline constexpr uint16_t kReplyTypeBlockStatus = 5;
inline constexpr uint16_t kReplyTypeError = 0x8001;

// Errors carried by replies (their own numbering, not the host's errno).
inline constexpr uint32_t kEperm = 1;
inline constexpr uint32_t kEio = 5;
inline constexpr uint32_t kEnomem = 12;
inline constexpr uint32_t kEinval = 22;
inline constexpr uint32_t kEnospc = 28;
inline constexpr uint32_t kEoverflow = 75;
inline constexpr uint32_t kEnotsup = 95;
inline constexpr uint32_t kEshutdown = 108;

// base:allocation descriptor flags.
inline constexpr uint32_t kStateHole = 1 << 0;
inline constexpr uint32_t kStateZero = 1 << 1;

inline constexpr const char* kBaseAllocation = "base:allocation";
// Our one meta context's id on every connection.
inline constexpr uint32_t kBaseAllocationId = 1;

// Sizes of the fixed parts.
inline constexpr size_t kOptionHeaderBytes = 16;
inline constexpr size_t kRequestHeaderBytes = 28;
inline constexpr size_t kExportNameReplyZeroes = 124;

}  // namespace pail::nbd
