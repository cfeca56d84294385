// Shared by the chunking tests: the invariants every chunking must keep, and a generator of
// random Markdown documents for property tests.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "chunk/chunker.h"
#include "core/segment.h"

namespace quarry::chunk::test {

inline const Tokenizer& approx() {
  static const auto tokenizer = make_approx_tokenizer();
  return *tokenizer;
}

inline ChunkOptions options(const std::string& profile, int max_tokens, int overlap_tokens) {
  ChunkOptions o;
  o.profile = profile;
  o.max_tokens = max_tokens;
  o.overlap_tokens = overlap_tokens;
  return o;
}

inline bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

inline bool looks_like_uuid_v4(const std::string& s) {
  if (s.size() != 36 || s[14] != '4') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    char c = s[i];
    if (dash != (c == '-')) return false;
    if (!dash && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Checks SPEC §3's invariants; returns false (after reporting) at the first broken one so that a
// property test over hundreds of documents stays readable.
inline bool check_invariants(std::string_view md, const std::vector<Chunk>& chunks,
                             const ChunkOptions& opts, const Tokenizer& tok = approx()) {
  auto fail = [](const std::string& why) {
    ADD_FAILURE() << why;
    return false;
  };
  if (chunks.empty()) return fail("no chunks");
  std::set<std::string> ids;
  std::vector<bool> covered(md.size(), false);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    std::string where = "chunk " + std::to_string(i) + " at " + std::to_string(c.offset);
    if (c.index != static_cast<int>(i)) return fail(where + ": index");
    if (c.offset + c.length > md.size()) return fail(where + ": out of range");
    if (c.text != md.substr(c.offset, c.length)) return fail(where + ": text");
    if (c.length == 0 || is_ascii_space(c.text.front()) || is_ascii_space(c.text.back()))
      return fail(where + ": untrimmed or empty [" + c.text + "]");
    int counted = tok.count(c.text);
    if (c.token_count != counted || counted == 0)
      return fail(where + ": token_count " + std::to_string(c.token_count) +
                  " != " + std::to_string(counted));
    if (opts.profile != "none" && c.token_count > opts.max_tokens)
      return fail(where + ": " + std::to_string(c.token_count) + " tokens > max");
    if (i > 0 && c.offset <= chunks[i - 1].offset) return fail(where + ": not ordered by offset");
    if (!looks_like_uuid_v4(c.chunk_id) || !ids.insert(c.chunk_id).second)
      return fail(where + ": chunk_id " + c.chunk_id);
    if (opts.profile != "prose" && (c.parent_chunk || !c.heading_path.empty()))
      return fail(where + ": parent/heading_path outside prose");
    for (std::size_t k = c.offset; k < c.offset + c.length; ++k) covered[k] = true;
  }
  // No text lost: what no chunk holds is white space, ASCII or Unicode (no tokens, no ASCII ink).
  for (std::size_t k = 0; k < md.size();) {
    if (covered[k]) {
      ++k;
      continue;
    }
    std::size_t e = k;
    while (e < md.size() && !covered[e]) ++e;
    std::string_view gap = md.substr(k, e - k);
    for (std::size_t j = 0; j < gap.size(); ++j) {
      auto u = static_cast<unsigned char>(gap[j]);
      if (u < 0x80 && !is_ascii_space(gap[j]))
        return fail("byte " + std::to_string(k + j) + " lost");
    }
    if (approx().count(gap) != 0) return fail("text lost at " + std::to_string(k));
    k = e;
  }
  // Windows of one oversize section are consecutive, at least two, and share a parent id.
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (!chunks[i].parent_chunk) continue;
    const std::string& p = *chunks[i].parent_chunk;
    if (ids.count(p)) return fail("parent_chunk is a chunk's own id");
    bool prev = i > 0 && chunks[i - 1].parent_chunk == p;
    bool next = i + 1 < chunks.size() && chunks[i + 1].parent_chunk == p;
    if (!prev && !next) return fail("lone window " + std::to_string(i));
    if (prev && chunks[i - 1].heading_path != chunks[i].heading_path)
      return fail("siblings with different heading_path");
  }
  return true;
}

// ---- random Markdown -------------------------------------------------------------------------

class MarkdownGen {
 public:
  explicit MarkdownGen(unsigned seed) : rng_(seed) {}

  std::string document() {
    std::string d;
    if (pick(4) == 0) d += "\n  \n";
    int blocks = 1 + pick(40);
    for (int b = 0; b < blocks; ++b) {
      block(d);
      d += pick(5) == 0 ? "\n" : "\n\n";
    }
    if (pick(3) == 0) d += "   \n\n";
    return d;
  }

