#include "pump/cron.h"

#include <ctime>
#include <sstream>
#include <vector>

#include "quarry/error.h"

namespace quarry::pump {

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& what) {
  throw Error(Code::invalid_argument, "use case " + file + ": 'cron' " + what,
              {{"file", file}, {"field", "cron"}});
}

// Sets the bits of one field; `lo`..`hi` is its range. Weekday 7 is folded onto 0 by the caller.
template <std::size_t N>
bool parse_field(const std::string& field, int index, int lo, int hi, std::bitset<N>& bits,
                 const std::string& file) {
  const std::string where = "field " + std::to_string(index + 1) + " ('" + field + "')";
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 2 || t.find_first_not_of("0123456789") != std::string::npos)
      bad(file, where + " is not valid");
    const int n = std::stoi(t);
    if (n < lo || n > hi)
      bad(file, "field " + std::to_string(index + 1) + " value " + t + " is outside " +
                    std::to_string(lo) + "-" + std::to_string(hi));
    return n;
  };
  bool restricted = false;
  std::stringstream items(field);
  std::string item;
  int count = 0;
  while (std::getline(items, item, ',')) {
    ++count;
    std::string range = item;
    int step = 1;
    bool stepped = false;
    if (auto slash = item.find('/'); slash != std::string::npos) {
      range = item.substr(0, slash);
      const std::string s = item.substr(slash + 1);
      if (s.empty() || s.size() > 2 || s.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(s) == 0 || std::stoi(s) > hi)
        bad(file, where + " has an invalid step");
      step = std::stoi(s);
      stepped = true;
    }
    int a = lo, b = hi;
    if (range == "*") {
      if (stepped) restricted = true;
    } else {
      restricted = true;
      const auto dash = range.find('-');
      if (dash == std::string::npos) {
        a = number(range);
        b = stepped ? hi : a;  // "a/n": a to the end of the field
      } else {
        a = number(range.substr(0, dash));
        b = number(range.substr(dash + 1));
        if (a > b)
          bad(file, "field " + std::to_string(index + 1) + " range '" + range + "' runs backwards");
      }
    }
    for (int v = a; v <= b; v += step) bits.set(static_cast<std::size_t>(v));
  }
  if (count == 0 || field.back() == ',') bad(file, where + " is not valid");
  return restricted;
}

}  // namespace

Cron Cron::parse(const std::string& expr, const std::string& file) {
  std::istringstream in(expr);
  std::vector<std::string> f;
  for (std::string s; in >> s;) f.push_back(s);
  if (f.size() != 5)
    bad(file, "expects 5 fields (minute hour day month weekday), got " + std::to_string(f.size()));
  Cron c;
  parse_field(f[0], 0, 0, 59, c.minute, file);
  parse_field(f[1], 1, 0, 23, c.hour, file);
  c.day_restricted = parse_field(f[2], 2, 1, 31, c.day, file);
  parse_field(f[3], 3, 1, 12, c.month, file);
  std::bitset<8> wd;
  c.weekday_restricted = parse_field(f[4], 4, 0, 7, wd, file);
  for (int d = 0; d < 7; ++d)
    c.weekday[static_cast<std::size_t>(d)] = wd[static_cast<std::size_t>(d)];
  if (wd[7]) c.weekday.set(0);
  return c;
}

bool Cron::matches(std::int64_t unix_ms) const {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  if (!minute[static_cast<std::size_t>(tm.tm_min)] || !hour[static_cast<std::size_t>(tm.tm_hour)] ||
      !month[static_cast<std::size_t>(tm.tm_mon + 1)])
    return false;
  const bool d = day[static_cast<std::size_t>(tm.tm_mday)];
  const bool w = weekday[static_cast<std::size_t>(tm.tm_wday)];
  if (day_restricted && weekday_restricted) return d || w;
  return d && w;
}

std::int64_t Cron::next_after(std::int64_t unix_ms) const {
  constexpr std::int64_t kMinute = 60000;
  std::int64_t m = (unix_ms / kMinute + 1) * kMinute;
  // Whole days that cannot match are skipped a day at a time.
  for (int i = 0; i < 4 * 366 * 24 * 60; ++i) {
    if (matches(m)) return m;
    const std::time_t t = static_cast<std::time_t>(m / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    const bool day_ok =
        month[static_cast<std::size_t>(tm.tm_mon + 1)] &&
        ((day_restricted && weekday_restricted) ? (day[static_cast<std::size_t>(tm.tm_mday)] ||
                                                   weekday[static_cast<std::size_t>(tm.tm_wday)])
                                                : (day[static_cast<std::size_t>(tm.tm_mday)] &&
                                                   weekday[static_cast<std::size_t>(tm.tm_wday)]));
    if (!day_ok)
      m += (24 * 60 - (tm.tm_hour * 60 + tm.tm_min)) * kMinute;  // to the next midnight
    else if (!hour[static_cast<std::size_t>(tm.tm_hour)])
      m += (60 - tm.tm_min) * kMinute;  // to the next hour
    else
      m += kMinute;
  }
  return -1;
}

}  // namespace quarry::pump
