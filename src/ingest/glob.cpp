#include "ingest/glob.h"

#include <fnmatch.h>

#include <string>

namespace quarry::ingest {
namespace {

bool match_here(std::string_view p, std::string_view s) {
  // `**` — try every split point (paths are short, patterns shorter).
  auto star2 = p.find("**");
  if (star2 == std::string_view::npos)
    return fnmatch(std::string(p).c_str(), std::string(s).c_str(), FNM_PATHNAME) == 0;
  std::string_view head = p.substr(0, star2);
  std::string_view tail = p.substr(star2 + 2);
  if (!tail.empty() && tail.front() == '/') tail.remove_prefix(1);
  if (head.size() > s.size()) return false;
  // head must match a prefix of s ending at a segment boundary (or be empty).
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    std::string_view prefix = s.substr(0, cut);
    bool head_ok =
        head.empty()
            ? cut == 0
            : (fnmatch(std::string(head).c_str(), std::string(prefix).c_str(), FNM_PATHNAME) == 0);
    if (!head_ok) continue;
    std::string_view rest = s.substr(cut);
    // `**` swallows zero or more whole segments of rest.
    for (std::size_t k = 0; k <= rest.size(); ++k) {
      if (k != 0 && rest[k - 1] != '/') continue;
      if (tail.empty() ? true : match_here(tail, rest.substr(k))) return true;
    }
    if (tail.empty()) return true;
  }
  return false;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  if (match_here(pattern, path)) return true;
  if (pattern.find('/') == std::string_view::npos) {
    auto slash = path.rfind('/');
    if (slash != std::string_view::npos) return match_here(pattern, path.substr(slash + 1));
  }
  return false;
}

}  // namespace quarry::ingest
