// WordPiece (greedy longest-match-first, as Hugging Face tokenizers and BERT do it).
#include "embed/static/wordpiece.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "quarry/error.h"

namespace quarry::embed {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error(Code::corrupt_input,
              "tokenizer file " + path + " is not usable: " + what +
                  "; re-download or re-convert the model (e.g. run scripts/setup)",
              {{"path", path}});
}

bool flag(const nlohmann::json& j, const char* key, bool def) {
  auto it = j.find(key);
  return (it == j.end() || !it->is_boolean()) ? def : it->get<bool>();
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::from_json_text(std::string_view text,
                                                      const std::string& path) {
  // The vocabulary (hundreds of thousands of entries) goes straight into the hash map instead of
  // a JSON DOM: the callback takes model.vocab's members and drops them from the tree, which
  // cuts the load time of a large tokenizer.json by more than half.
  std::vector<std::pair<std::string, std::int64_t>> entries;
  std::string top_key, model_key, member;
  nlohmann::json::parser_callback_t cb = [&](int depth, nlohmann::json::parse_event_t ev,
                                             nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::key) {
      if (depth == 1) top_key = parsed.get<std::string>();
      if (depth == 2) model_key = parsed.get<std::string>();
      if (depth == 3) member = parsed.get<std::string>();
      return true;
    }
    if (ev == E::value && depth == 3 && top_key == "model" && model_key == "vocab") {
      entries.emplace_back(std::move(member),
                           parsed.is_number_unsigned() ? parsed.get<std::int64_t>() : -1);
      return false;
    }
    return true;
  };
  auto j = nlohmann::json::parse(text.begin(), text.end(), cb, false);
  if (j.is_discarded() || !j.is_object()) bad(path, "not valid JSON");
  auto mit = j.find("model");
  if (mit == j.end() || !mit->is_object()) bad(path, "no \"model\" object");
  const auto& m = *mit;
  std::string type = m.value("type", std::string("WordPiece"));
  if (type != "WordPiece")
    throw Error(Code::unsupported_format,
                "tokenizer " + path + " uses a '" + type +
                    "' model; the static provider reads WordPiece tokenizers only",
                {{"path", path}});
  if (!m.contains("vocab") || !m["vocab"].is_object() || entries.empty())
    bad(path, "model.vocab is missing or empty");

  WordPieceTokenizer t;
  t.vocab_.reserve(entries.size());
  std::int32_t max_id = -1;
  for (auto& [tok, id] : entries) {
    if (id < 0 || id > 0x7fffffff) bad(path, "vocab entry '" + tok + "' has no valid id");
    auto v = static_cast<std::int32_t>(id);
    t.vocab_.emplace(std::move(tok), v);
    max_id = std::max(max_id, v);
  }
  t.vocab_size_ = static_cast<std::size_t>(max_id) + 1;
  std::string unk = m.value("unk_token", std::string("[UNK]"));
  auto uit = t.vocab_.find(unk);
  if (uit == t.vocab_.end()) bad(path, "unk_token '" + unk + "' is not in the vocabulary");
  t.unk_id_ = uit->second;
  t.unk_token_ = unk;
  if (m.contains("continuing_subword_prefix") && m["continuing_subword_prefix"].is_string())
    t.prefix_ = m["continuing_subword_prefix"].get<std::string>();
  if (m.contains("max_input_chars_per_word") && m["max_input_chars_per_word"].is_number_unsigned())
    t.max_chars_ = m["max_input_chars_per_word"].get<std::size_t>();

  if (auto at = j.find("added_tokens"); at != j.end() && at->is_array())
    for (const auto& a : *at)
      if (a.is_object() && flag(a, "special", false) && a.contains("id") &&
          a["id"].is_number_unsigned())
        t.special_.insert(static_cast<std::int32_t>(a["id"].get<std::uint64_t>()));

  // A null normaliser means none; BertNormalizer's strip_accents null follows lowercase.
  auto nit = j.find("normalizer");
  if (nit == j.end() || nit->is_null()) {
    t.norm_ = {false, false, false, false};
  } else if (nit->is_object()) {
    const auto& n = *nit;
    t.norm_.clean_text = flag(n, "clean_text", true);
    t.norm_.handle_chinese_chars = flag(n, "handle_chinese_chars", true);
    t.norm_.lowercase = flag(n, "lowercase", true);
    auto sa = n.find("strip_accents");
    t.norm_.strip_accents =
        (sa == n.end() || sa->is_null()) ? t.norm_.lowercase : flag(n, "strip_accents", true);
  }
  return t;
}

WordPieceTokenizer WordPieceTokenizer::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw Error(Code::not_found, "tokenizer file " + path + " is missing: run scripts/setup",
                {{"path", path}});
  std::ostringstream ss;
  ss << f.rdbuf();
  return from_json_text(ss.str(), path);
}

// Splits one pre-token into vocabulary pieces; a word with any unmatched remainder (or longer
// than max_input_chars_per_word) becomes a single [UNK], as in BERT.
template <class F>
void WordPieceTokenizer::word_pieces(std::string_view word, std::string& buf, F&& out) const {
  if (utf8_length(word) > max_chars_) {
    out(unk_id_, std::string_view());
    return;
  }
  if (auto it = vocab_.find(word); it != vocab_.end()) {  // the common case: a whole word
    out(it->second, word);
    return;
  }
  std::size_t start = 0;
  std::vector<std::pair<std::int32_t, std::size_t>> pieces;  // id, end offset
  while (start < word.size()) {
    std::size_t end = word.size();
    std::int32_t found = -1;
    while (end > start) {
      std::string_view sub = word.substr(start, end - start);
      if (start > 0) {
        buf.assign(prefix_).append(sub);
        sub = buf;
      }
      if (auto it = vocab_.find(sub); it != vocab_.end()) {
        found = it->second;
        break;
      }
      do --end;  // step back one code point, never into the middle of one
      while (end > start && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
    }
    if (found < 0) {
      out(unk_id_, std::string_view());
      return;
    }
    pieces.emplace_back(found, end);
    start = end;
  }
  std::size_t prev = 0;
  for (auto [id, end] : pieces) {
    out(id, word.substr(prev, end - prev));
    prev = end;
  }
}

void WordPieceTokenizer::encode(std::string_view text, std::vector<std::int32_t>& ids) const {
  std::string scratch, buf;
  bert_pre_tokenize(text, norm_, scratch, [&](std::string_view w) {
    word_pieces(w, buf, [&](std::int32_t id, std::string_view) { ids.push_back(id); });
  });
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> out;
  std::string scratch, buf;
  bert_pre_tokenize(text, norm_, scratch, [&](std::string_view w) {
    bool first = true;
    word_pieces(w, buf, [&](std::int32_t id, std::string_view piece) {
      if (id == unk_id_)
        out.push_back(unk_token_);
      else
        out.push_back(first ? std::string(piece) : prefix_ + std::string(piece));
      first = false;
    });
  });
  return out;
}

std::size_t WordPieceTokenizer::count_tokens(std::string_view text) const {
  std::size_t n = 0;
  std::string scratch, buf;
  bert_pre_tokenize(text, norm_, scratch, [&](std::string_view w) {
    word_pieces(w, buf, [&](std::int32_t, std::string_view) { ++n; });
  });
  return n;
}

}  // namespace quarry::embed
