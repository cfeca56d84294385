// The token-counting port (SPEC §3): chunk budgets are counted in the tokens of the KB's
// embedding model when it has a tokenizer of its own (an embedding provider hands one out in
// ModelTokenizer, quarry/embedding_provider.h), else in a documented word-piece approximation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quarry {

class Tokenizer {
 public:
  using Spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

  virtual ~Tokenizer() = default;
  // Names the tokenizer (and its vocabulary): a chunking made with another one is another one.
  virtual std::string id() const = 0;
  // Byte spans [begin, end) of the tokens of `text`, in order and not overlapping; replaces the
  // contents of `out`. Windows are cut at these. Bytes outside every span are white space to the
  // tokenizer. A span may be empty where one character became several tokens.
  virtual void spans(std::string_view text, Spans& out) const = 0;
  // Number of tokens of `text`: the size of spans(); implementations may count faster.
  virtual int count(std::string_view text) const {
    Spans out;
    spans(text, out);
    return static_cast<int>(out.size());
  }
};

}  // namespace quarry
