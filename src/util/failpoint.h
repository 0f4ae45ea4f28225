// Failpoints: named steps at which a test can make the process fail.
//
// A failpoint sits at a step whose order the design depends on (between an
// upload and the manifest that names it, between a garbage check and its
// delete, ...). Unarmed, PAIL_FAILPOINT costs one relaxed atomic load. Armed,
// it either returns an IOError from that step (kError: the step's effects so
// far stay, as when a response is lost; RocksDB treats it as final), a
// retryable error (kRetryable: as a store outage at that step; RocksDB's
// background work stops until resumed) or ends the process on the spot with
// _exit (kExit: a crash at exactly that step).
//
// Tests arm points with ArmFailpoint(); a process-level crash test arms them
// in a child through the environment:
//   PAIL_FAILPOINTS="name=exit,other=error@3,third=retryable"
// ("@N": fire on the Nth hit, counting from 1; default the first). Points
// fire once and then disarm. The list of points is in docs/engine.md.
#pragma once

#include <atomic>
#include <string>

#include "util/status.h"

namespace pail {

enum class FailAction { kError, kRetryable, kExit };

// Arms `name` to fire on its `hit`th evaluation (1 = the next one).
void ArmFailpoint(const std::string& name, FailAction action, int hit = 1);
void DisarmAllFailpoints();
// How often `name` fired since the last DisarmAllFailpoints.
int FailpointFired(const std::string& name);

namespace failpoint_internal {
extern std::atomic<int> armed;
Status Evaluate(const char* name);
}  // namespace failpoint_internal

// The exit code of a process ended by a kExit failpoint.
constexpr int kFailpointExitCode = 86;

}  // namespace pail

namespace pail {
// The failpoint's error when it fires, else OK.
inline Status Failpoint(const char* name) {
  if (failpoint_internal::armed.load(std::memory_order_relaxed) == 0) return Status::OK();
  return failpoint_internal::Evaluate(name);
}
}  // namespace pail

// Returns the failpoint's error from the enclosing function when it fires.
#define PAIL_FAILPOINT(name) PAIL_RETURN_IF_ERROR(::pail::Failpoint(name))
