// The cost model against a hand-computed case, the price table, the request
// ledger's format and the Prometheus exposition writer.
#include <gtest/gtest.h>

#include "metrics/metric.h"
#include "metrics/protocol_metrics.h"
#include "server/cost.h"
#include "server/request_ledger.h"

namespace pail::server {
namespace {

Provider HandProvider() {
  Provider p;
  p.id = "test";
  p.name = "Test Cloud";
  p.storage_gib_month = {0.02, "2024-05-01", "test"};
  p.egress_gib = {0.1, "2024-06-01", "test"};
  p.requests.push_back({"A", {OpKind::kPut, OpKind::kList}, {0.005, "2024-03-01", "test"}});
  p.requests.push_back({"B", {OpKind::kGet, OpKind::kGetRange, OpKind::kHead}, {0.0004, "2024-07-01", "test"}});
  p.requests.push_back({"free", {OpKind::kDelete}, {0.0, "2024-07-01", "test"}});
  return p;
}

TEST(Cost, HandComputedCase) {
  CostInput in;
  in.stored_bytes = 50ull << 30;  // 50 GiB
  in.stored_objects = 1000;
  in.total.requests[int(OpKind::kPut)] = 1500;
  in.total.requests[int(OpKind::kList)] = 500;
  in.total.requests[int(OpKind::kGet)] = 10000;
  in.total.requests[int(OpKind::kHead)] = 2000;
  in.total.requests[int(OpKind::kDelete)] = 99;
  in.total.bytes[int(OpKind::kGet)] = 4ull << 30;  // 4 GiB downloaded in all
  // Observed over one hour of serving: 73 PUTs, 730 GETs, 1 GiB down.
  in.observed.requests[int(OpKind::kPut)] = 73;
  in.observed.requests[int(OpKind::kGet)] = 730;
  in.observed.bytes[int(OpKind::kGet)] = 1ull << 30;
  in.observed_seconds = 3600;

  CostReport r = ComputeCost(HandProvider(), in);
  // By hand: storage 50 GiB * $0.02 = $1.00 per month.
  EXPECT_DOUBLE_EQ(r.storage_usd_month, 1.0);
  ASSERT_EQ(r.classes.size(), 3u);
  // Class A: 1500 + 500 = 2000 requests -> 2 * $0.005 = $0.01 so far;
  // 73 per hour * 730 hours = 53290 per month -> 53.29 * $0.005 = $0.26645.
  EXPECT_EQ(r.classes[0].requests, 2000u);
  EXPECT_DOUBLE_EQ(r.classes[0].usd, 0.01);
  EXPECT_DOUBLE_EQ(r.classes[0].requests_month, 53290);
  EXPECT_NEAR(r.classes[0].usd_month, 0.26645, 1e-12);
  // Class B: 12000 requests -> 12 * $0.0004 = $0.0048; 730 * 730 = 532900
  // per month -> 532.9 * $0.0004 = $0.21316.
  EXPECT_EQ(r.classes[1].requests, 12000u);
  EXPECT_NEAR(r.classes[1].usd, 0.0048, 1e-12);
  EXPECT_NEAR(r.classes[1].usd_month, 0.21316, 1e-12);
  EXPECT_EQ(r.classes[2].requests, 99u);
  EXPECT_EQ(r.classes[2].usd, 0);
  // Egress: 4 GiB * $0.1 = $0.40 so far; 1 GiB/h * 730 h * $0.1 = $73.
  EXPECT_NEAR(r.egress_usd, 0.4, 1e-12);
  EXPECT_NEAR(r.egress_usd_month, 73.0, 1e-9);
  // Per month: 1.00 + 0.26645 + 0.21316 + 0 + 73 = 74.47961.
  EXPECT_NEAR(r.total_usd_month, 74.47961, 1e-9);
  // The oldest figure used.
  EXPECT_EQ(r.prices_date, "2024-03-01");
  EXPECT_NE(CostJson(r).find("\"total_usd_month\":74.47961"), std::string::npos) << CostJson(r);
  EXPECT_NE(CostText(r).find("2024-03-01"), std::string::npos);
}

TEST(Cost, ShortObservationDoesNotDivideByZero) {
  CostInput in;
  in.observed.requests[int(OpKind::kPut)] = 1;
  in.observed_seconds = 0;
  CostReport r = ComputeCost(HandProvider(), in);
  EXPECT_DOUBLE_EQ(r.classes[0].requests_month, kSecondsPerMonth);
}

TEST(Cost, BuiltinPricesParseWithDatesAndSources) {
  auto providers = ParsePrices(BuiltinPrices(), "prices.toml");
  ASSERT_TRUE(providers.ok()) << providers.status().ToString();
  std::set<std::string> ids;
  for (const auto& p : *providers) {
    ids.insert(p.id);
    EXPECT_FALSE(p.storage_gib_month.date.empty());
    EXPECT_FALSE(p.storage_gib_month.source.empty());
    // Every operation is billed by exactly one class.
    std::array<int, kOpKindCount> seen{};
    for (const auto& c : p.requests) {
      EXPECT_FALSE(c.usd_per_1000.date.empty()) << p.id << " " << c.name;
      for (OpKind op : c.ops) seen[int(op)]++;
    }
    for (int i = 0; i < kOpKindCount; ++i) EXPECT_EQ(seen[i], 1) << p.id << " " << OpKindName(OpKind(i));
  }
  EXPECT_EQ(ids, (std::set<std::string>{"aws-s3", "azure-blob-hot", "gcs", "r2"}));
  EXPECT_FALSE(FindProvider("nope").ok());
}

TEST(Cost, BadPriceTablesAreRefused) {
  EXPECT_FALSE(ParsePrices("[x]\nname = 1\n", "t").ok());
  EXPECT_FALSE(ParsePrices(R"([x]
storage_gib_month = { usd = 1.0, date = "d", source = "s" }
egress_gib = { usd = 1.0, date = "d", source = "s" }
requests = [ { class = "a", ops = ["teleport"], usd_per_1000 = 1.0, date = "d", source = "s" } ]
)", "t").ok());
  EXPECT_FALSE(ParsePrices(R"([x]
storage_gib_month = { usd = 1.0, date = "d" }
egress_gib = { usd = 1.0, date = "d", source = "s" }
requests = []
)", "t").ok());
}

TEST(RequestLedger, RoundTripsAndRejectsGarbage) {
  RequestCounts c;
  for (int i = 0; i < kOpKindCount; ++i) {
    c.requests[i] = 1000 + i;
    c.bytes[i] = (1ull << 40) + i;
  }
  auto back = DecodeLedger(EncodeLedger(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->requests, c.requests);
  EXPECT_EQ(back->bytes, c.bytes);
  EXPECT_TRUE(DecodeLedger("pailfs-request-ledger 1\nfuture_op 5 6\n").ok());
  EXPECT_FALSE(DecodeLedger("something else\n").ok());
  EXPECT_FALSE(DecodeLedger("pailfs-request-ledger 1\nput five 6\n").ok());
}

TEST(Metrics, HistogramIsCumulativeAndEscapesLabels) {
  metrics::LatencyHistogram h;
  h.Observe(std::chrono::microseconds(50));   // first bucket
  h.Observe(std::chrono::milliseconds(3));    // 0.005
  h.Observe(std::chrono::seconds(100));       // only +Inf
  metrics::TextWriter w;
  w.Family("x_seconds", "histogram", "help with \\ and\nnewline");
  w.Histogram("x_seconds", {{"op", "a\"b"}}, h.Read());
  const std::string& t = w.text();
  EXPECT_NE(t.find("# HELP x_seconds help with \\\\ and\\nnewline\n"), std::string::npos) << t;
  EXPECT_NE(t.find("x_seconds_bucket{op=\"a\\\"b\",le=\"0.0001\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("x_seconds_bucket{op=\"a\\\"b\",le=\"0.005\"} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("x_seconds_bucket{op=\"a\\\"b\",le=\"10\"} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("x_seconds_bucket{op=\"a\\\"b\",le=\"+Inf\"} 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("x_seconds_count{op=\"a\\\"b\"} 3\n"), std::string::npos) << t;
}

TEST(Metrics, ProtocolMetricsCountOpsErrorsAndConnections) {
  auto& p = metrics::ProtocolMetrics::For("unit-test-proto");
  EXPECT_EQ(&p, &metrics::ProtocolMetrics::For("unit-test-proto"));
  p.ConnectionOpened();
  p.Start("read").Done(0);
  p.Start("read").Done(ENOENT);
  p.Start("write").Done(0);
  EXPECT_EQ(p.operations(), 3u);
  metrics::TextWriter w;
  metrics::ProtocolMetrics::WriteAll(w);
  const std::string& t = w.text();
  EXPECT_NE(t.find("pailfs_protocol_operations_total{protocol=\"unit-test-proto\",op=\"read\"} 2\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("pailfs_protocol_errors_total{protocol=\"unit-test-proto\",errno=\"ENOENT\"} 1\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("pailfs_protocol_connections{protocol=\"unit-test-proto\"} 1\n"), std::string::npos) << t;
  p.ConnectionClosed();
}

}  // namespace
}  // namespace pail::server
