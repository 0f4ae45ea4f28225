// RecordAssembler: ONC RPC record marking over a byte stream (RFC 5531 §11).
//
// On TCP each RPC message is a record sent as one or more fragments. Every
// fragment starts with a 4-byte big-endian word: the top bit says "last
// fragment of this record", the low 31 bits give the fragment's length.
//
// The assembler is fed whatever the socket delivered and consumes at most one
// record per call, so the caller can stop between records when it has enough
// work in flight. Lengths are checked against the record cap before anything
// is appended: a hostile header never allocates beyond `max_record_bytes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace pail::nfs {

// Top bit of a fragment header: this fragment ends its record.
constexpr uint32_t kLastFragmentBit = 0x80000000u;

class RecordAssembler {
 public:
  explicit RecordAssembler(size_t max_record_bytes) : max_record_bytes_(max_record_bytes) {}

  // Consumes a prefix of [data, data + size) and returns its length. Sets
  // *record_ready when a whole record is complete (take it with TakeRecord()
  // before feeding more). Fails when a record would exceed the cap; the
  // stream is then unusable and the connection must close.
  Result<size_t> Feed(const char* data, size_t size, bool* record_ready);

  std::string TakeRecord();

  // Bytes still expected by the fragment being read (0 between fragments):
  // lets the caller read large fragment bodies straight into the record.
  size_t pending_body_bytes() const { return header_filled_ == 4 ? fragment_remaining_ : 0; }
  // Appends bytes that belong to the current fragment body (at most
  // pending_body_bytes()); returns true when that completed the record.
  bool AppendBody(const char* data, size_t size);

 private:
  bool FinishFragmentIfDone();

  size_t max_record_bytes_;
  char header_[4] = {};
  size_t header_filled_ = 0;
  size_t fragment_remaining_ = 0;
  bool last_fragment_ = false;
  bool record_ready_ = false;
  std::string record_;
};

}  // namespace pail::nfs
