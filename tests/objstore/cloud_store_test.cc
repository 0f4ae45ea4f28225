// Start-up behaviour of the S3 and Azure backends against the loopback
// servers: authentication errors, bucket creation, configuration from the
// environment, the conditional-write probe, and secrets kept out of text.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "objstore/azure_store.h"
#include "objstore/conditional_probe.h"
#include "objstore/digest.h"
#include "objstore/memory_store.h"
#include "objstore/open_store.h"
#include "objstore/s3_store.h"
#include "test_stores.h"

namespace pail {
namespace {

using testing::AwsOptionsFrom;
using testing::AzureOptionsFrom;
using testing::CloudEnv;
using testing::LoadCloudEnv;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class S3StartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = LoadCloudEnv();
    if (env_.s3_endpoint.empty()) PAIL_SKIP_UNLESS_REQUIRED("no S3 server configured");
  }
  // Removes an empty bucket, so test runs do not pile buckets up; returns
  // the HTTP status (204 when it went).
  long DeleteBucket(const std::string& bucket) {
    HttpClient http;
    HttpRequest request;
    request.method = "DELETE";
    request.url = env_.s3_endpoint + "/" + bucket;
    request.headers = {{"x-amz-content-sha256", Sha256Hex("")}};
    request.aws_sigv4 = "aws:amz:" + env_.s3_region + ":s3";
    request.aws_credentials = env_.s3_access_key + ":" + env_.s3_secret_key;
    auto deleted = http.Send(request);
    return deleted.ok() ? deleted->status : 0;
  }
  CloudEnv env_;
};

class AzureStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = LoadCloudEnv();
    if (env_.az_endpoint.empty()) PAIL_SKIP_UNLESS_REQUIRED("no Azure server configured");
  }
  CloudEnv env_;
};

