// The cost model behind `pailfs cost`: what the bucket holds and what the
// server has asked of it, priced with one provider's list prices.
//
//   storage  = stored bytes / 2^30 * storage price per GiB-month
//   requests = for each price class, the requests of its operations since
//              the bucket was created (the request ledger) / 1000 * price;
//              per month: their rate since this server began serving (the
//              requests of opening the bucket happen once per start, not
//              every month) * kSecondsPerMonth
//   egress   = bytes downloaded (GET bodies) / 2^30 * egress price, in
//              total and per month at this run's rate
//   per month = storage + requests per month + egress per month
// Prices come from data/prices.toml (compiled in), each with a date and a
// source; the report names the oldest date it used.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "objstore/counting_store.h"
#include "util/status.h"

namespace pail::server {

// A month as the providers bill it: 730 hours.
inline constexpr double kSecondsPerMonth = 730.0 * 3600.0;
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

struct PriceFigure {
  double usd = 0;
  std::string date;    // when the figure was taken, YYYY-MM-DD
  std::string source;  // where it was published
};

struct RequestClass {
  std::string name;
  std::vector<OpKind> ops;
  PriceFigure usd_per_1000;
};

struct Provider {
  std::string id;  // "aws-s3", "azure-blob-hot", "gcs", "r2"
  std::string name;
  PriceFigure storage_gib_month;
  PriceFigure egress_gib;
  std::vector<RequestClass> requests;
};

// The compiled-in data/prices.toml.
std::string_view BuiltinPrices();
Result<std::vector<Provider>> ParsePrices(std::string_view toml_text, const std::string& source);
// The provider `id` of the built-in table; InvalidArgument naming the known
// ones otherwise.
Result<Provider> FindProvider(const std::string& id);

struct CostInput {
  uint64_t stored_bytes = 0;
  uint64_t stored_objects = 0;
  RequestCounts total;     // since the bucket was created
  RequestCounts observed;  // since this server began serving
  double observed_seconds = 0;
};

struct CostReport {
  std::string provider;
  std::string provider_name;
  std::string prices_date;  // the oldest date among the figures used
  CostInput input;
  double storage_usd_month = 0;
  struct Class {
    std::string name;
    uint64_t requests = 0;  // since the bucket was created
    double usd = 0;
    double requests_month = 0;  // at the observed rate
    double usd_month = 0;
  };
  std::vector<Class> classes;
  uint64_t egress_bytes = 0;
  double egress_usd = 0;
  double egress_bytes_month = 0;
  double egress_usd_month = 0;
  double total_usd_month = 0;
};

CostReport ComputeCost(const Provider& provider, const CostInput& input);
std::string CostText(const CostReport& report);
std::string CostJson(const CostReport& report);

}  // namespace pail::server
