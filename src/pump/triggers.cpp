// The pump's triggers (SPEC §8: events, cron, what is due) and its spend (usage entries against
// the optional monthly budget).
#include <algorithm>
#include <ctime>

#include "core/util.h"
#include "pump/cron.h"
#include "pump/lease.h"
#include "pump/pump.h"
#include "quarry/error.h"

namespace quarry::pump {
using nlohmann::json;

std::int64_t month_start_utc(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  tm.tm_mday = 1;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000;
}

void check_event_name(const std::string& name) {
  if (name.empty() || name.size() > 200 ||
      !std::all_of(name.begin(), name.end(), [](unsigned char c) { return c > 32 && c < 127; }))
    throw Error(Code::invalid_argument,
                "an event name is 1-200 printable ASCII characters without spaces, e.g. "
                "ticket.created",
                {{"field", "name"}});
}

void Pump::check_budget(const std::string& name, std::int64_t unrecorded) {
  const auto budget = cat_.pump().setting("monthly_budget");
  if (!budget) return;
  const auto limit = std::stoll(*budget);
  const auto used = cat_.pump().usage_entries_since(month_start_utc(core::now_ms())) + unrecorded;
  if (used >= limit)
    throw Error(Code::budget_exhausted,
                "the pump's spend budget of " + *budget + " usage entries this month is used up (" +
                    std::to_string(used) +
                    " used); raise it with `quarry pump budget --monthly N` or remove it with "
                    "--off, then trigger the use case again",
                {{"use_case", name}, {"budget", *budget}});
}

void Pump::set_budget(std::optional<std::int64_t> monthly_entries,
                      const catalog::AuditEntry& audit) {
  if (monthly_entries && *monthly_entries < 0)
    throw Error(Code::invalid_argument, "the monthly budget is a count of usage entries, 0 or more",
                {{"field", "monthly"}});
  auto a = audit;
  a.action = "pump.budget";
  a.target = "pump";
  a.details_json =
      json{{"monthly_budget", monthly_entries ? json(*monthly_entries) : json()}}.dump();
  cat_.pump().set_setting(
      "monthly_budget",
      monthly_entries ? std::optional<std::string>(std::to_string(*monthly_entries)) : std::nullopt,
      a);
}

Spend Pump::spend() {
  Spend s;
  if (auto b = cat_.pump().setting("monthly_budget")) s.monthly_budget = std::stoll(*b);
  s.month_start = month_start_utc(core::now_ms());
  s.by_use_case = cat_.pump().usage_since(s.month_start);
  for (const auto& [name, v] : s.by_use_case) s.used += v.first;
  return s;
}

void Pump::trigger(const std::string& name) {
  if (!cat_.pump().trigger(name, core::now_ms()))
    throw Error(Code::not_found,
                "no pump use case '" + name + "'; `quarry pump list` shows the deployed ones",
                {{"use_case", name}});
}

std::vector<std::string> Pump::event(const std::string& event_name) {
  check_event_name(event_name);
  std::vector<std::string> out;
  const auto now = core::now_ms();
  for (const auto& row : cat_.pump().list()) {
    const auto cfg = json::parse(row.config_json);
    if (!cfg.contains("on")) continue;
    for (const auto& e : cfg["on"])
      if (e.is_string() && e.get<std::string>() == event_name) {
        if (cat_.pump().trigger(row.name, now)) out.push_back(row.name);
        break;
      }
  }
  return out;
}

std::vector<std::string> Pump::cron_tick(std::int64_t from_ms, std::int64_t to_ms) {
  std::vector<std::string> out;
  if (to_ms <= from_ms) return out;
  for (const auto& row : cat_.pump().list()) {
    const auto cfg = json::parse(row.config_json);
    if (!cfg.contains("cron") || !cfg["cron"].is_string()) continue;
    const auto next = Cron::parse(cfg["cron"].get<std::string>(), row.name).next_after(from_ms);
    if (next >= 0 && next <= to_ms && cat_.pump().trigger(row.name, core::now_ms()))
      out.push_back(row.name);
  }
  return out;
}

std::vector<std::string> Pump::due(std::int64_t now) {
  std::vector<std::string> out;
  for (const auto& row : cat_.pump().list()) {
    if (!row.pending || row.next_run_at > now) continue;
    const bool leased = !row.lease_owner.empty() && row.lease_at >= now - kLeaseStaleMs &&
                        !lease_owner_is_dead(row.lease_owner);
    if (!leased) out.push_back(row.name);
  }
  return out;
}

}  // namespace quarry::pump
