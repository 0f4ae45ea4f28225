// Settings of the cloud backends, as the [aws] and [azure] config sections
// give them. Empty fields fall back to the usual environment variables.
#pragma once

#include <string>

namespace pail {

struct AwsOptions {
  std::string access_key_id;      // else AWS_ACCESS_KEY_ID
  std::string secret_access_key;  // else AWS_SECRET_ACCESS_KEY
  std::string region;             // else AWS_REGION / AWS_DEFAULT_REGION, else us-east-1
  std::string endpoint;           // S3-compatible stores; else AWS_ENDPOINT_URL, else AWS
  bool allow_http = false;
  bool path_style = false;
};

struct AzureOptions {
  std::string storage_account_name;
  std::string storage_account_key;
  std::string endpoint;  // e.g. http://127.0.0.1:10000/devstoreaccount1 for Azurite
  bool allow_http = false;
};

}  // namespace pail
