// LocalStore: a bucket in a local directory (`file:///path`).
//
// Layout: a key's '/'-separated components become nested directories. Each
// component is escaped (bytes outside [A-Za-z0-9._-] as %XX) and suffixed:
// ".d" for a directory, ".o" for an object, so "a" and "a/b" can both be
// keys. Temporary files live in ".tmp/" and never show in listings.
//
// Writes are atomic and durable: the body goes to a temp file which is
// fsynced, then renamed (or, for put-if-absent, hard-linked, which fails if
// the name exists) into place, and the directory is fsynced. Naming and
// deleting serialise on an flock of ".lock", so conditional writes are
// atomic against other processes sharing the directory too; the flushes
// stay outside it, so concurrent puts overlap them.
#pragma once

#include "objstore/object_store.h"
#include "objstore/spare_files.h"

namespace pail {

class LocalStore : public ObjectStore {
 public:
  // Creates `root` if needed.
  static Result<std::unique_ptr<LocalStore>> Open(const std::string& root);

  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;
  Status Delete(const std::string& key) override;
  std::string Describe() const override { return "file://" + root_; }
  bool IsLocal() const override { return true; }

 private:
  explicit LocalStore(std::string root);

  enum class WriteMode { kReplace, kIfAbsent, kIfMatch };
  Result<std::string> Write(const std::string& key, std::string_view body, WriteMode mode,
                            const std::string& etag);
  // Moves the written temp file to `path`, the file of `key`, as `mode`
  // says; NotFound when a directory of `path` is missing.
  Status Place(const std::string& temp, const std::string& key, const std::string& path,
               WriteMode mode, const std::string& etag);
  std::string PathOf(const std::string& key) const;
  Result<std::string> WriteTemp(std::string_view body);

  std::string root_;
  SpareFiles spares_;  // in the temp directory
};

}  // namespace pail