  std::string word() {
    static const char* kWords[] = {"the",        "of",    "protein", "cells",     "a",
                                   "expression", "we",    "results", "in",        "Study",
                                   "données",    "naïve", "Ω-3",     "x86_64",    "don't",
                                   "e.g.",       "3.14",  "café",    "übermäßig", "and"};
    int k = pick(30);
    if (k < 20) return kWords[k];
    if (k < 23) return std::string(static_cast<std::size_t>(7 + pick(30)), 'q');  // long word
    if (k < 25) return "中文字符";
    if (k < 26) return "👍🏽";
    if (k < 27) return "`code()`";
    if (k < 28) return "**bold**";
    if (k < 29) return "[link](http://x.org/a)";
    return "日本語です。";
  }

  std::string sentence() {
    std::string s = "Word";
    int n = 1 + pick(20);
    for (int i = 0; i < n; ++i) s += (pick(15) == 0 ? "\u00a0" : " ") + word();
    static const char* kEnds[] = {".", "!", "?", ".)", "", ";"};
    return s + kEnds[pick(6)];
  }

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  void paragraph(std::string& d) {
    int n = 1 + pick(pick(4) == 0 ? 40 : 5);
    for (int i = 0; i < n; ++i) d += sentence() + (pick(4) == 0 ? "\n" : " ");
  }

  void block(std::string& d) {
    switch (pick(12)) {
      case 0:
      case 1:
        d += std::string(static_cast<std::size_t>(1 + pick(4)), '#');
        if (pick(10) != 0) d += " Heading " + word();
        return;
      case 2:
        d += "Setext " + word() + "\n" + (pick(2) ? "===" : "---");
        return;
      case 3:
        for (int i = 0, n = 1 + pick(8); i < n; ++i)
          d += std::string(static_cast<std::size_t>(2 * pick(2)), ' ') + "- " + sentence() + "\n";
        return;
      case 4:
        d += "| a | b |\n|---|---|\n";
        for (int i = 0, n = pick(12); i < n; ++i) d += "| " + word() + " | " + sentence() + " |\n";
        return;
      case 5: {
        std::string fence = pick(2) ? "```" : "~~~";
        d += fence + (pick(2) ? "python\n" : "\n");
        for (int i = 0, n = pick(15); i < n; ++i)
          d += pick(5) == 0 ? "\n" : "x = f(" + word() + ")  # " + word() + "\n";
        if (pick(30) != 0) d += fence;  // now and then an unclosed fence runs to the end
        return;
      }
      case 6:
        d += "> " + sentence() + "\n> " + sentence();
        return;
      case 7:
        d += "---";
        return;
      case 8:
        d += "    indented code " + word() + "\n    more code";
        return;
      case 9:
        d += "1. " + sentence() + "\n2. " + sentence();
        return;
      default:
        paragraph(d);
        return;
    }
  }

  std::mt19937 rng_;
};

// Offsets in `text` where one of ICU's words of an unspaced run (Han, Kana, Thai, ...) begins or
// ends, and where every script run begins and ends: where a window may end under
// chunking.segmenter icu.
inline std::set<std::size_t> word_boundaries(std::string_view text) {
  std::set<std::size_t> at{0, text.size()};
  core::script_runs(text, [&](std::size_t rb, std::size_t re, bool unspaced) {
    at.insert(rb);
    at.insert(re);
    if (!unspaced) return;
    core::segment_run(text.substr(rb, re - rb), core::Segmenter::icu,
                      [&](std::size_t b, std::size_t e) {
                        at.insert(rb + b);
                        at.insert(rb + e);
                      });
  });
  return at;
}

// The spans of `tok` over `text` are as many as its count, ordered, non-empty, inside the text,
// never start or end inside a code point, hold no ASCII space, and cover every byte of ink
// (`all_ink`: every non-space byte; else only ASCII ones).
inline void check_spans(const Tokenizer& tok, const std::string& text, bool all_ink) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sp;
  tok.spans(text, sp);
  EXPECT_EQ(static_cast<int>(sp.size()), tok.count(text)) << text;
  std::vector<bool> in_token(text.size(), false);
  std::uint32_t last = 0;
  for (auto [b, e] : sp) {
    ASSERT_LT(b, e) << text;
    ASSERT_GE(b, last) << text;
    ASSERT_LE(e, text.size()) << text;
    ASSERT_NE(static_cast<unsigned char>(text[b]) & 0xC0, 0x80) << text;
    if (e < text.size()) {
      ASSERT_NE(static_cast<unsigned char>(text[e]) & 0xC0, 0x80) << text;
    }
    for (auto k = b; k < e; ++k) {
      ASSERT_FALSE(is_ascii_space(text[k])) << text;
      in_token[k] = true;
    }
    last = e;
  }
  for (std::size_t k = 0; k < text.size(); ++k) {
    const auto u = static_cast<unsigned char>(text[k]);
    if (!is_ascii_space(text[k]) && (all_ink || u < 0x80)) {
      EXPECT_TRUE(in_token[k]) << text << " byte " << k;
    }
  }
}

}  // namespace quarry::chunk::test
