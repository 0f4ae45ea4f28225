// 9P2000.L on the wire: message numbers and the protocol's constants.
//
// Every message is size[4] type[1] tag[2] followed by its fields, all
// little-endian; size counts the whole message including itself. Strings
// are len[2] + bytes (no NUL); a qid is type[1] version[4] path[8]. The
// per-message field lists live beside the handlers (session_*.cc) and in
// docs/ninep.md.
#pragma once

#include <cstdint>

namespace pail::ninep {

inline constexpr uint32_t kHeaderBytes = 7;  // size[4] type[1] tag[2]
inline constexpr uint16_t kNoTag = 0xffff;
inline constexpr uint32_t kNoFid = 0xffffffff;
inline constexpr uint32_t kNoUid = 0xffffffff;  // n_uname not given
inline constexpr uint16_t kMaxWalkNames = 16;   // MAXWELEM
inline constexpr char kVersion9P2000L[] = "9P2000.L";
// The smallest msize we accept: a header plus room for a useful payload.
inline constexpr uint32_t kMinMsize = 4096;
// Read/write reply and request overhead: header + count[4] (+ fid, offset).
inline constexpr uint32_t kReadReplyOverhead = kHeaderBytes + 4;
inline constexpr uint32_t kWriteRequestOverhead = kHeaderBytes + 4 + 8 + 4;

enum MessageType : uint8_t {
  kTlerror = 6, kRlerror = 7,
  kTstatfs = 8, kRstatfs = 9,
  kTlopen = 12, kRlopen = 13,
  kTlcreate = 14, kRlcreate = 15,
  kTsymlink = 16, kRsymlink = 17,
  kTmknod = 18, kRmknod = 19,
  kTrename = 20, kRrename = 21,
  kTreadlink = 22, kRreadlink = 23,
  kTgetattr = 24, kRgetattr = 25,
  kTsetattr = 26, kRsetattr = 27,
  kTxattrwalk = 30, kRxattrwalk = 31,
  kTxattrcreate = 32, kRxattrcreate = 33,
  kTreaddir = 40, kRreaddir = 41,
  kTfsync = 50, kRfsync = 51,
  kTlock = 52, kRlock = 53,
  kTgetlock = 54, kRgetlock = 55,
  kTlink = 70, kRlink = 71,
  kTmkdir = 72, kRmkdir = 73,
  kTrenameat = 74, kRrenameat = 75,
  kTunlinkat = 76, kRunlinkat = 77,
  kTversion = 100, kRversion = 101,
  kTauth = 102, kRauth = 103,
  kTattach = 104, kRattach = 105,
  kTflush = 108, kRflush = 109,
  kTwalk = 110, kRwalk = 111,
  kTread = 116, kRread = 117,
  kTwrite = 118, kRwrite = 119,
  kTclunk = 120, kRclunk = 121,
  kTremove = 122, kRremove = 123,
};

// qid.type bits.
inline constexpr uint8_t kQidDir = 0x80;
inline constexpr uint8_t kQidSymlink = 0x02;
inline constexpr uint8_t kQidFile = 0x00;

// Tlopen/Tlcreate flags (P9_DOTL_*). They equal Linux x86 open(2) flags but
// are a protocol constant, so they are translated explicitly.
inline constexpr uint32_t kDotlAccMode = 03;
inline constexpr uint32_t kDotlCreate = 0100;
inline constexpr uint32_t kDotlExcl = 0200;
inline constexpr uint32_t kDotlTrunc = 01000;
inline constexpr uint32_t kDotlAppend = 02000;
inline constexpr uint32_t kDotlDirectory = 0200000;

// Tgetattr request/valid mask: BASIC is every field of struct stat.
inline constexpr uint64_t kGetattrBasic = 0x000007ff;

// Tsetattr valid bits.
inline constexpr uint32_t kSetattrMode = 0x001;
inline constexpr uint32_t kSetattrUid = 0x002;
inline constexpr uint32_t kSetattrGid = 0x004;
inline constexpr uint32_t kSetattrSize = 0x008;
inline constexpr uint32_t kSetattrAtime = 0x010;
inline constexpr uint32_t kSetattrMtime = 0x020;
inline constexpr uint32_t kSetattrCtime = 0x040;
inline constexpr uint32_t kSetattrAtimeSet = 0x080;
inline constexpr uint32_t kSetattrMtimeSet = 0x100;

// Tunlinkat flags.
inline constexpr uint32_t kAtRemoveDir = 0x200;

// Tlock/Tgetlock.
inline constexpr uint8_t kLockTypeRead = 0;
inline constexpr uint8_t kLockTypeWrite = 1;
inline constexpr uint8_t kLockTypeUnlock = 2;
inline constexpr uint8_t kLockSuccess = 0;
inline constexpr uint8_t kLockBlocked = 1;
inline constexpr uint8_t kLockError = 2;
inline constexpr uint32_t kLockFlagBlock = 1;

// Rstatfs type: the Linux V9FS_MAGIC.
inline constexpr uint32_t kV9fsMagic = 0x01021997;

}  // namespace pail::ninep
