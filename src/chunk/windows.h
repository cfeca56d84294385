// Cutting one unit of text (a Markdown section, a source file) into chunks within a token budget.
// Internal to src/chunk/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "chunk/chunker.h"
#include "chunk/outline.h"

namespace quarry::chunk {

// A chunk before it gets its id and text: bytes [begin, end) of the input.
struct PlannedChunk {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  int unit = 0;    // which unit (section) it was cut from
  int tokens = 0;  // tokenizer.count() of its text
};

struct WindowSettings {
  int max_tokens = 512;
  int overlap_tokens = 64;
  std::size_t max_chunks = 2000;
  // Prose: sentence ends are good cuts, verbatim regions (code, tables) are kept whole when they
  // fit. Code: every line break is a good cut.
  bool prose = true;
  // Text without spaces (Han, Kana, Thai, ...): a cut between two of ICU's words counts as a cut
  // at white space (ChunkOptions::words).
  bool words = false;
};

// Narrows [begin, end) past white space at both ends: ASCII white space and the Unicode spaces
// the approximate tokenizer skips (NBSP, U+2000..U+200B, U+3000, BOM, ...).
void trim_blank(std::string_view text, std::uint32_t& begin, std::uint32_t& end);

class WindowPlanner {
 public:
  // `marks` and `verbatim` are sorted and index into `text`; all references must outlive this.
  WindowPlanner(std::string_view text, const Tokenizer& tokenizer, const WindowSettings& settings,
                const std::vector<Mark>& marks, const std::vector<ByteRange>& verbatim);

  // Appends to `out` the chunks of text[begin, end): one chunk (trimmed of white space) when it
  // fits in max_tokens, else overlapping windows cut at the best boundaries. Returns how many.
  // Throws Error(too_many_chunks) as soon as `out` holds more than max_chunks.
  int plan(std::uint32_t begin, std::uint32_t end, int unit, std::vector<PlannedChunk>& out);

 private:
  int plan_windows(std::uint32_t begin, std::uint32_t end, int unit, int whole,
                   std::vector<PlannedChunk>& out);
  void compute_levels();
  void compute_word_starts(std::uint32_t begin, std::uint32_t end);
  bool ends_sentence(std::size_t i) const;
  std::size_t cut(std::size_t s, std::size_t prev_end, int& tokens) const;
  std::size_t choose(std::size_t s, std::size_t e_max, std::size_t prev_end) const;
  std::size_t keep_verbatim_whole(std::size_t s, std::size_t c, std::size_t prev_end) const;
  std::size_t next_start(std::size_t s, std::size_t c) const;
  std::size_t fit_verbatim_after(std::size_t p, std::size_t c) const;
  std::size_t token_at_or_after(std::uint32_t offset) const;
  int count(std::size_t s, std::size_t c) const;
  void push(std::vector<PlannedChunk>& out, PlannedChunk chunk) const;

  std::string_view text_;
  const Tokenizer& tokenizer_;
  WindowSettings settings_;
  const std::vector<Mark>& marks_;
  const std::vector<ByteRange>& verbatim_;
  // The unit being planned: absolute token spans, and levels_[i] = how good a cut before token i.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> spans_;
  std::vector<std::uint8_t> levels_;
  // With settings_.words: the sorted offsets where a word of an unspaced run begins or a run ends.
  std::vector<std::uint32_t> word_starts_;
};

}  // namespace quarry::chunk
