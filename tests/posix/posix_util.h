// Helpers the cases share. Each one fails the case (through CaseFailure)
// when the call it wraps fails, so case bodies stay about the behaviour
// under test rather than about setup errors.
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <set>
#include <string>

#include "posix_case.h"

namespace pail::posix {

// The node types a case can create with MakeNode. Devices need privilege.
enum class NodeType { kRegular, kDirectory, kFifo, kSymlink, kSocket, kCharDevice, kBlockDevice };

const char* NodeTypeName(NodeType type);
// The S_IFMT value lstat reports for the type.
mode_t NodeTypeBits(NodeType type);
// Creates `name` of the given type with permission bits `mode` (ignored for
// symlinks, whose target is "target").
void MakeNode(NodeType type, const std::string& name, mode_t mode = 0644);

// Creates (or truncates) a regular file holding `content`.
void WriteFile(const std::string& name, const std::string& content, mode_t mode = 0644);
std::string ReadFile(const std::string& name);
void MakeDir(const std::string& name, mode_t mode = 0755);

struct stat Lstat(const std::string& name);
struct stat Stat(const std::string& name);
bool Exists(const std::string& name);  // lstat succeeds
mode_t PermBits(const std::string& name);   // lstat st_mode & 07777
mode_t TypeBits(const std::string& name);   // lstat st_mode & S_IFMT
// Entry names of a directory, without "." and "..".
std::set<std::string> ListDir(const std::string& name);

// A string of `length` bytes that differs at every offset of a 4 KiB block,
// so misplaced or torn data is seen.
std::string Pattern(size_t length, unsigned seed = 1);

bool Before(const timespec& a, const timespec& b);
bool SameTime(const timespec& a, const timespec& b);
// Waits until the coarse clock is past `t`, so a timestamp taken by any
// later operation is strictly greater than `t`.
void WaitPast(const timespec& t);
// Snapshot of a file's timestamps, then a wait, so the caller can check
// which of them a following operation changed.
struct Times {
  timespec atime, mtime, ctime;
};
Times TimesOf(const std::string& name);
Times TimesBeforeChange(const std::string& name);

// A name one byte longer than NAME_MAX (255), and one exactly NAME_MAX.
std::string TooLongName();
std::string MaxName();

}  // namespace pail::posix
