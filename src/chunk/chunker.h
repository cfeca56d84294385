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

namespace quarry::chunk {

// Token counting port. Model tokenizers (WordPiece from tokenizer.json, ...) plug in later; the
// default is a documented word-piece approximation (docs/chunking.md).
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::string id() const = 0;
  // Byte spans [begin, end) of the tokens of `text`, in order; replaces the contents of `out`.
  // Windows are cut at these. Bytes outside every span are white space to the tokenizer.
  virtual void spans(std::string_view text,
                     std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const = 0;
  // Number of tokens of `text`; the default lists spans(), implementations may count faster.
  virtual int count(std::string_view text) const;
};

std::unique_ptr<Tokenizer> make_approx_tokenizer();

// Budget bounds of SPEC §3 (max_tokens 16..8191; overlap_tokens 0..max_tokens/2).
inline constexpr int kMinMaxTokens = 16;
inline constexpr int kMaxMaxTokens = 8191;

struct ChunkOptions {
  std::string profile = "prose";  // none | prose | code
  int max_tokens = 512;
  int overlap_tokens = 64;
  int max_chunks = 2000;  // more -> Error(too_many_chunks)
};

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
