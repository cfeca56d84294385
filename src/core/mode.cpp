// The one list of retrieval modes (include/quarry/config.h) and their names.
#include <array>

#include "quarry/config.h"
#include "quarry/error.h"

namespace quarry {
namespace {

struct ModeName {
  Mode mode;
  const char* name;
};
constexpr std::array<ModeName, 5> kModes{{
    {Mode::keyword, "keyword"},
    {Mode::grep, "grep"},
    {Mode::vector, "vector"},
    {Mode::hybrid, "hybrid"},
    {Mode::automatic, "auto"},
}};

}  // namespace

const char* mode_name(Mode mode) {
  for (const auto& m : kModes)
    if (m.mode == mode) return m.name;
  return "keyword";
}

std::optional<Mode> parse_mode(std::string_view name) {
  for (const auto& m : kModes)
    if (name == m.name) return m.mode;
  return std::nullopt;
}

Mode mode_from_name(std::string_view name) {
  if (auto m = parse_mode(name)) return *m;
  throw Error(Code::invalid_argument,
              "unknown mode '" + std::string(name) + "' (" + mode_names() + ")",
              {{"field", "mode"}});
}

const std::vector<Mode>& all_modes() {
  static const std::vector<Mode> modes = [] {
    std::vector<Mode> v;
    for (const auto& m : kModes) v.push_back(m.mode);
    return v;
  }();
  return modes;
}

std::string mode_names() {
  std::string out;
  for (const auto& m : kModes) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

}  // namespace quarry
