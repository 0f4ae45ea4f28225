// Transmission: checking and running one request against the export a
// handshake chose, free of sockets. Execute() blocks on the filesystem and
// runs on a worker thread; any number may run at once for one connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fs/filesystem.h"
#include "nbd/handshake.h"
#include "nbd/wire.h"

namespace pail::nbd {

// BLOCK_STATUS describes at most this many extents per reply.
inline constexpr size_t kMaxStatusExtents = 1024;

// What the connection does with a request header before its payload.
struct Admission {
  bool close = false;    // bad magic or an oversized write: hang up
  uint32_t payload = 0;  // bytes of data that follow the header
  // Bytes this request may hold in memory (payload or reply data), for the
  // connection's in-flight bound.
  size_t memory = 0;
};
Admission Admit(const Request& request);

struct Outcome {
  std::string reply;          // empty for DISC
  // A READ's data, sent right after `reply` (kept apart so the bytes the
  // filesystem returned go to the socket with no copy into `reply`).
  ByteBuffer data;
  bool close_after = false;   // DISC, or the export's file is gone
  uint32_t error = 0;         // the NBD error replied (0: success), for metrics
};

class Transmission {
 public:
  Transmission(fs::FileSystem& fs, const Session& session) : fs_(fs), session_(session) {}

  // Runs one request and counts it in the "nbd" protocol metrics.
  Outcome Execute(const Request& request, std::string_view payload) const;
  // Execute() of a READ or a WRITE without FUA that needs no waiting
  // (FileSystem::TryRead, TryWrite: bytes in memory or the local cache,
  // room in the write-back buffer, the file's lock free), on the
  // connection's I/O thread, saving the hand-off to a worker and back.
  // nullopt, nothing done or counted, for anything else: the request then
  // goes to Execute().
  std::optional<Outcome> TryExecute(const Request& request, std::string_view payload) const;

 private:
  Outcome Run(const Request& request, std::string_view payload) const;
  // The error to reply, or 0 when the request may run.
  uint32_t Check(const Request& request) const;
  Outcome Read(const Request& request) const;
  // The reply header of a successful READ, before its data.
  std::string ReadReplyHeader(const Request& request) const;
  Outcome BlockStatus(const Request& request) const;
  // Success or `error`, in the negotiated reply style.
  Outcome Done(const Request& request, uint32_t error) const;
  // Maps a filesystem errno; a vanished file also closes the connection.
  Outcome Failed(const Request& request, int error) const;

  fs::FileSystem& fs_;
  const Session& session_;
};

}  // namespace pail::nbd
