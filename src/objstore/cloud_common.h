// Machinery the HTTP backends (S3Store, AzureStore) share: upload tuning,
// parallel part uploads, and resolving conditional writes whose outcome a
// failed response left unknown.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>

#include "objstore/http_client.h"
#include "util/status.h"

namespace pail {

struct CloudTuning {
  // Bodies larger than this go up in parts (S3 multipart, Azure blocks);
  // smaller ones in a single request. Parallel parts win on a real network
  // but cost throughput where the server is CPU-bound (measured on loopback
  // RGW: 4 x 16 MiB parts ran at ~0.8x of one 64 MiB PUT), so objects up to
  // 64 MiB go in one request, whose retry still costs little.
  size_t multipart_threshold = 64u << 20;
  size_t part_size = 16u << 20;
  // Parts in flight at once per large upload.
  int upload_parallelism = 4;
  // Attempts per part before the whole upload is abandoned.
  int part_attempts = 4;
  // Attempts of one conditional write before "outcome unknown" is returned.
  int conditional_attempts = 4;
  HttpClientOptions http;
};

// Name of the metadata entry carrying a random id per conditional write, so
// the writer can recognise its own write after an ambiguous failure. Azure
// metadata names must be identifiers, hence no dashes.
constexpr char kPutIdMetadata[] = "pailputid";

// Runs part(0) .. part(count - 1) on up to `parallelism` threads (the
// calling thread included). After the first failure no new part starts;
// returns that failure, or OK when every part succeeded.
Status RunParts(size_t count, int parallelism, const std::function<Status(size_t)>& part);

// Calls `attempt` up to `attempts` times while it fails with kRetryable,
// sleeping with exponential backoff in between.
Status RetryTransient(int attempts, const std::function<Status()>& attempt);

// Sleep before retry number `retry` (1-based): 50 ms doubling to 2 s, with
// jitter so concurrent writers do not retry in lockstep.
void BackoffSleep(int retry);

// What a HEAD reports about who wrote the current object.
struct StoredWrite {
  std::string etag;
  std::string put_id;  // "" when the object carries none
};

// Runs a conditional write to completion. `attempt` sends it once, tagged
// with `put_id`, and returns the new etag, kPreconditionFailed when the
// condition was refused, kRetryable when the write may or may not have
// landed (5xx, timeout, dropped connection), or any other error.
// `head` reads the object's current etag and put id (kNotFound if absent).
//
// A retryable failure is resolved by reading the object back: our put id
// means the write landed; anything else means it did not, and the write is
// tried again (the condition still guards it). A refusal after an
// ambiguous attempt is also checked against our put id. When the attempts
// run out, the result is kRetryable with "outcome unknown" in the message,
// never success.
Result<std::string> RunConditionalWrite(const std::string& put_id, int attempts,
                                        const std::function<Result<std::string>()>& attempt,
                                        const std::function<Result<StoredWrite>()>& head);

// The etag without surrounding double quotes (and without a weak "W/"
// prefix). Backends report etags in this normal form everywhere.
std::string StripEtagQuotes(std::string_view etag);

// "scheme://container/some/prefix/" -> {"container", "some/prefix/"}: the
// prefix without leading slashes and, unless empty, with one trailing slash.
struct BucketUrl {
  std::string container;
  std::string prefix;
};
Result<BucketUrl> ParseBucketUrl(const std::string& url, std::string_view scheme);

// `value`, else the first of the environment variables that is set and non-empty.
std::string EnvOr(const std::string& value, std::initializer_list<const char*> names);

// 3 to 63 characters, each a lowercase letter, a digit or one of
// `punctuation`: the shape both S3 bucket and Azure container names take.
bool ValidStoreName(const std::string& name, std::string_view punctuation);

}  // namespace pail
