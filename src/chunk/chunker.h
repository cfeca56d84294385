// Chunking (SPEC §3): Markdown -> chunks, with token budgets counted by a Tokenizer port.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tokenizer.h"

namespace quarry::chunk {

// Token counting port (core/tokenizer.h). The default is a documented word-piece approximation
// (docs/chunking.md); a KB whose embedding model has its own tokenizer counts with that one.
using Tokenizer = core::Tokenizer;

// `words`: version 2, for KBs whose chunking.segmenter is icu (Thai, Lao, Khmer and Myanmar runs
// counted by ICU's words); else version 1, as every KB made before that setting counts.
std::unique_ptr<Tokenizer> make_approx_tokenizer(bool words = false);

// Budget bounds of SPEC §3 (max_tokens 16..8191; overlap_tokens 0..max_tokens/2).
inline constexpr int kMinMaxTokens = 16;
inline constexpr int kMaxMaxTokens = 8191;

struct ChunkOptions {
  std::string profile = "prose";  // none | prose | code
  int max_tokens = 512;
  int overlap_tokens = 64;
  int max_chunks = 2000;  // more -> Error(too_many_chunks)
  // chunking.segmenter icu: inside text written without spaces (Han, Kana, Thai, ...) a window
  // ends between two of ICU's dictionary words, never inside one; false (`none`, KBs made before
  // the setting): between any two tokens.
  bool words = false;
};

// `o` with its budgets capped so that every chunk fits the embedding model's input
// (`model_max_tokens` text tokens; 0 or less: no limit): max_tokens at most that, never under
// kMinMaxTokens, and overlap_tokens at most half of max_tokens.
ChunkOptions within_model_limit(ChunkOptions o, int model_max_tokens);

struct Chunk {
  int index = 0;
  std::string chunk_id;                     // UUID minted per chunking pass
  std::optional<std::string> parent_chunk;  // set on windows of an oversize section
  std::vector<std::string> heading_path;    // breadcrumbs, outermost first
  std::size_t offset = 0;                   // byte offset into the Markdown given to chunk()
  std::size_t length = 0;                   // text == markdown.substr(offset, length)
  int token_count = 0;
  std::string text;
};

// Throws Error(invalid_argument, details {"field"}) for an unknown profile or, under prose and
// code, budgets out of bounds. Under `none` the budgets are ignored.
void validate_chunk_options(const ChunkOptions& opts);

// Throws Error(no_content) for empty/whitespace-only input, Error(too_many_chunks) past max_chunks.
std::vector<Chunk> chunk_markdown(std::string_view markdown, const ChunkOptions& opts,
                                  const Tokenizer& tokenizer);

}  // namespace quarry::chunk
