// WordPiece (greedy longest-match-first, as Hugging Face tokenizers and BERT do it).
#include "embed/static/wordpiece.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/util.h"
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

void skip_ws(std::string_view t, std::size_t& i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
}

// Reads a JSON string at t[i] == '"' into `out` (escapes decoded); false when malformed.
bool read_string(std::string_view t, std::size_t& i, std::string* out) {
  if (i >= t.size() || t[i] != '"') return false;
  ++i;
  while (i < t.size()) {
    char c = t[i++];
    if (c == '"') return true;
    if (c != '\\') {
      if (out) out->push_back(c);
      continue;
    }
    if (i >= t.size()) return false;
    char e = t[i++];
    if (e == 'u') {
      auto hex4 = [&](std::uint32_t* v) {
        if (i + 4 > t.size()) return false;
        *v = 0;
        for (int k = 0; k < 4; ++k) {
          char h = t[i++];
          *v <<= 4;
          if (h >= '0' && h <= '9')
            *v |= static_cast<std::uint32_t>(h - '0');
          else if (h >= 'a' && h <= 'f')
            *v |= static_cast<std::uint32_t>(h - 'a' + 10);
          else if (h >= 'A' && h <= 'F')
            *v |= static_cast<std::uint32_t>(h - 'A' + 10);
          else
            return false;
        }
        return true;
      };
      std::uint32_t cp = 0;
      if (!hex4(&cp)) return false;
      if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < t.size() && t[i] == '\\' && t[i + 1] == 'u') {
        i += 2;
        std::uint32_t lo = 0;
        if (!hex4(&lo)) return false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      }
      if (out) core::append_utf8(*out, cp);
      continue;
    }
    const char* from = "\"\\/bfnrt";
    const char* to = "\"\\/\b\f\n\r\t";
    const char* at = std::strchr(from, e);
    if (!at || e == 0) return false;
    if (out) out->push_back(to[at - from]);
  }
  return false;
}

// Skips one JSON value at t[i]; false when malformed.
bool skip_value(std::string_view t, std::size_t& i) {
  skip_ws(t, i);
  if (i >= t.size()) return false;
  if (t[i] == '"') return read_string(t, i, nullptr);
  if (t[i] == '{' || t[i] == '[') {
    int depth = 0;
    while (i < t.size()) {
      char c = t[i];
      if (c == '"') {
        if (!read_string(t, i, nullptr)) return false;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      ++i;
      if (depth == 0) return true;
    }
    return false;
  }
  while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']') ++i;
  return true;
}

// [begin, end) of the object value of top-level "model" -> "vocab", or {0, 0}.
std::pair<std::size_t, std::size_t> vocab_span(std::string_view t) {
  std::size_t i = 0;
  std::string key;
  auto walk = [&](auto&& self, int depth, bool in_model) -> std::pair<std::size_t, std::size_t> {
    skip_ws(t, i);
    if (i >= t.size() || t[i] != '{') return {0, 0};
    ++i;
    while (true) {
      skip_ws(t, i);
      if (i < t.size() && t[i] == '}') return {0, 0};
      key.clear();
      if (!read_string(t, i, &key)) return {0, 0};
      skip_ws(t, i);
      if (i >= t.size() || t[i] != ':') return {0, 0};
      ++i;
      skip_ws(t, i);
      if (in_model && key == "vocab" && i < t.size() && t[i] == '{') {
        std::size_t b = i;
        if (!skip_value(t, i)) return {0, 0};
        return {b, i};
      }
      if (depth == 0 && key == "model") {
        auto r = self(self, 1, true);
        if (r.second) return r;
        return {0, 0};
      }
      if (!skip_value(t, i)) return {0, 0};
      skip_ws(t, i);
      if (i < t.size() && t[i] == ',') ++i;
    }
  };
  return walk(walk, 0, false);
}

// Parses {"token": id, ...}.
// A token read into `arena` at [offset, offset + length), with its id (-1 when not a number).
struct RawEntry {
  std::size_t offset, length;
  std::int64_t id;
};

