// Handshake: the fixed newstyle negotiation of one connection, free of
// sockets. The connection reads an option header and its data and hands
// them here; the replies come back as bytes to send.
//
// Supported: EXPORT_NAME, GO, INFO, LIST, ABORT, STRUCTURED_REPLY,
// LIST_META_CONTEXT and SET_META_CONTEXT (base:allocation). STARTTLS is
// refused with NBD_REP_ERR_POLICY (no TLS: serve on loopback or a trusted
// network); any other option gets NBD_REP_ERR_UNSUP.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nbd/exports.h"

namespace pail::nbd {

// Option data above this closes the connection (names are at most 4096
// bytes, so real clients never come near it).
inline constexpr uint32_t kMaxOptionBytes = 64 * 1024;
// Block size constraints we advertise: any alignment works, 4 KiB is best,
// and a request carries at most kMaxPayloadBytes of data.
inline constexpr uint32_t kMinBlockSize = 1;
inline constexpr uint32_t kPreferredBlockSize = 4096;
inline constexpr uint32_t kMaxPayloadBytes = 32u << 20;
// NBD_OPT_LIST names at most this many exports.
inline constexpr size_t kMaxListedExports = 10000;

// What the transmission phase needs to know.
struct Session {
  ExportInfo export_info;
  uint16_t transmission_flags = 0;
  bool structured_replies = false;
  bool base_allocation = false;
};

enum class OptionOutcome {
  kContinue,  // read the next option
  kClose,     // send the replies, then close
  kTransmit,  // send the replies, then start transmission with session()
};

class Handshake {
 public:
  explicit Handshake(Exports& exports) : exports_(exports) {}

  // The server's first bytes.
  static std::string Greeting();
  // The client's flags; false when they cannot be honoured (close).
  bool SetClientFlags(uint32_t flags);
  // One option; replies are appended to *out. May block on the filesystem.
  OptionOutcome HandleOption(uint32_t option, std::string_view data, std::string* out);

  const Session& session() const { return session_; }

 private:
  OptionOutcome ExportName(std::string_view data, std::string* out);
  OptionOutcome InfoOrGo(uint32_t option, std::string_view data, std::string* out);
  OptionOutcome List(std::string_view data, std::string* out);
  OptionOutcome MetaContext(uint32_t option, std::string_view data, std::string* out);
  uint16_t TransmissionFlags() const;

  Exports& exports_;
  bool no_zeroes_ = false;
  Session session_;
  // The export SET_META_CONTEXT chose its contexts for.
  std::string meta_export_;
};

}  // namespace pail::nbd
