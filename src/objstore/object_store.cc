#include "objstore/object_store.h"

namespace pail {

Result<std::vector<ObjectMeta>> ListAll(ObjectStore& store, const std::string& prefix) {
  // 1000 matches S3's page size; it bounds each response, not the total.
  constexpr int kPageSize = 1000;
  std::vector<ObjectMeta> all;
  std::string token;
  do {
    PAIL_ASSIGN_OR_RETURN(ListPage page, store.List(prefix, token, kPageSize));
    for (auto& meta : page.objects) all.push_back(std::move(meta));
    token = std::move(page.next_token);
  } while (!token.empty());
  return all;
}

}  // namespace pail
