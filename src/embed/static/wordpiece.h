// The Hugging Face WordPiece tokenizer as BERT uses it (tokenizer.json: added tokens,
// "BertNormalizer", "BertPreTokenizer", model "WordPiece"), id for id: the Unicode rules come
// from ICU (bert_text.cpp), and tests/embed/tokenizer_parity_test.cpp checks the ids against
// Hugging Face's own implementation. No [CLS]/[SEP] are added here: static models pool over the
// words only, and the bert provider adds them itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace quarry::embed {

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
};

// BERT normaliser + pre-tokenizer in one pass: calls `emit` with each pre-token (UTF-8).
void bert_pre_tokenize(std::string_view text, const BertNormalizerOptions& opt,
                       std::string& scratch, const std::function<void(std::string_view)>& emit);

// As bert_pre_tokenize, also passing, for each byte of a pre-token, the byte range [begin, end)
// in `text` of the character it came from.
void bert_pre_tokenize_spans(
    std::string_view text, const BertNormalizerOptions& opt,
    const std::function<void(std::string_view, const std::pair<std::uint32_t, std::uint32_t>*)>&
        emit);

class WordPieceTokenizer {
 public:
  // Parses tokenizer.json text. Throws Error(corrupt_input) naming `path` when it is not a
  // WordPiece tokenizer.json, Error(unsupported_format) for another tokenizer model type.
  static WordPieceTokenizer from_json_text(std::string_view json_text, const std::string& path);
  static WordPieceTokenizer load(const std::string& path);

  // Appends the vocabulary ids of `text` to `ids` (unknown words become unk_id()).
  void encode(std::string_view text, std::vector<std::int32_t>& ids) const;
  // The token strings (for tests and diagnostics).
  std::vector<std::string> tokenize(std::string_view text) const;
  std::size_t count_tokens(std::string_view text) const;
  // The byte range in `text` of each token encode() gives, in order (core::Tokenizer::spans):
  // a piece covers the characters it came from, an added token its own bytes, [UNK] its word.
  // Pieces of one character ("ǅ" may be two) share it: the later ones are empty at its end.
  void spans(std::string_view text,
             std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const;

  std::int32_t unk_id() const { return unk_id_; }
  // The id of a vocabulary entry (e.g. "[CLS]"); -1 when absent.
  std::int32_t token_id(std::string_view token) const { return vocab_.find(token); }
  std::size_t vocab_size() const { return vocab_size_; }
  // True for [UNK] and every added token marked special ([CLS], [SEP], [PAD], [MASK], ...).
  bool is_special(std::int32_t id) const { return id == unk_id_ || special_.count(id) > 0; }
  const BertNormalizerOptions& normalizer() const { return norm_; }

 private:
  // token -> id in one open-addressing table over one byte arena: a 341k-word vocabulary is
  // built without 341k string allocations (and freed without 341k frees) on every cold start.
  class Vocab {
   public:
    void add(std::string_view token, std::int32_t id);  // after reserve(); a repeat keeps the first
    void reserve(std::size_t n, std::size_t bytes);
    std::int32_t find(std::string_view token) const;  // -1 when absent
    std::size_t size() const { return entries_.size(); }

   private:
    struct Entry {
      std::uint32_t offset, length;
      std::int32_t id;
    };
    std::string arena_;
    std::vector<Entry> entries_;
    std::vector<std::uint32_t> slots_;  // entry index + 1; 0 = empty
  };

  template <class F>
  void word_pieces(std::string_view word, std::string& buf, F&& out) const;
  template <class Plain, class Added>
  void segments(std::string_view text, Plain&& plain, Added&& added) const;

  Vocab vocab_;
  std::size_t vocab_size_ = 0;
  std::unordered_set<std::int32_t> special_;
  std::vector<std::pair<std::string, std::int32_t>> added_;  // matched in raw text, longest first
  std::int32_t unk_id_ = -1;
  std::string unk_token_ = "[UNK]";
  std::string prefix_ = "##";
  std::size_t max_chars_ = 100;
  BertNormalizerOptions norm_;
};

}  // namespace quarry::embed
