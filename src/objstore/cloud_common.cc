#include "objstore/cloud_common.h"

#include <cctype>
#include <cstdlib>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

namespace pail {

Status RunParts(size_t count, int parallelism, const std::function<Status(size_t)>& part) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first_failure;
  auto worker = [&] {
    while (!failed.load()) {
      size_t index = next.fetch_add(1);
      if (index >= count) return;
      Status s = part(index);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.exchange(true)) first_failure = s;
        return;
      }
    }
  };
  size_t threads = std::min<size_t>(count, static_cast<size_t>(std::max(1, parallelism)));
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < threads; ++i) helpers.emplace_back(worker);
  worker();
  for (auto& t : helpers) t.join();
  return first_failure;
}

void BackoffSleep(int retry) {
  thread_local std::mt19937 rng{std::random_device{}()};
  int shift = std::min(retry - 1, 6);
  long ceiling_ms = std::min(50L << shift, 2000L);
  std::uniform_int_distribution<long> jitter(ceiling_ms / 2, ceiling_ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(jitter(rng)));
}

Status RetryTransient(int attempts, const std::function<Status()>& attempt) {
  Status s;
  for (int i = 1; i <= attempts; ++i) {
    if (i > 1) BackoffSleep(i - 1);
    s = attempt();
    if (!s.IsRetryable()) return s;
  }
  return s;
}

Result<std::string> RunConditionalWrite(const std::string& put_id, int attempts,
                                        const std::function<Result<std::string>()>& attempt,
                                        const std::function<Result<StoredWrite>()>& head) {
  bool ambiguous = false;
  Status last;
  // Reads back who wrote the object; true when it was us.
  auto landed = [&](std::string* etag) -> Result<bool> {
    Status head_status;
    for (int i = 1; i <= attempts; ++i) {
      if (i > 1) BackoffSleep(i - 1);
      auto stored = head();
      if (stored.ok()) {
        if (stored->put_id != put_id) return false;
        *etag = stored->etag;
        return true;
      }
      if (stored.status().IsNotFound()) return false;
      head_status = stored.status();
      if (!head_status.IsRetryable()) break;
    }
    return head_status;
  };
  for (int i = 1; i <= attempts; ++i) {
    if (i > 1) BackoffSleep(i - 1);
    auto r = attempt();
    if (r.ok()) return r;
    last = r.status();
    if (last.IsPreconditionFailed()) {
      if (!ambiguous) return last;
      std::string etag;
      auto ours = landed(&etag);
      if (!ours.ok()) break;
      if (*ours) return etag;
      return last;
    }
    if (!last.IsRetryable()) return last;
    spdlog::debug("conditional write may or may not have landed ({}); reading it back",
                  last.ToString());
    ambiguous = true;
    std::string etag;
    auto ours = landed(&etag);
    if (!ours.ok()) break;
    if (*ours) return etag;
  }
  return Status::Retryable("conditional write outcome unknown after " + std::to_string(attempts) +
                           " attempts; last error: " + last.ToString());
}

std::string StripEtagQuotes(std::string_view etag) {
  if (etag.rfind("W/", 0) == 0) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

std::string EnvOr(const std::string& value, std::initializer_list<const char*> names) {
  if (!value.empty()) return value;
  for (const char* name : names) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return v;
  }
  return "";
}

bool ValidStoreName(const std::string& name, std::string_view punctuation) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (char c : name) {
    bool ok = std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
              punctuation.find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

Result<BucketUrl> ParseBucketUrl(const std::string& url, std::string_view scheme) {
  if (url.rfind(scheme, 0) != 0) {
    return Status::InvalidArgument("not a " + std::string(scheme) + " url: " + url);
  }
  std::string rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  BucketUrl out;
  out.container = rest.substr(0, slash);
  out.prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  while (!out.prefix.empty() && out.prefix.front() == '/') out.prefix.erase(0, 1);
  if (!out.prefix.empty()) out.prefix += '/';
  return out;
}

}  // namespace pail
