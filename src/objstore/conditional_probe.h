// A start-up check that a store really honours conditional writes.
//
// Writer fencing rests on put-if-absent (and if-match) being atomic on the
// server. Some S3-compatible stores accept the headers and ignore them,
// which would let two writers both "win". The probe writes a scratch key
// under ".pail-probe/", checks that a second put-if-absent and an if-match
// with a stale etag are both refused, and deletes the key again.
#pragma once

#include "objstore/object_store.h"

namespace pail {

constexpr char kProbePrefix[] = ".pail-probe/";

// OK when conditional writes work. Otherwise kPermanent explaining that
// writer fencing needs them, unless `allow_unsafe` (single-writer setups
// that accept the risk), in which case a warning is logged and OK returned.
// Transport and permission errors are returned as they are.
Status ProbeConditionalWrites(ObjectStore& store, bool allow_unsafe);

}  // namespace pail
