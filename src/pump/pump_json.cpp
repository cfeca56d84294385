#include "pump/pump_json.h"

#include "core/util.h"

namespace quarry::pump {
using nlohmann::json;

namespace {
json iso_or_null(std::int64_t ms) {
  return ms > 0 ? json(core::iso8601_utc(ms)) : json();
}
json str_or_null(const std::string& s) {
  return s.empty() ? json() : json(s);
}
}  // namespace

json to_json(const UseCaseStatus& s) {
  const auto& r = s.row;
  return {{"use_case", r.name},
          {"config", s.config},
          {"embedder", r.embedder},
          {"revision", str_or_null(s.revision)},
          {"config_revision", r.config_revision},
          {"model_error", str_or_null(s.model_error)},
          {"running", s.running},
          {"pending", r.pending},
          {"parked", r.parked},
          {"next_run_at", r.pending ? iso_or_null(r.next_run_at) : json()},
          {"attempts", r.attempts},
          {"tombstoned", s.tombstoned},
          {"last_run_at", iso_or_null(r.last_run_at)},
          {"last_error", str_or_null(r.last_error)},
          {"last_failed", r.last_failed},
          {"last_skipped", r.last_skipped},
          {"usage_entries", s.usage_entries},
          {"usage_chunks", s.usage_chunks},
          {"deployed_at", core::iso8601_utc(r.deployed_at)}};
}

json to_json(const RunResult& r) {
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

json to_json(const Spend& s) {
  return {{"monthly_budget", s.monthly_budget ? json(*s.monthly_budget) : json()},
          {"used", s.used},
          {"remaining",
           s.monthly_budget ? json(std::max<std::int64_t>(0, *s.monthly_budget - s.used)) : json()},
          {"month_start", core::iso8601_utc(s.month_start)}};
}

}  // namespace quarry::pump
