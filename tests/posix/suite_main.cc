// pail_posix_suite: POSIX conformance cases against any directory.
//
//   pail_posix_suite --dir D [--uid U --gid G [--groups a,b]] [--only c1,c2]
//                    [--skip c1,c2/name] [--list] [--keep] [--verbose]
//
// Must run as root: the runner creates each case's directory and hands it
// to the primary identity (root by default, or --uid/--gid/--groups), and
// cases switch to other users for permission checks. Prints a pass count
// per category, every failure, and finally "N passed, N failed"; exits 1
// if any case failed.
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "posix_case.h"
#include "posix_process.h"

namespace pail::posix {
namespace {

struct Options {
  std::string dir;
  Identity self = Context::Root();
  std::set<std::string> only;  // categories
  std::set<std::string> skip;  // categories or category/name
  bool list = false;
  bool keep = false;
  bool verbose = false;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "pail_posix_suite: %s\n"
               "usage: pail_posix_suite --dir D [--uid U --gid G [--groups a,b]] [--only c1,c2]\n"
               "                        [--skip cat[/name],...] [--list] [--keep] [--verbose]\n",
               why.c_str());
  std::exit(2);
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

unsigned long ParseId(const std::string& s, const char* flag) {
  char* end = nullptr;
  errno = 0;
  unsigned long v = std::strtoul(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v > 0xfffffffeul)
    Usage(std::string("bad number for ") + flag + ": " + s);
  return v;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  bool have_uid = false, have_gid = false, have_groups = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage("missing value for " + a);
      return argv[++i];
    };
    if (a == "--dir") {
      o.dir = value();
    } else if (a == "--uid") {
      o.self.uid = static_cast<uid_t>(ParseId(value(), "--uid"));
      have_uid = true;
    } else if (a == "--gid") {
      o.self.gid = static_cast<gid_t>(ParseId(value(), "--gid"));
      have_gid = true;
    } else if (a == "--groups") {
      o.self.groups.clear();
      for (const auto& g : SplitCommas(value()))
        o.self.groups.push_back(static_cast<gid_t>(ParseId(g, "--groups")));
      have_groups = true;
    } else if (a == "--only") {
      for (const auto& c : SplitCommas(value())) o.only.insert(c);
    } else if (a == "--skip") {
      for (const auto& c : SplitCommas(value())) o.skip.insert(c);
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--keep") {
      o.keep = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else {
      Usage("unknown argument " + a);
    }
  }
  if (have_uid != have_gid) Usage("--uid and --gid go together");
  if (!have_groups) o.self.groups = {o.self.gid};
  if (!o.list && o.dir.empty()) Usage("--dir is required");
  return o;
}

bool Selected(const Options& o, const Case& c) {
  if (!o.only.empty() && !o.only.count(c.category)) return false;
  return !o.skip.count(c.category) && !o.skip.count(c.category + "/" + c.name);
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  remove(path);
  return 0;  // keep going; RemoveTree reports what is left
}

// Removes a case directory. Runs as root, which may enter and delete
// whatever the case left, including directories with mode 0.
bool RemoveTree(const std::string& path) {
  nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  struct stat st;
  return lstat(path.c_str(), &st) != 0;
}

// Turns a case name into a directory name: letters, digits, '-' and '_'.
std::string DirNameFor(size_t index, const Case& c) {
  std::string name = std::to_string(index) + "-" + c.category + "-" + c.name;
  for (char& ch : name) {
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  }
  return name.substr(0, 200);
}

ChildOutcome RunCase(const Options& o, const std::string& base, size_t index, const Case& c) {
  std::string dir = base + "/" + DirNameFor(index, c);
  return RunInChild([&] {
    if (mkdir(dir.c_str(), 0755) != 0 || chown(dir.c_str(), o.self.uid, o.self.gid) != 0 ||
        chdir(dir.c_str()) != 0) {
      throw CaseFailure{"setup: case directory " + dir + ": " + std::strerror(errno)};
    }
    umask(0);
    SwitchIdentity(o.self, /*keep_root_saved=*/true);
    Context context(o.self, dir);
    c.body(context);
  });
}

int Main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  if (o.list) {
    for (const auto& c : Registry()) std::printf("%s/%s\n", c.category.c_str(), c.name.c_str());
    return 0;
  }
  if (geteuid() != 0) Usage("must run as root (cases switch between users)");
  std::string base = o.dir + "/pail-posix." + std::to_string(getpid());
  if (mkdir(base.c_str(), 0755) != 0) {
    std::fprintf(stderr, "pail_posix_suite: mkdir %s: %s\n", base.c_str(), std::strerror(errno));
    return 2;
  }
  std::map<std::string, std::pair<int, int>> per_category;  // passed, failed
  std::vector<std::string> category_order;
  int passed = 0, failed = 0;
  for (size_t i = 0; i < Registry().size(); ++i) {
    const Case& c = Registry()[i];
    if (!Selected(o, c)) continue;
    if (!per_category.count(c.category)) category_order.push_back(c.category);
    ChildOutcome outcome = RunCase(o, base, i, c);
    auto& counts = per_category[c.category];
    if (outcome.ok) {
      ++passed;
      ++counts.first;
      if (o.verbose) std::printf("ok   %s/%s\n", c.category.c_str(), c.name.c_str());
    } else {
      ++failed;
      ++counts.second;
      std::printf("FAIL %s/%s: %s\n", c.category.c_str(), c.name.c_str(), outcome.message.c_str());
    }
    std::fflush(stdout);
    std::string dir = base + "/" + DirNameFor(i, c);
    if (!o.keep && !RemoveTree(dir))
      std::printf("warning: could not remove %s\n", dir.c_str());
  }
  if (!o.keep) rmdir(base.c_str());
  std::printf("\nuid %u gid %u on %s\n", o.self.uid, o.self.gid, o.dir.c_str());
  for (const auto& name : category_order) {
    auto [p, f] = per_category[name];
    std::printf("  %-12s %4d/%-4d passed\n", name.c_str(), p, p + f);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace
}  // namespace pail::posix

int main(int argc, char** argv) { return pail::posix::Main(argc, argv); }
