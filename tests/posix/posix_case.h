// A tiny case framework for the POSIX conformance suite.
//
// Every case runs in its own forked process, inside a fresh directory that
// is its working directory, with umask 0, as the suite's primary identity
// (root, or the unprivileged uid/gid/groups given on the command line). The
// primary identity keeps a saved uid of 0 so a case can run a piece of
// itself as another user (As) or as root (AsRoot) in a further child; the
// file-system checks themselves only ever see the effective ids.
//
// A case states its expectations with the EXPECT_* macros below; the first
// unmet one ends the case with a message naming the file, line and call.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

namespace pail::posix {

struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, gid need not be listed
};

// Unprivileged users the cases act as besides the primary identity. Their
// ids are chosen far from real accounts; they need no /etc/passwd entry.
// bob is also a member of kSharedGid, alice is not.
inline constexpr uid_t kAliceUid = 65501;
inline constexpr gid_t kAliceGid = 65501;
inline constexpr uid_t kBobUid = 65502;
inline constexpr gid_t kBobGid = 65502;
inline constexpr gid_t kSharedGid = 65503;

class Context {
 public:
  Context(Identity self, std::string dir) : self_(std::move(self)), dir_(std::move(dir)) {}

  const Identity& self() const { return self_; }
  bool privileged() const { return self_.uid == 0; }
  // Absolute path of the case's fresh directory (also the cwd).
  const std::string& dir() const { return dir_; }

  static Identity Alice() { return {kAliceUid, kAliceGid, {kAliceGid}}; }
  static Identity Bob() { return {kBobUid, kBobGid, {kBobGid, kSharedGid}}; }
  static Identity Root() { return {0, 0, {0}}; }

  // Runs fn in a child process with exactly the given credentials and the
  // same cwd; an unmet expectation inside fails the case.
  void As(const Identity& who, const std::function<void()>& fn) const;
  void AsRoot(const std::function<void()>& fn) const { As(Root(), fn); }

 private:
  Identity self_;
  std::string dir_;
};

using CaseBody = std::function<void(Context&)>;

struct Case {
  std::string category;
  std::string name;
  CaseBody body;
};

std::vector<Case>& Registry();
void Register(std::string category, std::string name, CaseBody body);

// Thrown by an unmet expectation; carries the explanation.
struct CaseFailure {
  std::string message;
};

[[noreturn]] void Fail(const char* file, int line, const std::string& what);

// Syscall-style result: >= 0 is success, -1 sets errno.
long ExpectOk(long rc, const char* expr, const char* file, int line);
void ExpectErrno(long rc, std::initializer_list<int> allowed, const char* expr, const char* file,
                 int line);

std::string Describe(long long v);
std::string Describe(const std::string& v);
inline std::string Describe(const char* v) { return Describe(std::string(v)); }
std::string Describe(const std::set<std::string>& names);

// Registers the cases of one source file at static-initialisation time.
struct Registrar {
  explicit Registrar(void (*add)()) { add(); }
};

}  // namespace pail::posix

#define POSIX_CONCAT_INNER(a, b) a##b
#define POSIX_CONCAT(a, b) POSIX_CONCAT_INNER(a, b)

// POSIX_CASE(category, name) { body using `c` }
#define POSIX_CASE(category, name)                                                        \
  static void POSIX_CONCAT(posix_case_, __LINE__)(::pail::posix::Context & c);            \
  static ::pail::posix::Registrar POSIX_CONCAT(posix_reg_, __LINE__)([] {                  \
    ::pail::posix::Register(category, name, POSIX_CONCAT(posix_case_, __LINE__));          \
  });                                                                                     \
  static void POSIX_CONCAT(posix_case_, __LINE__)([[maybe_unused]] ::pail::posix::Context & c)

// POSIX_CASES { code calling Register(...) in loops }
#define POSIX_CASES                                                                                 \
  static void POSIX_CONCAT(posix_cases_, __LINE__)();                                               \
  static ::pail::posix::Registrar POSIX_CONCAT(posix_reg_, __LINE__)(POSIX_CONCAT(posix_cases_, __LINE__)); \
  static void POSIX_CONCAT(posix_cases_, __LINE__)()

#define EXPECT_OK(expr) ::pail::posix::ExpectOk((long)(expr), #expr, __FILE__, __LINE__)
#define EXPECT_ERRNO(expr, ...) \
  ::pail::posix::ExpectErrno((long)(expr), {__VA_ARGS__}, #expr, __FILE__, __LINE__)
#define EXPECT_TRUE(cond)                                         \
  do {                                                            \
    if (!(cond)) ::pail::posix::Fail(__FILE__, __LINE__, #cond);  \
  } while (0)
#define EXPECT_EQ(actual, expected)                                                          \
  do {                                                                                       \
    const auto& _a = (actual);                                                               \
    const auto& _e = (expected);                                                             \
    if (!(_a == _e))                                                                         \
      ::pail::posix::Fail(__FILE__, __LINE__,                                                \
                          std::string(#actual " == " #expected ": got ") +                   \
                              ::pail::posix::Describe(_a) + ", want " +                     \
                              ::pail::posix::Describe(_e));                                 \
  } while (0)
