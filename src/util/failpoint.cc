#include "util/failpoint.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include <spdlog/spdlog.h>

namespace pail {
namespace failpoint_internal {

namespace {

struct Point {
  FailAction action = FailAction::kError;
  int hits_left = 1;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, Point> points;
  std::map<std::string, int> fired;
};

void ArmLocked(Registry& r, const std::string& name, FailAction action, int hit) {
  if (!r.points.count(name)) armed.fetch_add(1);
  r.points[name] = Point{action, hit < 1 ? 1 : hit};
}

// PAIL_FAILPOINTS="name=exit,other=error@3,third=retryable", read once.
void ArmFromEnvironment(Registry& r) {
  const char* spec = std::getenv("PAIL_FAILPOINTS");
  if (!spec) return;
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string name = item.substr(0, eq), what = item.substr(eq + 1);
    int hit = 1;
    if (auto at = what.find('@'); at != std::string::npos) {
      hit = std::atoi(what.c_str() + at + 1);
      what.resize(at);
    }
    FailAction action;
    if (what == "exit") {
      action = FailAction::kExit;
    } else if (what == "error") {
      action = FailAction::kError;
    } else if (what == "retryable") {
      action = FailAction::kRetryable;
    } else {
      continue;
    }
    ArmLocked(r, name, action, hit);
  }
}

Registry& GetRegistry() {
  static Registry* registry = [] {
    auto* r = new Registry;
    ArmFromEnvironment(*r);
    return r;
  }();
  return *registry;
}

// Reads the environment at program start, so that `armed` is set before
// the first PAIL_FAILPOINT is evaluated.
const bool kEnvironmentRead = (GetRegistry(), true);

}  // namespace

std::atomic<int> armed{0};

Status Evaluate(const char* name) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  auto it = r.points.find(name);
  if (it == r.points.end()) return Status::OK();
  if (--it->second.hits_left > 0) return Status::OK();
  FailAction action = it->second.action;
  r.points.erase(it);
  armed.fetch_sub(1);
  ++r.fired[name];
  if (action == FailAction::kExit) {
    spdlog::warn("failpoint {}: exiting", name);
    ::_exit(kFailpointExitCode);
  }
  if (action == FailAction::kRetryable) return Status::Retryable(std::string("failpoint ") + name);
  // Not retryable: RocksDB treats a failed step as final, as after a crash.
  return Status::IOError(std::string("failpoint ") + name);
}

}  // namespace failpoint_internal

void ArmFailpoint(const std::string& name, FailAction action, int hit) {
  auto& r = failpoint_internal::GetRegistry();
  std::lock_guard lock(r.mu);
  failpoint_internal::ArmLocked(r, name, action, hit);
}

void DisarmAllFailpoints() {
  auto& r = failpoint_internal::GetRegistry();
  std::lock_guard lock(r.mu);
  failpoint_internal::armed.fetch_sub(static_cast<int>(r.points.size()));
  r.points.clear();
  r.fired.clear();
}

int FailpointFired(const std::string& name) {
  auto& r = failpoint_internal::GetRegistry();
  std::lock_guard lock(r.mu);
  auto it = r.fired.find(name);
  return it == r.fired.end() ? 0 : it->second;
}

}  // namespace pail
