// RetryingStore, FaultStore and CountingStore.
#include <gtest/gtest.h>

#include "objstore/counting_store.h"
#include "objstore/fault_store.h"
#include "objstore/memory_store.h"
#include "objstore/retrying_store.h"

namespace pail {
namespace {

RetryOptions FastRetries() {
  RetryOptions r;
  r.initial_backoff = std::chrono::milliseconds(1);
  r.max_backoff = std::chrono::milliseconds(4);
  r.max_attempts = 50;
  r.deadline = std::chrono::milliseconds(5000);
  return r;
}

TEST(RetryingStore, HidesTransientFailuresOfEveryKind) {
  auto memory = std::make_shared<MemoryStore>();
  FaultOptions faults;
  faults.error_rate.fill(0.5);
  auto faulty = std::make_shared<FaultStore>(memory, faults);
  RetryingStore store(faulty, FastRetries());
  for (int i = 0; i < 50; ++i) {
    std::string key = "k" + std::to_string(i);
    ASSERT_TRUE(store.Put(key, "v").ok());
    ASSERT_EQ(*store.Get(key), "v");
    ASSERT_EQ(*store.GetRange(key, 0, 1), "v");
    ASSERT_TRUE(store.Head(key).ok());
    ASSERT_TRUE(store.PutIfAbsent(key + "x", "w").ok());
    auto etag = store.Head(key + "x")->etag;
    ASSERT_TRUE(store.PutIfMatch(key + "x", "w2", etag).ok());
    ASSERT_TRUE(store.List("k", "", 1000).ok());
    ASSERT_TRUE(store.Delete(key).ok());
  }
  EXPECT_GT(faulty->injected_failures(), 100u);
}

TEST(RetryingStore, AmbiguousConditionalWriteThatLandedIsASuccess) {
  auto memory = std::make_shared<MemoryStore>();
  FaultOptions faults;
  faults.ambiguous_rate[int(OpKind::kPutIfAbsent)] = 1.0;  // lands, then "fails"
  auto faulty = std::make_shared<FaultStore>(memory, faults);
  RetryingStore store(faulty, FastRetries());
  // First attempt lands but reports failure; the retry finds our own body.
  faults.ambiguous_rate[int(OpKind::kPutIfAbsent)] = 0.0;
  int calls = 0;  // the hook is copied per call: keep its state outside
  faulty->SetHook([&](OpKind op, const std::string&) {
    if (op == OpKind::kPutIfAbsent && ++calls == 1) faulty->SetOptions(faults);
  });
  auto r = store.PutIfAbsent("fence", "mine");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*memory->Get("fence"), "mine");
  // Somebody else's body is still a lost race.
  ASSERT_TRUE(memory->Put("taken", "theirs").ok());
  EXPECT_TRUE(store.PutIfAbsent("taken", "mine").status().IsPreconditionFailed());
}

TEST(RetryingStore, GivesUpAtTheDeadlineWithTheLastError) {
  FaultOptions faults;
  faults.error_rate.fill(1.0);
  auto faulty = std::make_shared<FaultStore>(std::make_shared<MemoryStore>(), faults);
  RetryOptions r = FastRetries();
  r.deadline = std::chrono::milliseconds(50);
  RetryingStore store(faulty, r);
  auto start = std::chrono::steady_clock::now();
  auto got = store.Get("x");
  EXPECT_TRUE(got.status().IsRetryable());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(RetryingStore, FinalErrorsAreNotRetried) {
  auto counting = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  RetryingStore store(counting, FastRetries());
  EXPECT_TRUE(store.Get("missing").status().IsNotFound());
  EXPECT_EQ(counting->Snapshot().requests[int(OpKind::kGet)], 1u);
}

TEST(RetryingStore, AfterStopRetryingEveryCallMakesOneAttempt) {
  FaultOptions faults;
  faults.error_rate.fill(1.0);
  auto faulty = std::make_shared<FaultStore>(std::make_shared<MemoryStore>(), faults);
  auto counting = std::make_shared<CountingStore>(faulty);
  RetryingStore store(counting, FastRetries());
  EXPECT_TRUE(store.Get("x").status().IsRetryable());
  const uint64_t retried = counting->Snapshot().requests[int(OpKind::kGet)];
  EXPECT_GT(retried, 1u);
  store.StopRetrying();
  EXPECT_TRUE(store.Get("x").status().IsRetryable());
  EXPECT_TRUE(store.PutIfAbsent("y", "v").status().IsRetryable());
  auto c = counting->Snapshot();
  EXPECT_EQ(c.requests[int(OpKind::kGet)], retried + 1);
  EXPECT_EQ(c.requests[int(OpKind::kPutIfAbsent)], 1u);
}

TEST(CountingStore, CountsRequestsAndBytesPerKind) {
  CountingStore store(std::make_shared<MemoryStore>());
  ASSERT_TRUE(store.Put("a", "12345").ok());
  ASSERT_TRUE(store.PutIfAbsent("b", "123").ok());
  ASSERT_EQ(*store.Get("a"), "12345");
  ASSERT_EQ(*store.GetRange("a", 1, 2), "23");
  ASSERT_TRUE(store.Delete("a").ok());
  auto c = store.Snapshot();
  EXPECT_EQ(c.requests[int(OpKind::kPut)], 1u);
  EXPECT_EQ(c.requests[int(OpKind::kDelete)], 1u);
  EXPECT_EQ(c.bytes_written(), 8u);
  EXPECT_EQ(c.bytes_read(), 7u);
  EXPECT_EQ(c.total_requests(), 5u);
}

TEST(FaultStore, HookSeesEveryCallAndRatesApplyPerKind) {
  auto memory = std::make_shared<MemoryStore>();
  FaultOptions faults;
  faults.error_rate[int(OpKind::kPut)] = 1.0;
  FaultStore store(memory, faults);
  std::vector<OpKind> seen;
  store.SetHook([&](OpKind op, const std::string&) { seen.push_back(op); });
  EXPECT_TRUE(store.Put("a", "x").status().IsRetryable());
  EXPECT_TRUE(memory->Get("a").status().IsNotFound());  // a clean failure never lands
  EXPECT_TRUE(store.PutIfAbsent("a", "x").ok());
  EXPECT_EQ(seen, (std::vector<OpKind>{OpKind::kPut, OpKind::kPutIfAbsent}));
  store.SetErrorRateAll(0);
  EXPECT_TRUE(store.Put("a", "y").ok());
}

}  // namespace
}  // namespace pail
