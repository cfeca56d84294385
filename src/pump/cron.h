// Five-field cron schedules for pump use cases (SPEC §8), evaluated by the server in UTC:
// minute 0-59, hour 0-23, day of month 1-31, month 1-12, weekday 0-7 (0 and 7 are Sunday).
// Each field is `*`, a number, a range a-b, a list of those, or a step (`*/n`, `a-b/n`, `a/n`
// meaning a to the field's end). As in Vixie cron, when both day fields are restricted a
// minute matches if either one does.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>

namespace quarry::pump {

struct Cron {
  std::bitset<60> minute;
  std::bitset<24> hour;
  std::bitset<32> day;     // 1..31
  std::bitset<13> month;   // 1..12
  std::bitset<7> weekday;  // 0..6, Sunday = 0
  bool day_restricted = false, weekday_restricted = false;

  // Throws Error(invalid_argument) naming `file` and the field when `expr` is not valid.
  static Cron parse(const std::string& expr, const std::string& file);
  // True when the UTC minute containing `unix_ms` matches.
  bool matches(std::int64_t unix_ms) const;
  // The first matching minute strictly after `unix_ms` (within 4 years; else -1), in ms.
  std::int64_t next_after(std::int64_t unix_ms) const;
};

}  // namespace quarry::pump
