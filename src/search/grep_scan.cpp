// The hot loop of grep mode. The pattern runs over a whole file at once, never line by line:
// one unanchored search finds the next match anywhere ahead, and only then are the line around it,
// its number and its context located with memchr/memrchr. A file with no match therefore costs one
// pass of RE2's DFA (or memmem) and nothing else.
#include "search/grep_scan.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstring>

#include "quarry/error.h"

namespace quarry::search::detail {
namespace {

// Bytes that make a pattern more than a fixed string in RE2 syntax. A regex-mode pattern made of
// plain printable ASCII alone takes the memmem path; anything else (including non-ASCII, whose
// UTF-8 validity RE2 checks) goes to RE2 so both modes refuse the same patterns.
bool is_plain_ascii_literal(std::string_view p) {
  for (unsigned char c : p) {
    if (c < 0x20 || c >= 0x7f || std::strchr("\\.+*?()|[]{}^$", c) != nullptr) return false;
  }
  return true;
}

// Newlines in [p, p + n): memchr skips long lines in wide steps instead of testing every byte.
int count_newlines(const char* p, std::size_t n) {
  int lines = 0;
  const char* end = p + n;
  while (p < end) {
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    if (nl == nullptr) break;
    ++lines;
    p = static_cast<const char*>(nl) + 1;
  }
  return lines;
}

// Offset of the '\n' ending the line that contains `at`, or the text size on the last line.
std::size_t line_end(std::string_view text, std::size_t at) {
  const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
  return nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
}

// Offset of the first byte of the line containing `at`, looking back no further than `floor`
// (a known line start).
std::size_t line_start(std::string_view text, std::size_t floor, std::size_t at) {
  const void* nl = memrchr(text.data() + floor, '\n', at - floor);
  return nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) + 1 : floor;
}

// After an empty match at `at`, the next search starts at the next UTF-8 character, so an empty
// match cannot repeat forever and no search starts inside a multi-byte character.
std::size_t next_char(std::string_view text, std::size_t at, std::size_t limit) {
  ++at;
  while (at < limit && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  return at;
}

// Highlighting is a courtesy, so it gets a bounded amount of work per line. Each search for the
// next match may scan up to the end of the line (RE2's leftmost-first DFA must rule out a longer
// preferred match, e.g. `a*b|a` over "aaaa…"), so without a bound a long line could cost
// quadratic time. Past either bound the remaining ranges of that line are left out.
constexpr std::size_t kMaxRangesPerLine = 1024;
constexpr std::size_t kRangeScanFactor = 32;        // budget: this many times the line length
constexpr std::size_t kRangeScanSlack = 64 * 1024;  // plus this, so short lines are never cut

void collect_ranges(std::string_view text, const LineMatcher& matcher, std::size_t ls,
                    std::size_t le, std::size_t mb, std::size_t me, GrepMatch* out) {
  std::size_t budget = kRangeScanFactor * (le - ls) + kRangeScanSlack;
  std::size_t searches = 0;
  for (;;) {
    if (me > mb) out->ranges.emplace_back(mb - ls, me - ls);
    const std::size_t from = me > mb ? me : next_char(text, me, le);
    if (from >= le || ++searches >= kMaxRangesPerLine || le - from > budget) return;
    budget -= le - from;
    if (!matcher.find(text, from, le, &mb, &me)) return;
  }
}

// Context lines never reach into the front matter (`body` is its end): they are not content.
void add_before_context(std::string_view text, std::size_t body, std::size_t ls, int line_no,
                        int count, GrepMatch* out) {
  std::size_t start = ls;
  for (int k = 1; k <= count && start > body; ++k) {
    const std::size_t end = start - 1;  // the '\n' ending the previous line
    start = line_start(text, body, end);
    out->before.push_back({line_no - k, std::string(text.substr(start, end - start))});
  }
  std::reverse(out->before.begin(), out->before.end());
}

void add_after_context(std::string_view text, std::size_t le, int line_no, int count,
                       GrepMatch* out) {
  std::size_t end = le;
  for (int k = 1; k <= count && end + 1 < text.size(); ++k) {
    const std::size_t start = end + 1;
    end = line_end(text, start);
    out->after.push_back({line_no + k, std::string(text.substr(start, end - start))});
  }
}

}  // namespace

LineMatcher::LineMatcher(const GrepOptions& opts) {
  if (!opts.ignore_case && !opts.word && (opts.literal || is_plain_ascii_literal(opts.pattern))) {
    literal_ = opts.pattern;
    use_memmem_ = true;
    never_ = literal_.find('\n') != std::string::npos;
    return;
  }
  RE2::Options o;
  o.set_never_nl(true);  // a match never spans lines, even for \s or [^x]
  o.set_case_sensitive(!opts.ignore_case);
  o.set_max_mem(opts.max_pattern_memory);
  o.set_log_errors(false);
  std::string user = opts.literal ? RE2::QuoteMeta(opts.pattern) : opts.pattern;
  if (opts.word) user = "\\b(?:" + user + ")\\b";  // as grep -w: a word on both sides
  // (?m): ^ and $ match at line boundaries, as in grep; the buffer holds a whole file.
  constexpr std::string_view kPrefix = "(?m)";
  re_ = std::make_unique<RE2>(std::string(kPrefix) + user, o);
  if (re_->ok()) return;
  std::string why = re_->error();
  const std::string& arg = re_->error_arg();
  if (arg.compare(0, kPrefix.size(), kPrefix) == 0 && why.size() >= arg.size() &&
      why.compare(why.size() - arg.size(), std::string::npos, arg) == 0) {
    // RE2 quotes the whole pattern for some errors; show the user's pattern, not ours.
    why.erase(why.size() - arg.size(), kPrefix.size());
  }
  if (re_->error_code() == RE2::ErrorPatternTooLarge) {
    why += " (it needs more than max_pattern_memory, " + std::to_string(opts.max_pattern_memory) +
           " bytes; simplify it)";
  }
  throw Error(Code::invalid_argument, "invalid pattern: " + why, {{"field", "pattern"}});
}

LineMatcher::~LineMatcher() = default;

bool LineMatcher::find(std::string_view text, std::size_t from, std::size_t to, std::size_t* begin,
                       std::size_t* end) const {
  if (from > to || never_) return false;
  if (use_memmem_) {
    if (literal_.empty()) {
      *begin = *end = from;
      return true;
    }
    const void* hit = memmem(text.data() + from, to - from, literal_.data(), literal_.size());
    if (hit == nullptr) return false;
    *begin = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
    *end = *begin + literal_.size();
    return true;
  }
  re2::StringPiece m;
  if (!re_->Match(re2::StringPiece(text.data(), text.size()), from, to, RE2::UNANCHORED, &m, 1)) {
    return false;
  }
  *begin = static_cast<std::size_t>(m.data() - text.data());
  *end = *begin + m.size();
  return true;
}

std::size_t front_matter_end(std::string_view text) {
  if (text.substr(0, 4) != "---\n") return 0;
  // The block closes at the first later line that is exactly "---".
  for (std::size_t from = 3;;) {
    const std::size_t at = text.find("\n---", from);
    if (at == std::string_view::npos) return 0;
    const std::size_t after = at + 4;
    if (after == text.size()) return after;
    if (text[after] == '\n') return after + 1;
    from = at + 1;
  }
}

namespace {

// grep -v: every line of the body that holds no match, with its context.
std::size_t scan_inverted(std::string_view text, const LineMatcher& matcher,
                          const GrepOptions& opts, std::size_t max_lines,
                          std::vector<GrepMatch>* out) {
  const std::size_t n = text.size();
  const std::size_t body = opts.skip_front_matter ? front_matter_end(text) : 0;
  int line_no = 1 + static_cast<int>(count_newlines(text.data(), body));
  std::size_t found = 0;
  for (std::size_t ls = body; ls < n && found < max_lines; ++line_no) {
    const std::size_t le = line_end(text, ls);
    std::size_t mb = 0, me = 0;
    if (!matcher.find(text, ls, le, &mb, &me)) {
      GrepMatch& m = out->emplace_back();
      m.line = line_no;
      m.text.assign(text.data() + ls, le - ls);
      if (opts.before_context > 0)
        add_before_context(text, body, ls, line_no, opts.before_context, &m);
      if (opts.after_context > 0) add_after_context(text, le, line_no, opts.after_context, &m);
      ++found;
    }
    ls = le + 1;
  }
  return found;
}

}  // namespace

std::size_t scan_text(std::string_view text, const LineMatcher& matcher, const GrepOptions& opts,
                      std::size_t max_lines, std::vector<GrepMatch>* out) {
  if (opts.invert) return scan_inverted(text, matcher, opts, max_lines, out);
  const std::size_t n = text.size();
  const std::size_t body = opts.skip_front_matter ? front_matter_end(text) : 0;
  // Newlines are counted lazily, from `counted` (a line start whose number is `line_no`) up to
  // the next matching line only, so a file without matches is never counted at all.
  std::size_t counted = 0;
  int line_no = 1;
  std::size_t found = 0;
  std::size_t pos = body;  // always a line start
  while (found < max_lines) {
    std::size_t mb = 0, me = 0;
    if (!matcher.find(text, pos, n, &mb, &me)) break;
    // An empty match after the final '\n' is on no line (grep counts "a\n" as one line).
    if (mb == n && (n == body || text[n - 1] == '\n')) break;
    const std::size_t ls = line_start(text, pos, mb);
    const std::size_t le = line_end(text, mb);
    line_no += count_newlines(text.data() + counted, ls - counted);
    counted = ls;

    GrepMatch& m = out->emplace_back();
    m.line = line_no;
    m.text.assign(text.data() + ls, le - ls);
    collect_ranges(text, matcher, ls, le, mb, me, &m);
    if (opts.before_context > 0)
      add_before_context(text, body, ls, line_no, opts.before_context, &m);
    if (opts.after_context > 0) add_after_context(text, le, line_no, opts.after_context, &m);
    ++found;

    if (le >= n) break;
    pos = counted = le + 1;
    ++line_no;
  }
  return found;
}

}  // namespace quarry::search::detail
