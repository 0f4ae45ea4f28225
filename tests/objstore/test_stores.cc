#include "test_stores.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "objstore/digest.h"
#include "objstore/open_store.h"

namespace pail::testing {
namespace {

std::map<std::string, std::string> ReadEnvFile() {
  const char* root = std::getenv("OBJSTORES_ROOT");
  std::string path = std::string(root != nullptr && *root ? root : "/tmp/objstores") + "/env";
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

}  // namespace

CloudEnv LoadCloudEnv() {
  auto file = ReadEnvFile();
  auto get = [&](const char* name) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return std::string(v);
    auto it = file.find(name);
    return it == file.end() ? std::string() : it->second;
  };
  CloudEnv env;
  env.s3_endpoint = get("S3_ENDPOINT");
  env.s3_access_key = get("S3_ACCESS_KEY");
  env.s3_secret_key = get("S3_SECRET_KEY");
  env.s3_region = get("S3_REGION");
  env.az_endpoint = get("AZ_ENDPOINT");
  env.az_account = get("AZ_ACCOUNT");
  env.az_key = get("AZ_KEY");
  return env;
}

bool ObjstoresRequired() {
  const char* v = std::getenv("PAIL_REQUIRE_OBJSTORES");
  return v != nullptr && std::string(v) == "1";
}

AwsOptions AwsOptionsFrom(const CloudEnv& env) {
  AwsOptions o;
  o.access_key_id = env.s3_access_key;
  o.secret_access_key = env.s3_secret_key;
  o.region = env.s3_region;
  o.endpoint = env.s3_endpoint;
  o.allow_http = true;
  o.path_style = true;
  return o;
}

AzureOptions AzureOptionsFrom(const CloudEnv& env) {
  AzureOptions o;
  o.storage_account_name = env.az_account;
  o.storage_account_key = env.az_key;
  o.endpoint = env.az_endpoint;
  o.allow_http = true;
  return o;
}

std::string UniqueSuffix() { return RandomHex(6); }

std::shared_ptr<ObjectStore> OpenTestStore(const std::string& kind, std::string* why) {
  StoreOptions options;
  CloudEnv env = LoadCloudEnv();
  if (kind == "memory") {
    options.url = "memory://";
  } else if (kind == "file") {
    auto dir = std::filesystem::temp_directory_path() / ("pail-contract-" + UniqueSuffix());
    options.url = "file://" + dir.string();
  } else if (kind == "s3") {
    if (env.s3_endpoint.empty()) {
      *why = "no S3 server configured (S3_ENDPOINT or /tmp/objstores/env)";
      return nullptr;
    }
    options.url = "s3://pail-test/contract-" + UniqueSuffix();
    options.aws = AwsOptionsFrom(env);
  } else if (kind == "azure") {
    if (env.az_endpoint.empty()) {
      *why = "no Azure server configured (AZ_ENDPOINT or /tmp/objstores/env)";
      return nullptr;
    }
    options.url = "azure://pail-test/contract-" + UniqueSuffix();
    options.azure = AzureOptionsFrom(env);
  } else {
    ADD_FAILURE() << "unknown backend kind " << kind;
    return nullptr;
  }
  auto store = OpenBackend(options);
  if (!store.ok()) {
    ADD_FAILURE() << "opening " << kind << ": " << store.status().ToString();
    return nullptr;
  }
  return store.value();
}

}  // namespace pail::testing
