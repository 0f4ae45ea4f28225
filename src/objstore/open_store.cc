#include "objstore/open_store.h"

#include "objstore/azure_store.h"
#include "objstore/conditional_probe.h"
#include "objstore/local_store.h"
#include "objstore/memory_store.h"
#include "objstore/s3_store.h"

namespace pail {

Result<std::shared_ptr<ObjectStore>> OpenBackend(const StoreOptions& options) {
  const std::string& url = options.url;
  auto has_scheme = [&](const char* scheme) { return url.rfind(scheme, 0) == 0; };
  if (has_scheme("file://")) {
    PAIL_ASSIGN_OR_RETURN(auto store, LocalStore::Open(url.substr(7)));
    return std::shared_ptr<ObjectStore>(std::move(store));
  }
  if (has_scheme("memory://")) return std::shared_ptr<ObjectStore>(std::make_shared<MemoryStore>());
  // Cloud stores may silently ignore conditional headers: probe before use.
  if (has_scheme("s3://")) {
    PAIL_ASSIGN_OR_RETURN(auto store, S3Store::Open(url, options.aws));
    PAIL_RETURN_IF_ERROR(ProbeConditionalWrites(*store, options.allow_unsafe_no_conditional_writes));
    return std::shared_ptr<ObjectStore>(std::move(store));
  }
  if (has_scheme("azure://")) {
    PAIL_ASSIGN_OR_RETURN(auto store, AzureStore::Open(url, options.azure));
    PAIL_RETURN_IF_ERROR(ProbeConditionalWrites(*store, options.allow_unsafe_no_conditional_writes));
    return std::shared_ptr<ObjectStore>(std::move(store));
  }
  return Status::InvalidArgument("unsupported storage url '" + url +
                                 "': use file:///path, memory://, s3://bucket/prefix or "
                                 "azure://container/prefix");
}

}  // namespace pail