TEST_F(S3StartTest, WrongSecretIsAClearAuthenticationErrorAtOnce) {
  StoreOptions options;
  options.url = "s3://pail-test/auth";
  options.aws = AwsOptionsFrom(env_);
  const std::string wrong = "wrong-" + RandomHex(8);
  options.aws.secret_access_key = wrong;
  auto start = std::chrono::steady_clock::now();
  auto store = OpenBackend(options);
  EXPECT_LT(SecondsSince(start), 3.0) << "an auth failure must not be retried";
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kPermissionDenied) << store.status().ToString();
  EXPECT_NE(store.status().message().find("secret_access_key"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(store.status().message().find(wrong), std::string::npos) << "secret leaked";
}

TEST_F(S3StartTest, UnknownAccessKeyIsAnAuthenticationError) {
  AwsOptions options = AwsOptionsFrom(env_);
  options.access_key_id = "NOSUCHKEY" + RandomHex(4);
  auto store = S3Store::Open("s3://pail-test", options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kPermissionDenied) << store.status().ToString();
  EXPECT_EQ(store.status().message().find(options.secret_access_key), std::string::npos);
}

TEST_F(S3StartTest, MissingBucketIsCreated) {
  const std::string bucket = "pail-new-" + RandomHex(4);
  AwsOptions options = AwsOptionsFrom(env_);
  auto store = S3Store::Open("s3://" + bucket + "/p", options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Put("k", "v").ok());
  EXPECT_EQ((*store)->Get("k").value(), "v");
  ASSERT_TRUE((*store)->Delete("k").ok());

  ASSERT_EQ(DeleteBucket(bucket), 204);

  // With the bucket gone, reads must not look like a merely missing key.
  auto gone = (*store)->Get("k");
  EXPECT_EQ(gone.status().code(), Status::Code::kPermanent) << gone.status().ToString();
  EXPECT_NE(gone.status().message().find(bucket), std::string::npos);
}

// RGW refuses a PUT past a bucket's quota with 403 QuotaExceeded: a full
// bucket (ENOSPC to the filesystem's callers), not refused credentials.
// The quota is set with radosgw-admin on the loopback cluster's config.
TEST_F(S3StartTest, BucketQuotaExceededIsNoSpace) {
  const char* root = std::getenv("OBJSTORES_ROOT");
  const std::string conf = std::string(root != nullptr ? root : "/tmp/objstores") + "/rgw/ceph.conf";
  if (!std::filesystem::exists(conf) || std::system("command -v radosgw-admin >/dev/null") != 0) {
    GTEST_SKIP() << "no radosgw-admin, or no RGW config at " << conf;
  }
  const std::string bucket = "pail-quota-" + RandomHex(4);
  auto store = S3Store::Open("s3://" + bucket + "/p", AwsOptionsFrom(env_));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string quota = "radosgw-admin -c " + conf + " quota ";
  const std::string scope = " --quota-scope=bucket --bucket=" + bucket + " >/dev/null 2>&1";
  ASSERT_EQ(std::system((quota + "set --max-size=100000" + scope).c_str()), 0);
  ASSERT_EQ(std::system((quota + "enable" + scope).c_str()), 0);
  auto put = (*store)->Put("big", std::string(300000, 'q'));
  EXPECT_TRUE(put.status().IsNoSpace()) << put.status().ToString();
  EXPECT_EQ(DeleteBucket(bucket), 204);
}

TEST_F(S3StartTest, CredentialsComeFromTheEnvironment) {
  setenv("AWS_ACCESS_KEY_ID", env_.s3_access_key.c_str(), 1);
  setenv("AWS_SECRET_ACCESS_KEY", env_.s3_secret_key.c_str(), 1);
  setenv("AWS_REGION", env_.s3_region.c_str(), 1);
  setenv("AWS_ENDPOINT_URL", env_.s3_endpoint.c_str(), 1);
  AwsOptions options;
  options.allow_http = true;
  auto store = S3Store::Open("s3://pail-test/env", options);
  for (const char* name :
       {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL"}) {
    unsetenv(name);
  }
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->Describe().find(env_.s3_secret_key), std::string::npos);
  EXPECT_NE((*store)->Describe().find("s3://pail-test/env/"), std::string::npos);
}

TEST_F(S3StartTest, BadConfigurationIsRejectedClearly) {
  AwsOptions options = AwsOptionsFrom(env_);
  options.allow_http = false;
  auto plain = S3Store::Open("s3://pail-test", options);
  EXPECT_EQ(plain.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(plain.status().message().find("allow_http"), std::string::npos);
  EXPECT_EQ(S3Store::Open("s3://No_Such", AwsOptionsFrom(env_)).status().code(),
            Status::Code::kInvalidArgument);
  AwsOptions no_keys;
  no_keys.endpoint = env_.s3_endpoint;
  no_keys.allow_http = true;
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  auto missing = S3Store::Open("s3://pail-test", no_keys);
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST_F(AzureStartTest, WrongKeyIsAClearAuthenticationErrorAtOnce) {
  StoreOptions options;
  options.url = "azure://pail-test/auth";
  options.azure = AzureOptionsFrom(env_);
  const std::string wrong = Base64Encode("not the account key " + RandomHex(8));
  options.azure.storage_account_key = wrong;
  auto start = std::chrono::steady_clock::now();
  auto store = OpenBackend(options);
  EXPECT_LT(SecondsSince(start), 3.0) << "an auth failure must not be retried";
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kPermissionDenied) << store.status().ToString();
  EXPECT_NE(store.status().message().find("storage_account_key"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(store.status().message().find(wrong), std::string::npos) << "secret leaked";
}

TEST_F(AzureStartTest, MalformedKeyIsRejectedWithoutEchoingIt) {
  AzureOptions options = AzureOptionsFrom(env_);
  options.storage_account_key = "%%%not-base64%%%";
  auto store = AzureStore::Open("azure://pail-test", options);
  EXPECT_EQ(store.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store.status().message().find("%%%not-base64"), std::string::npos);
}

TEST_F(AzureStartTest, MissingContainerIsCreated) {
  const std::string container = "pail-new-" + RandomHex(4);
  auto store = AzureStore::Open("azure://" + container, AzureOptionsFrom(env_));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Put("k", "v").ok());
  EXPECT_EQ((*store)->Get("k").value(), "v");
  EXPECT_TRUE((*store)->Delete("k").ok());
  EXPECT_EQ((*store)->Describe().find(env_.az_key), std::string::npos);
}

TEST_F(AzureStartTest, ContainerSasTokenAuthorisesPlainRequests) {
  auto store = AzureStore::Open("azure://pail-test/sas-" + RandomHex(4), AzureOptionsFrom(env_));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Put("k", "via shared key").ok());
  HttpClient http;
  HttpRequest request;
  request.method = "GET";
  request.url = (*store)->BlobUrl("k") + "?" + (*store)->ContainerSasToken("2099-01-01T00:00:00Z");
  request.headers = {{"x-ms-version", kAzureApiVersion}};
  auto got = http.Send(request);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, 200) << got->body;
  EXPECT_EQ(got->body, "via shared key");
  EXPECT_TRUE((*store)->Delete("k").ok());
}

// A store that accepts conditional headers and ignores them, like some
// S3-compatible services do.
class IgnoresConditionsStore : public MemoryStore {
 public:
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override {
    return Put(key, body);
  }
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string&) override {
    return Put(key, body);
  }
};

TEST(ConditionalProbeTest, PassesOnAStoreWithConditionalWrites) {
  MemoryStore store;
  EXPECT_TRUE(ProbeConditionalWrites(store, false).ok());
  EXPECT_TRUE(ListAll(store, "")->empty()) << "the probe must clean up";
}

TEST(ConditionalProbeTest, RefusesAStoreIgnoringConditions) {
  IgnoresConditionsStore store;
  Status s = ProbeConditionalWrites(store, false);
  EXPECT_EQ(s.code(), Status::Code::kPermanent);
  EXPECT_NE(s.message().find("writer fencing"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("allow_unsafe_no_conditional_writes"), std::string::npos);
  EXPECT_TRUE(ListAll(store, "")->empty());
}

TEST(ConditionalProbeTest, OptOutAcceptsTheRisk) {
  IgnoresConditionsStore store;
  EXPECT_TRUE(ProbeConditionalWrites(store, true).ok());
}

}  // namespace
}  // namespace pail
