// Chunking (SPEC §3): Markdown -> chunks, with token budgets counted by a Tokenizer port.
#pragma once

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
  // Byte spans [begin, end) of the tokens of `text`, in order. Windows are cut at these.
  virtual void spans(std::string_view text, std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const = 0;
  virtual int count(std::string_view text) const;
};

std::unique_ptr<Tokenizer> make_approx_tokenizer();

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

// Throws Error(no_content) for empty/whitespace-only input, Error(too_many_chunks) past max_chunks.
std::vector<Chunk> chunk_markdown(std::string_view markdown, const ChunkOptions& opts,
                                  const Tokenizer& tokenizer);

}  // namespace quarry::chunk
