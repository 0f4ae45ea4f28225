// How the S3 and Azure backends read failures that the real servers cannot
// be made to produce on demand: throttling, server errors, a multipart
// upload whose part fails, a conditional PUT answered with a 5xx. A scripted
// loopback server plays the store; the real-server behaviour is covered by
// contract_test.cc and cloud_store_test.cc.
#include <gtest/gtest.h>

#include <mutex>

#include "objstore/azure_store.h"
#include "objstore/s3_store.h"
#include "scripted_server.h"

namespace pail {
namespace {

using testing::HeaderValue;
using testing::ScriptedReply;
using testing::ScriptedServer;

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

ScriptedReply S3Error(int status, const std::string& code) {
  return {status, "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>scripted " +
                      code + "</Message></Error>",
          {}};
}

AwsOptions ScriptedAws(const ScriptedServer& server) {
  AwsOptions o;
  o.access_key_id = "scripted";
  o.secret_access_key = "scripted-secret";
  o.region = "us-east-1";
  o.endpoint = server.Endpoint();
  o.allow_http = true;
  return o;
}

// The bucket check at open: an empty listing.
bool IsBucketCheck(const std::string& line) { return StartsWith(line, "GET /bkt?"); }
const ScriptedReply kEmptyListing{200, "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", {}};

TEST(S3FailureTest, ThrottlingAndServerErrorsAreRetryableOthersAreNot) {
  ScriptedServer server([](const std::string& line, const std::string&) -> ScriptedReply {
    if (IsBucketCheck(line)) return kEmptyListing;
    if (StartsWith(line, "GET /bkt/p/slow ")) return S3Error(503, "SlowDown");
    if (StartsWith(line, "GET /bkt/p/busy ")) return S3Error(429, "TooManyRequests");
    if (StartsWith(line, "GET /bkt/p/boom ")) return S3Error(500, "InternalError");
    if (StartsWith(line, "GET /bkt/p/timeout ")) return S3Error(400, "RequestTimeout");
    if (StartsWith(line, "GET /bkt/p/gone ")) return S3Error(404, "NoSuchKey");
    if (StartsWith(line, "GET /bkt/p/denied ")) return S3Error(403, "AccessDenied");
    return S3Error(400, "InvalidArgument");
  });
  auto store = S3Store::Open("s3://bkt/p", ScriptedAws(server));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (const char* key : {"slow", "busy", "boom", "timeout"}) {
    auto r = (*store)->Get(key);
    EXPECT_TRUE(r.status().IsRetryable()) << key << ": " << r.status().ToString();
  }
  EXPECT_TRUE((*store)->Get("gone").status().IsNotFound());
  EXPECT_EQ((*store)->Get("denied").status().code(), Status::Code::kPermissionDenied);
  EXPECT_EQ((*store)->Get("other").status().code(), Status::Code::kPermanent);
  auto message = (*store)->Get("slow").status().message();
  EXPECT_NE(message.find("SlowDown"), std::string::npos) << message;
  EXPECT_EQ(message.find("scripted-secret"), std::string::npos) << message;
}

TEST(S3FailureTest, FailedMultipartUploadIsAborted) {
  ScriptedServer server([](const std::string& line, const std::string&) -> ScriptedReply {
    if (IsBucketCheck(line)) return kEmptyListing;
    if (StartsWith(line, "POST /bkt/p/big?uploads= ")) {
      return {200, "<InitiateMultipartUploadResult><UploadId>up-1</UploadId></InitiateMultipartUploadResult>", {}};
    }
    if (StartsWith(line, "PUT /bkt/p/big?partNumber=2&")) return S3Error(400, "InvalidPart");
    if (StartsWith(line, "PUT /bkt/p/big?partNumber=")) return {200, "", {{"ETag", "\"part\""}}};
    if (StartsWith(line, "DELETE /bkt/p/big?uploadId=up-1 ")) return {204, "", {}};
    return S3Error(400, "Unexpected");
  });
  CloudTuning tuning;
  tuning.multipart_threshold = 5u << 20;
  tuning.part_size = 5u << 20;
  tuning.upload_parallelism = 2;
  auto store = S3Store::Open("s3://bkt/p", ScriptedAws(server), tuning);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::string body(12u << 20, 'x');
  auto put = (*store)->Put("big", body);
  EXPECT_EQ(put.status().code(), Status::Code::kPermanent) << put.status().ToString();
  auto lines = server.RequestLines();
  int aborts = 0, completes = 0;
  for (const auto& line : lines) {
    aborts += StartsWith(line, "DELETE /bkt/p/big?uploadId=up-1 ");
    completes += StartsWith(line, "POST /bkt/p/big?uploadId=");
  }
  EXPECT_EQ(aborts, 1);
  EXPECT_EQ(completes, 0);
}

// A conditional PUT answered 500, as RGW answers some If-Match race losers.
class AmbiguousPutTest : public ::testing::Test {
 protected:
  std::mutex mu;
  std::string stored_put_id;  // what the "store" holds after a landed write
  int puts = 0;
};

TEST_F(AmbiguousPutTest, WriteThatLandedIsReportedAsSuccess) {
  ScriptedServer server([&](const std::string& line, const std::string& head) -> ScriptedReply {
    std::lock_guard<std::mutex> lock(mu);
    if (IsBucketCheck(line)) return kEmptyListing;
    if (StartsWith(line, "PUT /bkt/p/k ")) {
      ++puts;
      stored_put_id = HeaderValue(head, "x-amz-meta-pailputid");  // it landed...
      return S3Error(500, "UnknownError");                         // ...but says otherwise
    }
    if (StartsWith(line, "HEAD /bkt/p/k ")) {
      return {200, "", {{"ETag", "\"landed\""}, {"x-amz-meta-pailputid", stored_put_id}}};
    }
    return S3Error(400, "Unexpected");
  });
  auto store = S3Store::Open("s3://bkt/p", ScriptedAws(server));
  ASSERT_TRUE(store.ok());
  auto r = (*store)->PutIfAbsent("k", "body");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "landed");
  EXPECT_EQ(puts, 1);
}

TEST_F(AmbiguousPutTest, WriteThatDidNotLandIsSentAgain) {
  ScriptedServer server([&](const std::string& line, const std::string&) -> ScriptedReply {
    std::lock_guard<std::mutex> lock(mu);
    if (IsBucketCheck(line)) return kEmptyListing;
    if (StartsWith(line, "PUT /bkt/p/k ")) {
      if (++puts == 1) return S3Error(503, "ServiceUnavailable");
      return {200, "", {{"ETag", "\"second\""}}};
    }
    if (StartsWith(line, "HEAD /bkt/p/k ")) return {404, "", {}};
    return S3Error(400, "Unexpected");
  });
  auto store = S3Store::Open("s3://bkt/p", ScriptedAws(server));
  ASSERT_TRUE(store.ok());
  auto r = (*store)->PutIfAbsent("k", "body");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "second");
  EXPECT_EQ(puts, 2);
}

