// Windowing an oversize unit. Every boundary between two tokens gets a level (outline.h); each
// window ends at the best boundary in the upper part of its budget (latest wins a tie), so small
// blocks pack greedily and a cut falls at a block, then a sentence, then a word, and only inside
// a word when a single word outgrows the budget. The next window starts about overlap_tokens
// earlier, at a line or word start. All of it is linear in the unit: tokens are listed once and
// each window's text is counted once.
#include "chunk/windows.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/segment.h"
#include "quarry/error.h"

namespace quarry::chunk {
namespace {

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Length of the white-space character encoded at text[i], or 0.
std::size_t blank_at(std::string_view text, std::size_t i) {
  auto b = [&](std::size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  if (is_ascii_space(text[i])) return 1;
  if (b(0) == 0xC2 && (b(1) == 0xA0 || b(1) == 0x85)) return 2;
  if (b(0) == 0xE1 && b(1) == 0x9A && b(2) == 0x80) return 3;
  if (b(0) == 0xE2 && b(1) == 0x80) {
    unsigned c = b(2);
    return (c >= 0x80 && c <= 0x8B) || c == 0xA8 || c == 0xA9 || c == 0xAF ? 3 : 0;
  }
  if (b(0) == 0xE2 && b(1) == 0x81 && b(2) == 0x9F) return 3;
  if (b(0) == 0xE3 && b(1) == 0x80 && b(2) == 0x80) return 3;
  if (b(0) == 0xEF && b(1) == 0xBB && b(2) == 0xBF) return 3;
  return 0;
}

bool is_closer(std::string_view t) {
  return t == ")" || t == "]" || t == "\"" || t == "'" || t == "\xE2\x80\x9D" ||
         t == "\xE2\x80\x99" || t == "*" || t == "_";
}

bool is_ascii_terminal(std::string_view t) {
  return t == "." || t == "!" || t == "?";
}

// Ideographic full stop and full-width ! ? . need no space after them.
bool is_wide_terminal(std::string_view t) {
  return t == "\xE3\x80\x82" || t == "\xEF\xBC\x81" || t == "\xEF\xBC\x9F" || t == "\xEF\xBC\x8E";
}

}  // namespace

void trim_blank(std::string_view text, std::uint32_t& begin, std::uint32_t& end) {
  while (begin < end) {
    std::size_t n = blank_at(text, begin);
    if (n == 0 || begin + n > end) break;
    begin += static_cast<std::uint32_t>(n);
  }
  while (end > begin) {
    std::uint32_t n = 1;
    while (n <= 3 && n <= end - begin && blank_at(text, end - n) != n) ++n;
    if (n > 3 || n > end - begin) break;
    end -= n;
  }
}

WindowPlanner::WindowPlanner(std::string_view text, const Tokenizer& tokenizer,
                             const WindowSettings& settings, const std::vector<Mark>& marks,
                             const std::vector<ByteRange>& verbatim)
    : text_(text), tokenizer_(tokenizer), settings_(settings), marks_(marks), verbatim_(verbatim) {}

int WindowPlanner::plan(std::uint32_t begin, std::uint32_t end, int unit,
                        std::vector<PlannedChunk>& out) {
  trim_blank(text_, begin, end);
  if (begin == end) return 0;
  // Most units fit: one count, no span list.
  int whole = tokenizer_.count(text_.substr(begin, end - begin));
  if (whole == 0) return 0;
  if (whole <= settings_.max_tokens) {
    push(out, {begin, end, unit, whole});
    return 1;
  }
  return plan_windows(begin, end, unit, whole, out);
}

int WindowPlanner::plan_windows(std::uint32_t begin, std::uint32_t end, int unit, int whole,
                                std::vector<PlannedChunk>& out) {
  tokenizer_.spans(text_.substr(begin, end - begin), spans_);
  if (spans_.empty()) {  // a tokenizer whose count and spans disagree: keep the text whole
    push(out, {begin, end, unit, whole});
    return 1;
  }
  for (auto& sp : spans_) {
    sp.first += begin;
    sp.second += begin;
  }
  compute_word_starts(begin, end);
  compute_levels();
  int planned = 0;
  std::size_t s = 0;
  std::size_t prev_end = 0;
  for (;;) {
    int tokens = 0;
    std::size_t c = cut(s, prev_end, tokens);
    push(out, {spans_[s].first, spans_[c - 1].second, unit, tokens});
    ++planned;
    if (c >= spans_.size()) return planned;
    prev_end = c;
    s = next_start(s, c);
  }
}

void WindowPlanner::push(std::vector<PlannedChunk>& out, PlannedChunk chunk) const {
  out.push_back(chunk);
  if (out.size() <= settings_.max_chunks) return;
  // Stop here rather than cut the rest; extrapolate the count from the share of text done.
  std::size_t estimate = std::max<std::size_t>(
      out.size(), out.size() * text_.size() / std::max<std::uint32_t>(1, chunk.end));
  std::string limit = std::to_string(settings_.max_chunks);
  throw Error(Code::too_many_chunks,
              "the document would produce about " + std::to_string(estimate) +
                  " chunks, more than the limit of " + limit + " per document (max_tokens " +
                  std::to_string(settings_.max_tokens) +
                  "); raise chunking.max_tokens, choose profile 'none', or split the document",
              {{"count", std::to_string(estimate)}, {"limit", limit}});
}

void WindowPlanner::compute_word_starts(std::uint32_t begin, std::uint32_t end) {
  word_starts_.clear();
  if (!settings_.words) return;
  const std::string_view unit = text_.substr(begin, end - begin);
  core::script_runs(unit, [&](std::size_t rb, std::size_t re, bool unspaced) {
    if (!unspaced) return;
    word_starts_.push_back(begin + static_cast<std::uint32_t>(rb));
    core::segment_run(unit.substr(rb, re - rb), core::Segmenter::icu,
                      [&](std::size_t wb, std::size_t) {
                        word_starts_.push_back(begin + static_cast<std::uint32_t>(rb + wb));
                      });
    word_starts_.push_back(begin + static_cast<std::uint32_t>(re));
  });
  std::sort(word_starts_.begin(), word_starts_.end());
}

void WindowPlanner::compute_levels() {
  const std::size_t n = spans_.size();
  levels_.assign(n, kAdjacent);
  if (n == 0) return;
  auto m = std::upper_bound(marks_.begin(), marks_.end(), spans_[0].first,
                            [](std::uint32_t off, const Mark& mk) { return off < mk.offset; });
  auto v = std::upper_bound(verbatim_.begin(), verbatim_.end(), spans_[0].first,
                            [](std::uint32_t off, const ByteRange& r) { return off < r.end; });
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint32_t prev_begin = spans_[i - 1].first;
    const std::uint32_t gap_begin = spans_[i - 1].second;
    const std::uint32_t next_begin = spans_[i].first;
    std::uint8_t level = next_begin > gap_begin ? kSpace : kAdjacent;
    if (level == kAdjacent && !word_starts_.empty() &&
        std::binary_search(word_starts_.begin(), word_starts_.end(), next_begin))
      level = kSpace;  // between two words of text written without spaces
    int newlines = 0;
    for (std::uint32_t k = gap_begin; k < next_begin; ++k) newlines += text_[k] == '\n';
    for (; m != marks_.end() && m->offset <= next_begin; ++m) {
      if (m->offset > prev_begin) level = std::max(level, m->level);
    }
    while (v != verbatim_.end() && v->end <= next_begin) ++v;
    const bool in_verbatim = settings_.prose && v != verbatim_.end() && v->begin <= prev_begin;
    if (newlines >= 2) level = std::max<std::uint8_t>(level, kInnerBlock);
    if (newlines >= 1 && (!settings_.prose || in_verbatim)) {
      level = std::max<std::uint8_t>(level, kLine);
    }
    if (settings_.prose && !in_verbatim && level < kLine && ends_sentence(i)) level = kLine;
    levels_[i] = level;
  }
}

// Whether a sentence ends before token i: ". Next", "end.) Next", "。次".
bool WindowPlanner::ends_sentence(std::size_t i) const {
  auto token = [&](std::size_t k) {
    return text_.substr(spans_[k].first, spans_[k].second - spans_[k].first);
  };
  std::size_t j = i - 1;
  for (int k = 0; k < 2 && j > 0 && is_closer(token(j)); ++k) --j;
  std::string_view t = token(j);
  if (is_wide_terminal(t)) return true;
  if (!is_ascii_terminal(t) || spans_[i].first == spans_[i - 1].second) return false;
  char next = text_[spans_[i].first];
  return !(next >= 'a' && next <= 'z');  // "e.g. this" goes on
}

std::size_t WindowPlanner::cut(std::size_t s, std::size_t prev_end, int& tokens) const {
  const std::size_t total = spans_.size();
  const auto max = static_cast<std::size_t>(settings_.max_tokens);
  std::size_t e_max = std::min(total, s + max);
  std::size_t c = e_max == total ? total : choose(s, e_max, prev_end);
  // A model tokenizer may count a cut-out text differently from its share of the whole: shrink
  // until the window itself fits.
  for (;;) {
    tokens = count(s, c);
    if (tokens <= settings_.max_tokens || c == s + 1) return c;
    std::size_t excess = static_cast<std::size_t>(tokens - settings_.max_tokens);
    e_max = c - std::min(c - s - 1, std::max<std::size_t>(1, excess));
    c = choose(s, e_max, prev_end);
  }
}

// The best boundary in (s, e_max], looking only at the upper part of the budget so that windows
// stay full and each one advances past the next one's overlap.
std::size_t WindowPlanner::choose(std::size_t s, std::size_t e_max, std::size_t prev_end) const {
  const auto max = static_cast<std::size_t>(settings_.max_tokens);
  const auto overlap = static_cast<std::size_t>(settings_.overlap_tokens);
  std::size_t lo = s + overlap + std::max<std::size_t>(1, (max - overlap) / 2);
  if (lo > e_max) lo = s + 1;
  std::size_t best = e_max;
  for (std::size_t i = e_max; i >= lo && levels_[best] < kTopBlock; --i) {
    if (levels_[i] > levels_[best]) best = i;
  }
  return settings_.prose ? keep_verbatim_whole(s, best, prev_end) : best;
}

// A cut inside a code block or table that would fit in a window of its own moves to its start,
// unless that would only repeat text the previous window already holds.
std::size_t WindowPlanner::keep_verbatim_whole(std::size_t s, std::size_t c,
                                               std::size_t prev_end) const {
  const std::uint32_t before = spans_[c - 1].first;
  auto v = std::upper_bound(verbatim_.begin(), verbatim_.end(), before,
                            [](std::uint32_t off, const ByteRange& r) { return off < r.begin; });
  if (v == verbatim_.begin()) return c;
  --v;
  if (v->end <= spans_[c].first) return c;
  std::size_t tb = token_at_or_after(v->begin);
  std::size_t te = token_at_or_after(v->end);
  bool fits = te - tb <= static_cast<std::size_t>(settings_.max_tokens);
  return fits && tb > std::max(s, prev_end) ? tb : c;
}

// Where the window after [s, c) starts: about overlap_tokens back, preferably at a sentence or
// line start in the first half of the overlap, else at the first word start.
std::size_t WindowPlanner::next_start(std::size_t s, std::size_t c) const {
  const auto overlap = static_cast<std::size_t>(settings_.overlap_tokens);
  if (overlap == 0 || c - s <= overlap) return c;
  const std::size_t target = c - overlap;
  std::size_t p = target;
  std::size_t i = target;
  for (; i < c && i <= target + overlap / 2 && levels_[i] < kLine; ++i) {
  }
  if (i < c && levels_[i] >= kLine) {
    p = i;
  } else {
    for (i = target; i < c && levels_[i] < kSpace; ++i) {
    }
    if (i < c) p = i;
  }
  return settings_.prose ? fit_verbatim_after(p, c) : p;
}

// If a code block or table that fits a window starts inside the overlap, shorten the overlap so
// that the next window can hold all of it.
std::size_t WindowPlanner::fit_verbatim_after(std::size_t p, std::size_t c) const {
  auto v = std::upper_bound(verbatim_.begin(), verbatim_.end(), spans_[p].first,
                            [](std::uint32_t off, const ByteRange& r) { return off < r.begin; });
  if (v == verbatim_.end() || v->begin > spans_[c].first) return p;
  std::size_t tb = token_at_or_after(v->begin);
  std::size_t te = token_at_or_after(v->end);
  const auto max = static_cast<std::size_t>(settings_.max_tokens);
  if (te - tb > max || te - p <= max) return p;
  return te - max;
}

std::size_t WindowPlanner::token_at_or_after(std::uint32_t offset) const {
  auto it = std::lower_bound(spans_.begin(), spans_.end(), offset,
                             [](const std::pair<std::uint32_t, std::uint32_t>& sp,
                                std::uint32_t off) { return sp.first < off; });
  return static_cast<std::size_t>(it - spans_.begin());
}

int WindowPlanner::count(std::size_t s, std::size_t c) const {
  const std::uint32_t b = spans_[s].first;
  return tokenizer_.count(text_.substr(b, spans_[c - 1].second - b));
}

}  // namespace quarry::chunk