bool parse_vocab(std::string_view t, std::string& arena, std::vector<RawEntry>& out) {
  std::size_t i = 0;
  skip_ws(t, i);
  if (i >= t.size() || t[i++] != '{') return false;
  while (true) {
    skip_ws(t, i);
    if (i < t.size() && t[i] == '}') return true;
    const std::size_t start = arena.size();
    if (!read_string(t, i, &arena)) return false;
    skip_ws(t, i);
    if (i >= t.size() || t[i++] != ':') return false;
    skip_ws(t, i);
    std::int64_t id = 0;
    bool any = false;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9' && id < (1LL << 40)) {
      id = id * 10 + (t[i++] - '0');
      any = true;
    }
    if (!any) id = -1;  // reported as "no valid id" by the caller
    if (!any && !skip_value(t, i)) return false;
    out.push_back({start, arena.size() - start, id});
    skip_ws(t, i);
    if (i < t.size() && t[i] == ',') {
      ++i;
      continue;
    }
    if (i < t.size() && t[i] == '}') return true;
    return false;
  }
}

}  // namespace

namespace {
std::uint64_t hash_token(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h ^ (h >> 29);
}
}  // namespace

void WordPieceTokenizer::Vocab::reserve(std::size_t n, std::size_t bytes) {
  arena_.reserve(bytes);
  entries_.reserve(n);
  std::size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  slots_.assign(cap, 0);
}

void WordPieceTokenizer::Vocab::add(std::string_view token, std::int32_t id) {
  if ((entries_.size() + 1) * 2 > slots_.size()) {  // keep the load factor under 1/2
    std::vector<Entry> old = std::move(entries_);
    std::string old_arena = std::move(arena_);
    reserve(std::max<std::size_t>(16, old.size() * 2 + 2), old_arena.size() + token.size());
    for (const auto& e : old) add(std::string_view(old_arena.data() + e.offset, e.length), e.id);
  }
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash_token(token) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == 0) {
      entries_.push_back({static_cast<std::uint32_t>(arena_.size()),
                          static_cast<std::uint32_t>(token.size()), id});
      arena_.append(token);
      slots_[i] = static_cast<std::uint32_t>(entries_.size());
      return;
    }
    const Entry& e = entries_[slots_[i] - 1];
    if (std::string_view(arena_.data() + e.offset, e.length) == token) return;  // first wins
  }
}

std::int32_t WordPieceTokenizer::Vocab::find(std::string_view token) const {
  if (slots_.empty()) return -1;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash_token(token) & mask;; i = (i + 1) & mask) {
    if (slots_[i] == 0) return -1;
    const Entry& e = entries_[slots_[i] - 1];
    if (e.length == token.size() && std::string_view(arena_.data() + e.offset, e.length) == token)
      return e.id;
  }
}

