// Knowledge-base configuration (SPEC §1, §3). Parsed strictly from JSON by quarry::core:
// unknown keys and out-of-range values are `invalid_argument` errors that name the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace quarry {

struct ChunkingConfig {
  std::string profile = "prose";  // none | prose | code
  std::optional<int> max_tokens;  // 16..8191, default 512; refused under `none`
  std::optional<int>
      overlap_tokens;  // <= max_tokens/2, default min(64, max/8); refused under `none`

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
  double semantic_ratio = 0.1;  // α of (1 - α)·keyword + α·vector (measured: docs/benchmarks.md)
  int rrf_k = 60;
  double keyword_weight = 1.0;  // per-mode RRF weights
  double vector_weight = 1.0;
};

struct KbConfig {
  std::string description;
  std::vector<std::string> modes{"grep", "keyword"};  // subset of grep|keyword|vector|hybrid|auto
  ChunkingConfig chunking;
  SubjectConfig subjects;
  LimitsConfig limits;
  EmbedderConfig embedder;
  StoreConfig store;
  HybridConfig hybrid;
  int revision = 0;  // the manual revision counter of §1
};

}  // namespace quarry
