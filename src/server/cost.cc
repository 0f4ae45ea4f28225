#include "server/cost.h"

#include <algorithm>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "server/json_text.h"

namespace pail::server {
namespace {

Result<PriceFigure> Figure(const toml::node* node, const std::string& where, const char* key) {
  const toml::table* t = node ? node->as_table() : nullptr;
  if (!t) return Status::InvalidArgument(where + ": " + key + " must be { usd, date, source }");
  PriceFigure f;
  auto usd = (*t)["usd"].value<double>();
  auto date = (*t)["date"].value<std::string>();
  auto source = (*t)["source"].value<std::string>();
  if (!usd || !date || !source || *usd < 0) {
    return Status::InvalidArgument(where + ": " + key + " needs usd >= 0, date and source");
  }
  f.usd = *usd;
  f.date = *date;
  f.source = *source;
  return f;
}

Result<OpKind> OpNamed(const std::string& name, const std::string& where) {
  for (int i = 0; i < kOpKindCount; ++i) {
    if (name == OpKindName(OpKind(i))) return OpKind(i);
  }
  return Status::InvalidArgument(where + ": unknown operation '" + name + "'");
}

uint64_t Requests(const RequestCounts& counts, const std::vector<OpKind>& ops) {
  uint64_t n = 0;
  for (OpKind op : ops) n += counts.requests[static_cast<int>(op)];
  return n;
}

}  // namespace

Result<std::vector<Provider>> ParsePrices(std::string_view toml_text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(source + ": " + std::string(e.description()));
  }
  std::vector<Provider> providers;
  for (auto& [id, node] : root) {
    const std::string where = source + ": [" + std::string(id.str()) + "]";
    const toml::table* t = node.as_table();
    if (!t) return Status::InvalidArgument(where + " must be a table");
    Provider p;
    p.id = std::string(id.str());
    p.name = (*t)["name"].value_or(p.id);
    PAIL_ASSIGN_OR_RETURN(p.storage_gib_month, Figure(t->get("storage_gib_month"), where, "storage_gib_month"));
    PAIL_ASSIGN_OR_RETURN(p.egress_gib, Figure(t->get("egress_gib"), where, "egress_gib"));
    const toml::array* classes = (*t)["requests"].as_array();
    if (!classes) return Status::InvalidArgument(where + ": requests must be a list");
    for (const auto& c : *classes) {
      const toml::table* ct = c.as_table();
      if (!ct) return Status::InvalidArgument(where + ": each request class is a table");
      RequestClass rc;
      rc.name = (*ct)["class"].value_or(std::string("?"));
      PriceFigure f;
      auto usd = (*ct)["usd_per_1000"].value<double>();
      auto date = (*ct)["date"].value<std::string>();
      auto src = (*ct)["source"].value<std::string>();
      if (!usd || !date || !src || *usd < 0) {
        return Status::InvalidArgument(where + ": request class '" + rc.name +
                                       "' needs usd_per_1000 >= 0, date and source");
      }
      rc.usd_per_1000 = PriceFigure{*usd, *date, *src};
      const toml::array* ops = (*ct)["ops"].as_array();
      if (!ops) return Status::InvalidArgument(where + ": request class '" + rc.name + "' needs ops");
      for (const auto& op : *ops) {
        PAIL_ASSIGN_OR_RETURN(OpKind kind, OpNamed(op.value_or(std::string()), where));
        rc.ops.push_back(kind);
      }
      p.requests.push_back(std::move(rc));
    }
    providers.push_back(std::move(p));
  }
  return providers;
}

Result<Provider> FindProvider(const std::string& id) {
  PAIL_ASSIGN_OR_RETURN(auto providers, ParsePrices(BuiltinPrices(), "prices.toml"));
  std::string known;
  for (auto& p : providers) {
    if (p.id == id) return p;
    known += (known.empty() ? "" : ", ") + p.id;
  }
  return Status::InvalidArgument("unknown provider '" + id + "' (known: " + known + ")");
}

