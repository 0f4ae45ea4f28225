#include "server/request_ledger.h"

#include <sstream>

namespace pail::server {
namespace {

constexpr std::string_view kLedgerHeader = "pailfs-request-ledger 1";

}  // namespace

std::string EncodeLedger(const RequestCounts& counts) {
  std::string out(kLedgerHeader);
  out += '\n';
  for (int i = 0; i < kOpKindCount; ++i) {
    out += OpKindName(OpKind(i));
    out += ' ' + std::to_string(counts.requests[i]) + ' ' + std::to_string(counts.bytes[i]) + '\n';
  }
  return out;
}

Result<RequestCounts> DecodeLedger(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line != kLedgerHeader) {
    return Status::Corruption("request ledger: unknown header '" + line + "'");
  }
  RequestCounts counts;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string op;
    uint64_t requests = 0, bytes = 0;
    if (!(fields >> op >> requests >> bytes)) {
      return Status::Corruption("request ledger: bad line '" + line + "'");
    }
    for (int i = 0; i < kOpKindCount; ++i) {
      if (op == OpKindName(OpKind(i))) {
        counts.requests[i] = requests;
        counts.bytes[i] = bytes;
      }
    }
  }
  return counts;
}

Status RequestLedger::Load(engine::Engine& engine) {
  std::string value;
  rocksdb::Status s = engine.db()->Get(rocksdb::ReadOptions(), engine.db()->DefaultColumnFamily(),
                                       kRequestLedgerKey, &value);
  RequestCounts earlier;
  if (s.ok()) {
    PAIL_ASSIGN_OR_RETURN(earlier, DecodeLedger(value));
  } else if (!s.IsNotFound()) {
    return engine::FromRocks(s).WithContext("reading the request ledger");
  }
  MutexLock lock(&mu_);
  earlier_ = earlier;
  loaded_ = true;
  return Status::OK();
}

void RequestLedger::StartFromZero() {
  MutexLock lock(&mu_);
  earlier_ = RequestCounts{};
  loaded_ = true;
}

RequestCounts RequestLedger::Total() const {
  RequestCounts total = counts_->Snapshot();
  MutexLock lock(&mu_);
  total += earlier_;
  return total;
}

std::string RequestLedger::Record() const {
  {
    MutexLock lock(&mu_);
    if (!loaded_) return "";
  }
  return EncodeLedger(Total());
}

void RequestLedger::Attach(engine::EngineOptions& options) {
  options.sync_record_key = std::string(kRequestLedgerKey);
  options.sync_record_value = [this] { return Record(); };
}

}  // namespace pail::server
