// Where the tests find the loopback object stores and how they open each
// backend under test.
//
// The endpoints and keys come from the environment (S3_ENDPOINT,
// S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION, AZ_ENDPOINT, AZ_ACCOUNT, AZ_KEY)
// or, when those are unset, from the file objstores.sh writes
// ($OBJSTORES_ROOT/env, default /tmp/objstores/env). Without them the cloud
// tests skip, unless PAIL_REQUIRE_OBJSTORES=1 (as in CI, which always starts
// the servers): then their absence fails the test.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "objstore/cloud_options.h"
#include "objstore/object_store.h"

namespace pail::testing {

struct CloudEnv {
  std::string s3_endpoint, s3_access_key, s3_secret_key, s3_region;
  std::string az_endpoint, az_account, az_key;
};

// Values from the environment, else from the objstores env file.
CloudEnv LoadCloudEnv();
bool ObjstoresRequired();

AwsOptions AwsOptionsFrom(const CloudEnv& env);
AzureOptions AzureOptionsFrom(const CloudEnv& env);

// A random lowercase hex string, to keep test runs' keys apart.
std::string UniqueSuffix();

// Opens backend `kind` ("memory", "file", "s3", "azure") through
// OpenBackend. Cloud kinds use the container/bucket "pail-test" and a fresh
// prefix. Returns nullptr with `*why` set when the servers are not
// configured; fails the test on any other error.
std::shared_ptr<ObjectStore> OpenTestStore(const std::string& kind, std::string* why);

}  // namespace pail::testing

// Skips the current test, or fails it when the object stores are required.
#define PAIL_SKIP_UNLESS_REQUIRED(why)                                                 \
  do {                                                                                 \
    if (::pail::testing::ObjstoresRequired()) {                                        \
      FAIL() << (why) << " (PAIL_REQUIRE_OBJSTORES=1: the object stores must be up)"; \
    }                                                                                  \
    GTEST_SKIP() << (why);                                                             \
  } while (0)