CostReport ComputeCost(const Provider& provider, const CostInput& input) {
  CostReport r;
  r.provider = provider.id;
  r.provider_name = provider.name;
  r.input = input;
  std::vector<std::string> dates = {provider.storage_gib_month.date, provider.egress_gib.date};
  // A run shorter than a second would make the projection meaningless.
  const double months_observed = std::max(input.observed_seconds, 1.0) / kSecondsPerMonth;

  r.storage_usd_month = input.stored_bytes / kBytesPerGiB * provider.storage_gib_month.usd;
  for (const auto& rc : provider.requests) {
    CostReport::Class c;
    c.name = rc.name;
    c.requests = Requests(input.total, rc.ops);
    c.usd = c.requests / 1000.0 * rc.usd_per_1000.usd;
    c.requests_month = Requests(input.observed, rc.ops) / months_observed;
    c.usd_month = c.requests_month / 1000.0 * rc.usd_per_1000.usd;
    r.total_usd_month += c.usd_month;
    r.classes.push_back(std::move(c));
    dates.push_back(rc.usd_per_1000.date);
  }
  r.egress_bytes = input.total.bytes_read();
  r.egress_usd = r.egress_bytes / kBytesPerGiB * provider.egress_gib.usd;
  r.egress_bytes_month = input.observed.bytes_read() / months_observed;
  r.egress_usd_month = r.egress_bytes_month / kBytesPerGiB * provider.egress_gib.usd;
  r.total_usd_month += r.storage_usd_month + r.egress_usd_month;
  r.prices_date = *std::min_element(dates.begin(), dates.end());
  return r;
}

std::string CostText(const CostReport& r) {
  std::string out = fmt::format("cost on {} (list prices of {}, in USD)\n", r.provider_name, r.prices_date);
  out += fmt::format("storage: {} objects, {:.3f} GiB: ${:.4f} per month\n", r.input.stored_objects,
                     r.input.stored_bytes / kBytesPerGiB, r.storage_usd_month);
  out += "requests (since the bucket was created; per month at the rate since serving began):\n";
  for (const auto& c : r.classes) {
    out += fmt::format("  {}: {} requests ${:.4f}; {:.0f} per month ${:.4f}\n", c.name, c.requests,
                       c.usd, c.requests_month, c.usd_month);
  }
  out += fmt::format("egress (if served outside the provider's network): {:.3f} GiB ${:.4f}; "
                     "{:.3f} GiB per month ${:.4f}\n",
                     r.egress_bytes / kBytesPerGiB, r.egress_usd, r.egress_bytes_month / kBytesPerGiB,
                     r.egress_usd_month);
  out += fmt::format("projected per month: ${:.4f} (rate observed over {:.0f} s of serving)\n",
                     r.total_usd_month, r.input.observed_seconds);
  return out;
}

std::string CostJson(const CostReport& r) {
  std::string out = "{";
  out += "\"provider\":" + JsonString(r.provider);
  out += ",\"provider_name\":" + JsonString(r.provider_name);
  out += ",\"prices_date\":" + JsonString(r.prices_date);
  out += ",\"currency\":\"USD\"";
  out += ",\"stored_bytes\":" + JsonNumber(r.input.stored_bytes);
  out += ",\"stored_objects\":" + JsonNumber(r.input.stored_objects);
  out += ",\"storage_usd_month\":" + JsonNumber(r.storage_usd_month);
  out += ",\"observed_seconds\":" + JsonNumber(r.input.observed_seconds);
  out += ",\"requests_total\":" + JsonNumber(r.input.total.total_requests());
  out += ",\"requests_observed\":" + JsonNumber(r.input.observed.total_requests());
  out += ",\"requests_by_op\":{";
  for (int i = 0; i < kOpKindCount; ++i) {
    out += std::string(i ? "," : "") + JsonString(OpKindName(OpKind(i))) + ":{\"total\":" +
           JsonNumber(r.input.total.requests[i]) + ",\"observed\":" +
           JsonNumber(r.input.observed.requests[i]) + "}";
  }
  out += "},\"classes\":[";
  for (size_t i = 0; i < r.classes.size(); ++i) {
    const auto& c = r.classes[i];
    out += std::string(i ? "," : "") + "{\"class\":" + JsonString(c.name) +
           ",\"requests\":" + JsonNumber(c.requests) + ",\"usd\":" + JsonNumber(c.usd) +
           ",\"requests_month\":" + JsonNumber(c.requests_month) +
           ",\"usd_month\":" + JsonNumber(c.usd_month) + "}";
  }
  out += "],\"egress_bytes\":" + JsonNumber(r.egress_bytes);
  out += ",\"egress_usd\":" + JsonNumber(r.egress_usd);
  out += ",\"egress_bytes_month\":" + JsonNumber(r.egress_bytes_month);
  out += ",\"egress_usd_month\":" + JsonNumber(r.egress_usd_month);
  out += ",\"total_usd_month\":" + JsonNumber(r.total_usd_month);
  return out + "}\n";
}

}  // namespace pail::server
