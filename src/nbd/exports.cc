#include "nbd/exports.h"

namespace pail::nbd {

using fs::Credentials;
using fs::FsError;

Status Exports::EnsureDirectory() {
  auto found = fs_.Lookup(Credentials::Root(), fs::kRootIno, kExportDirectory);
  if (found.ok()) {
    if (!found->is_dir()) {
      return Status::InvalidArgument(std::string("/") + kExportDirectory +
                                     " exists and is not a directory");
    }
    return Status::OK();
  }
  if (found.error() != ENOENT) {
    return Status::IOError(std::string("looking up /") + kExportDirectory + ": errno " +
                           std::to_string(found.error()));
  }
  auto made = fs_.Mkdir(Credentials::Root(), fs::kRootIno, kExportDirectory, 0755);
  if (!made.ok() && made.error() != EEXIST) {
    return Status::IOError(std::string("creating /") + kExportDirectory + ": errno " +
                           std::to_string(made.error()));
  }
  return Status::OK();
}

fs::FsResult<fs::Ino> Exports::Directory() {
  auto dir = fs_.Lookup(Credentials::Root(), fs::kRootIno, kExportDirectory);
  if (!dir.ok()) return dir.status();
  if (!dir->is_dir()) return FsError{ENOENT};
  return dir->ino;
}

fs::FsResult<ExportInfo> Exports::Find(std::string_view name) {
  if (name.empty() || name.size() > fs::kNameMax || name == "." || name == ".." ||
      name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return FsError{ENOENT};
  }
  auto dir = Directory();
  if (!dir.ok()) return dir.status();
  auto attr = fs_.Lookup(Credentials::Root(), *dir, name);
  if (!attr.ok()) return attr.status();
  if (!attr->is_reg()) return FsError{ENOENT};
  return ExportInfo{std::string(name), attr->ino, attr->size};
}

fs::FsResult<std::vector<std::string>> Exports::List(size_t max) {
  auto dir = Directory();
  if (!dir.ok()) return dir.status();
  std::vector<std::string> names;
  uint64_t cookie = 0;
  while (names.size() < max) {
    auto page = fs_.ReadDir(Credentials::Root(), *dir, cookie, 256, /*with_attrs=*/false);
    if (!page.ok()) return page.status();
    for (auto& entry : page->entries) {
      cookie = entry.next_cookie;
      if (S_ISREG(entry.type) && names.size() < max) names.push_back(std::move(entry.name));
    }
    if (page->eof || page->entries.empty()) break;
  }
  return names;
}

}  // namespace pail::nbd
