#include "posix_case.h"

#include <cstdio>
#include <string>

#include "posix_process.h"

namespace pail::posix {

std::vector<Case>& Registry() {
  static std::vector<Case> cases;
  return cases;
}

void Register(std::string category, std::string name, CaseBody body) {
  Registry().push_back({std::move(category), std::move(name), std::move(body)});
}

void Fail(const char* file, int line, const std::string& what) {
  const char* base = std::strrchr(file, '/');
  throw CaseFailure{std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": " + what};
}

long ExpectOk(long rc, const char* expr, const char* file, int line) {
  if (rc < 0) Fail(file, line, std::string(expr) + " failed: " + std::strerror(errno));
  return rc;
}

void ExpectErrno(long rc, std::initializer_list<int> allowed, const char* expr, const char* file,
                 int line) {
  std::string want;
  for (int e : allowed) want += std::string(want.empty() ? "" : " or ") + strerrorname_np(e);
  if (rc >= 0) Fail(file, line, std::string(expr) + " succeeded, want " + want);
  int got = errno;
  for (int e : allowed) {
    if (got == e) return;
  }
  const char* got_name = strerrorname_np(got);
  Fail(file, line,
       std::string(expr) + ": got " + (got_name ? got_name : std::to_string(got)) + ", want " + want);
}

std::string Describe(long long v) {
  // Modes read best in octal; everything else in decimal.
  if (v >= 0 && v <= 0177777) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld (0%llo)", v, v);
    return buf;
  }
  return std::to_string(v);
}

std::string Describe(const std::string& v) {
  if (v.size() > 64) return "<" + std::to_string(v.size()) + " bytes>";
  return "\"" + v + "\"";
}

std::string Describe(const std::set<std::string>& names) {
  std::string out = "{";
  for (const auto& name : names) out += (out.size() > 1 ? ", " : "") + Describe(name);
  return out + "}";
}

void Context::As(const Identity& who, const std::function<void()>& fn) const {
  std::string label = "as uid " + std::to_string(who.uid) + ": ";
  ChildOutcome outcome = RunInChild([&] {
    SwitchIdentity(who, /*keep_root_saved=*/false);
    fn();
  });
  if (!outcome.ok) throw CaseFailure{label + outcome.message};
}

}  // namespace pail::posix