TEST_F(AmbiguousPutTest, SomeoneElsesWriteIsAPreconditionFailure) {
  ScriptedServer server([&](const std::string& line, const std::string&) -> ScriptedReply {
    std::lock_guard<std::mutex> lock(mu);
    if (IsBucketCheck(line)) return kEmptyListing;
    if (StartsWith(line, "PUT /bkt/p/k ")) {
      return ++puts == 1 ? S3Error(500, "UnknownError") : S3Error(412, "PreconditionFailed");
    }
    if (StartsWith(line, "HEAD /bkt/p/k ")) {
      return {200, "", {{"ETag", "\"theirs\""}, {"x-amz-meta-pailputid", "another-writer"}}};
    }
    return S3Error(400, "Unexpected");
  });
  auto store = S3Store::Open("s3://bkt/p", ScriptedAws(server));
  ASSERT_TRUE(store.ok());
  auto r = (*store)->PutIfAbsent("k", "body");
  EXPECT_TRUE(r.status().IsPreconditionFailed()) << r.status().ToString();
}

TEST(AzureFailureTest, ThrottlingIsRetryableAndConflictsArePreconditionFailures) {
  ScriptedServer server([](const std::string& line, const std::string&) -> ScriptedReply {
    if (StartsWith(line, "GET /acct/ctr?")) return {200, "<EnumerationResults><Blobs/></EnumerationResults>", {}};
    if (StartsWith(line, "GET /acct/ctr/p/busy ")) return {503, "", {{"x-ms-error-code", "ServerBusy"}}};
    if (StartsWith(line, "GET /acct/ctr/p/many ")) return {429, "", {{"x-ms-error-code", "TooManyRequests"}}};
    if (StartsWith(line, "PUT /acct/ctr/p/exists ")) {
      return {409, "", {{"x-ms-error-code", "BlobAlreadyExists"}}};
    }
    return {400, "", {{"x-ms-error-code", "InvalidInput"}}};
  });
  AzureOptions o;
  o.storage_account_name = "acct";
  o.storage_account_key = "c2NyaXB0ZWQta2V5";
  o.endpoint = server.Endpoint() + "/acct";
  o.allow_http = true;
  auto store = AzureStore::Open("azure://ctr/p", o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE((*store)->Get("busy").status().IsRetryable());
  EXPECT_TRUE((*store)->Get("many").status().IsRetryable());
  EXPECT_TRUE((*store)->PutIfAbsent("exists", "x").status().IsPreconditionFailed());
  EXPECT_EQ((*store)->Get("other").status().code(), Status::Code::kPermanent);
}

}  // namespace
}  // namespace pail