WordPieceTokenizer WordPieceTokenizer::from_json_text(std::string_view text,
                                                      const std::string& path) {
  // The vocabulary (hundreds of thousands of entries) is read by a small scanner straight
  // into the hash map, and only the rest of the file goes through a JSON DOM: for GloVe's
  // 341k-word tokenizer.json this took a cold `quarry search` from 1.1 s to a fraction of that.
  std::string arena;
  std::vector<RawEntry> entries;
  const auto span = vocab_span(text);
  std::string rest;
  if (span.second > span.first) {
    arena.reserve(span.second - span.first);
    if (!parse_vocab(text.substr(span.first, span.second - span.first), arena, entries))
      bad(path, "model.vocab is not an object of \"token\": id pairs");
    rest.reserve(text.size() - (span.second - span.first) + 2);
    rest.append(text.substr(0, span.first)).append("{}").append(text.substr(span.second));
  } else {
    rest.assign(text);
  }
  auto j = nlohmann::json::parse(rest, nullptr, false);
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
  t.vocab_.reserve(entries.size(), arena.size());
  std::int32_t max_id = -1;
  for (const auto& e : entries) {
    const std::string_view tok(arena.data() + e.offset, e.length);
    if (e.id < 0 || e.id > 0x7fffffff)
      bad(path, "vocab entry '" + std::string(tok) + "' has no valid id");
    auto v = static_cast<std::int32_t>(e.id);
    t.vocab_.add(tok, v);
    max_id = std::max(max_id, v);
  }
  t.vocab_size_ = static_cast<std::size_t>(max_id) + 1;
  std::string unk = m.value("unk_token", std::string("[UNK]"));
  t.unk_id_ = t.vocab_.find(unk);
  if (t.unk_id_ < 0) bad(path, "unk_token '" + unk + "' is not in the vocabulary");
  t.unk_token_ = unk;
  if (m.contains("continuing_subword_prefix") && m["continuing_subword_prefix"].is_string())
    t.prefix_ = m["continuing_subword_prefix"].get<std::string>();
  if (m.contains("max_input_chars_per_word") && m["max_input_chars_per_word"].is_number_unsigned())
    t.max_chars_ = m["max_input_chars_per_word"].get<std::size_t>();

  if (auto at = j.find("added_tokens"); at != j.end() && at->is_array())
    for (const auto& a : *at) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_unsigned()) continue;
      const auto id = static_cast<std::int32_t>(a["id"].get<std::uint64_t>());
      if (flag(a, "special", false)) t.special_.insert(id);
      // Added tokens matched in the raw text (normalized: false, as BERT's are) come out whole.
      if (a.contains("content") && a["content"].is_string() && !flag(a, "normalized", true) &&
          !a["content"].get<std::string>().empty())
        t.added_.emplace_back(a["content"].get<std::string>(), id);
    }
  // Longest first, so that one added token inside another never wins.
  std::sort(t.added_.begin(), t.added_.end(),
            [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });

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
  if (std::int32_t id = vocab_.find(word); id >= 0) {  // the common case: a whole word
    out(id, word);
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
      if (std::int32_t id = vocab_.find(sub); id >= 0) {
        found = id;
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

// Cuts `text` at the added tokens (as Hugging Face does before normalising): `plain` gets the
// text between them, `added` each one's id and content.
template <class Plain, class Added>
void WordPieceTokenizer::segments(std::string_view text, Plain&& plain, Added&& added) const {
  while (!text.empty()) {
    std::size_t at = std::string_view::npos;
    const std::pair<std::string, std::int32_t>* hit = nullptr;
    for (const auto& a : added_) {
      const auto p = text.find(a.first);
      if (p < at) {  // earliest; at the same place the longest (sorted first) stays
        at = p;
        hit = &a;
      }
    }
    if (!hit) break;
    if (at > 0) plain(text.substr(0, at));
    added(hit->second, text.substr(at, hit->first.size()));
    text.remove_prefix(at + hit->first.size());
  }
  if (!text.empty()) plain(text);
}

void WordPieceTokenizer::encode(std::string_view text, std::vector<std::int32_t>& ids) const {
  std::string scratch, buf;
  segments(
      text,
      [&](std::string_view part) {
        bert_pre_tokenize(part, norm_, scratch, [&](std::string_view w) {
          word_pieces(w, buf, [&](std::int32_t id, std::string_view) { ids.push_back(id); });
        });
      },
      [&](std::int32_t id, std::string_view) { ids.push_back(id); });
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> out;
  std::string scratch, buf;
  segments(
      text,
      [&](std::string_view part) {
        bert_pre_tokenize(part, norm_, scratch, [&](std::string_view w) {
          bool first = true;
          word_pieces(w, buf, [&](std::int32_t id, std::string_view piece) {
            if (id == unk_id_)
              out.push_back(unk_token_);
            else
              out.push_back(first ? std::string(piece) : prefix_ + std::string(piece));
            first = false;
          });
        });
      },
      [&](std::int32_t, std::string_view content) { out.emplace_back(content); });
  return out;
}

void WordPieceTokenizer::spans(std::string_view text,
                               std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) const {
  out.clear();
  std::string buf;
  std::uint32_t last = 0;
  auto push = [&](std::size_t b, std::size_t e) {
    const auto begin = std::max(last, static_cast<std::uint32_t>(b));
    last = std::max(begin, static_cast<std::uint32_t>(e));
    out.emplace_back(begin, last);
  };
  auto at = [&](std::string_view part) {
    return static_cast<std::size_t>(part.data() - text.data());
  };
  segments(
      text,
      [&](std::string_view part) {
        const std::size_t base = at(part);
        bert_pre_tokenize_spans(
            part, norm_,
            [&](std::string_view w, const std::pair<std::uint32_t, std::uint32_t>* src) {
              word_pieces(w, buf, [&](std::int32_t, std::string_view piece) {
                // [UNK] comes without a piece: it stands for the whole word.
                const std::size_t pb =
                    piece.empty() ? 0 : static_cast<std::size_t>(piece.data() - w.data());
                const std::size_t pe = piece.empty() ? w.size() : pb + piece.size();
                push(base + src[pb].first, base + src[pe - 1].second);
              });
            });
      },
      [&](std::int32_t, std::string_view token) { push(at(token), at(token) + token.size()); });
}

std::size_t WordPieceTokenizer::count_tokens(std::string_view text) const {
  std::size_t n = 0;
  std::string scratch, buf;
  segments(
      text,
      [&](std::string_view part) {
        bert_pre_tokenize(part, norm_, scratch, [&](std::string_view w) {
          word_pieces(w, buf, [&](std::int32_t, std::string_view) { ++n; });
        });
      },
      [&](std::int32_t, std::string_view) { ++n; });
  return n;
}

}  // namespace quarry::embed
