#include "wire/pump_json.h"

#include <algorithm>

#include "quarry/util.h"

namespace quarry::wire {
using nlohmann::json;

namespace {
json iso_or_null(std::int64_t ms) {
  return ms > 0 ? json(iso8601_utc(ms)) : json();
}
json str_or_null(const std::string& s) {
  return s.empty() ? json() : json(s);
}
}  // namespace

json to_json(const PumpUseCaseStatus& s) {
  return {{"use_case", s.name},
          {"config", json::parse(s.config_json)},
          {"embedder", s.embedder},
          {"revision", str_or_null(s.revision)},
          {"config_revision", s.config_revision},
          {"model_error", str_or_null(s.model_error)},
          {"running", s.running},
          {"pending", s.pending},
          {"parked", s.parked},
          {"next_run_at", s.pending ? iso_or_null(s.next_run_at) : json()},
          {"attempts", s.attempts},
          {"tombstoned", s.tombstoned},
          {"last_run_at", iso_or_null(s.last_run_at)},
          {"last_error", str_or_null(s.last_error)},
          {"last_failed", s.last_failed},
          {"last_skipped", s.last_skipped},
          {"usage_entries", s.usage_entries},
          {"usage_chunks", s.usage_chunks},
          {"deployed_at", iso8601_utc(s.deployed_at)}};
}

json to_json(const PumpRunResult& r) {
  if (r.status == "already_running") return {{"status", r.status}, {"use_case", r.use_case}};
  return {{"status", r.status},
          {"use_case", r.use_case},
          {"processed", r.processed},
          {"failed", r.failed},
          {"skipped", r.skipped},
          {"blocked", r.blocked},
          {"batches", r.batches},
          {"drained", r.drained},
          {"chunks", r.chunks},
          {"revision", r.revision},
          {"usage_entries", r.usage_entries}};
}

json to_json(const PumpSpend& s) {
  return {{"monthly_budget", s.monthly_budget ? json(*s.monthly_budget) : json()},
          {"used", s.used},
          {"remaining",
           s.monthly_budget ? json(std::max<std::int64_t>(0, *s.monthly_budget - s.used)) : json()},
          {"month_start", iso8601_utc(s.month_start)}};
}

json to_json(const PumpDeployReport& r) {
  return {{"deployed", r.deployed}, {"removed", r.removed}, {"parked", r.parked}};
}

json to_json(const PumpEmbedding& e) {
  return {{"embedding", e.embedding}, {"revision", e.revision}};
}

}  // namespace quarry::wire
