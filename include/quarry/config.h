// Knowledge-base configuration (SPEC §1, §3). Parsed strictly from JSON by quarry::core:
// unknown keys and out-of-range values are `invalid_argument` errors that name the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quarry {

// The retrieval modes of SPEC §4, in one list. Every surface parses a mode's name with
// parse_mode() and names it with mode_name(), so they agree on the names and the errors.
enum class Mode {
  keyword,    // BM25F over chunks
  grep,       // RE2 over the Markdown files
  vector,     // k-nearest chunks of the query's embedding
  hybrid,     // keyword and vector fused
  automatic,  // "auto": hybrid where the KB has a working embedder, otherwise keyword
};
// The mode a search runs in when the request names none (every surface: docs/search.md).
inline constexpr Mode kDefaultMode = Mode::automatic;

const char* mode_name(Mode mode);  // "keyword", "grep", "vector", "hybrid", "auto"
std::optional<Mode> parse_mode(std::string_view name);
// parse_mode(), or Error(invalid_argument) naming the field `mode` and the known modes.
Mode mode_from_name(std::string_view name);
// Every mode, in the order above; and their names joined for messages ("keyword, grep, ...").
const std::vector<Mode>& all_modes();
std::string mode_names();

struct ChunkingConfig {
  std::string profile = "prose";  // none | prose | code
  std::optional<int> max_tokens;  // 16..8191, default 512; refused under `none`
  std::optional<int>
      overlap_tokens;  // <= max_tokens/2, default min(64, max/8); refused under `none`
  // icu | none. icu: text written without spaces (Han, Kana, Thai, Lao, Khmer, Myanmar) is cut
  // between ICU's dictionary words, and the approximate tokenizer counts Thai, Lao, Khmer and
  // Myanmar by those words (approx-wordpiece-v2). none: as before the setting existed (a config
  // without the key means none, so KBs made before it keep their chunking revision); a new KB
  // gets icu unless its config says otherwise (Engine::create_kb).
  std::string segmenter = "none";

  int effective_max_tokens() const { return max_tokens.value_or(512); }
  int effective_overlap_tokens() const {
    if (overlap_tokens) return *overlap_tokens;
    int m = effective_max_tokens();
    return m / 8 < 64 ? m / 8 : 64;
  }
};

// Subject keys (SPEC §1): with rule `exactly_one`, every document carries exactly one of `keys`
// in its metadata; every hit reports the subject it belongs to.
struct SubjectConfig {
  std::vector<std::string> keys;
  std::string rule = "exactly_one";
};

struct LimitsConfig {
  std::int64_t max_upload_bytes = 25LL * 1024 * 1024;
  int max_chunks_per_document = 2000;
  int max_chunks_per_call = 200000;
};

// The embedding provider of a KB (SPEC §5): "static:glove-100d", "hash:256",
// "openai:text-embedding-3-small"; "" = none (the KB serves grep and keyword only).
struct EmbedderConfig {
  std::string provider;
  std::string settings_json = "{}";  // provider-specific settings (model_dir, base_url, ...)
};

// The vector store of a KB (SPEC §6) and how embedding is split between Quarry and the store.
struct StoreConfig {
  std::string id = "embedded";
  std::string settings_json = "{}";
  std::string embedding_mode;  // platform | plugin | auto; "" = $QUARRY_EMBEDDING_MODE or auto
};

// Hybrid search defaults (SPEC §4); a request may override them.
struct HybridConfig {
  std::string fusion = "interpolation";  // interpolation | rrf
  // α of (1 - α)·keyword + α·vector: under `adaptive` weighting the most a query gives the vector
  // side, under `fixed` what every query gives it (measured: docs/benchmarks.md).
  double semantic_ratio = 0.3;
  std::string weighting = "adaptive";  // adaptive | fixed (interpolation only)
  int rrf_k = 60;
  double keyword_weight = 1.0;  // per-mode RRF weights
  double vector_weight = 1.0;
};

// How the keyword index cuts and folds text (docs/configuration.md). Both empty: a KB made
// before these settings, whose index keeps the tokenizer it was built with until one is set.
struct KeywordConfig {
  std::string segmenter = "icu";    // icu | bigram: words of scripts written without spaces
  std::string diacritics = "fold";  // fold | keep: "café" finds "cafe" (fold) or not (keep)
  bool legacy() const { return segmenter.empty(); }
};

struct KbConfig {
  std::string description;
  std::vector<Mode> modes{Mode::grep, Mode::keyword};  // the modes it serves
  ChunkingConfig chunking;
  SubjectConfig subjects;
  LimitsConfig limits;
  EmbedderConfig embedder;
  StoreConfig store;
  HybridConfig hybrid;
  KeywordConfig keyword;
  int revision = 0;  // the manual revision counter of §1
};

}  // namespace quarry
