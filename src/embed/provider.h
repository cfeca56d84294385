// The embedding-provider port (SPEC §5): turns text into vectors. Implementations live in
// sub-folders (static/, hash/, openai/); the registry below builds them from a spec string and
// a settings object, and the selection chain picks one for a KB.
//
// "Unavailable right now" (a model file missing, an endpoint down) is a value returned by
// is_available(), never an exception: callers degrade to keyword search and say why.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tokenizer.h"

namespace quarry::embed {

using Vector = std::vector<float>;

// A model's own tokenizer, in which chunk budgets are counted (SPEC §3).
struct ModelTokenizer {
  std::shared_ptr<const core::Tokenizer> tokenizer;  // null: none (the chunker approximates)
  int max_tokens = 0;  // text tokens one input holds: the model's limit less what it adds
};

// The chunking revision's part that names a model tokenizer and its limit (core::config_revision):
// "" for none, so that KBs chunked by the approximation keep their revisions.
inline std::string chunking_key(const ModelTokenizer& t) {
  return t.tokenizer ? t.tokenizer->id() + "/" + std::to_string(t.max_tokens) : "";
}

struct Availability {
  bool ok = true;
  std::string reason;  // when !ok: what is wrong and what to do, e.g. "model file ... missing"
};

// Implementations are thread-safe: the indexer's workers and the pump call one provider from
// several threads at once.
class EmbeddingProvider {
 public:
  virtual ~EmbeddingProvider() = default;

  virtual std::string id() const = 0;     // the plugin id: "static", "hash", "openai"
  virtual std::string model() const = 0;  // e.g. "glove-100d", "text-embedding-3-small"
  virtual int dimensions() const = 0;
  virtual int max_input_tokens() const = 0;
  // Tokens `text` costs this model (its own tokenizer, or an estimate for remote models).
  virtual std::size_t count_tokens(std::string_view text) const = 0;

  // Everything that determines the vectors this provider makes (provider, model, dimensions,
  // normalisation, pooling, tokenizer...), as a stable string: part of the KB revision (§1).
  // Settings that do not change vectors (keys, timeouts, rate limits) must not appear here.
  virtual std::string identity() const = 0;

  // The tokenizer chunks are cut with for this model, when it has one of its own and can load it
  // now (static models pool words without a length limit, remote models keep theirs private:
  // they return none and the chunker uses its approximation).
  virtual ModelTokenizer model_tokenizer() { return {}; }

  virtual bool is_configured() const { return true; }
  virtual Availability is_available() { return {}; }

  // One vector per text, L2-normalised, dimensions() long. Throws quarry::Error (e.g.
  // engine_unavailable, rate_limited, invalid_argument) when the batch cannot be embedded.
  virtual std::vector<Vector> embed_documents(const std::vector<std::string>& texts) = 0;
  virtual Vector embed_query(const std::string& text) = 0;
};

// What a KB (or the operator) asks for: "static:glove-100d", "hash", "hash:512",
// "openai:text-embedding-3-small". The part after ':' is the model; `settings` carries the
// provider-specific options of the KB config (model_dir, base_url, dimensions, ...).
struct ProviderSpec {
  std::string id;
  std::string model;
  nlohmann::json settings = nlohmann::json::object();

  static ProviderSpec parse(const std::string& spec,
                            nlohmann::json settings = nlohmann::json::object());
  std::string to_string() const { return model.empty() ? id : id + ":" + model; }
};

// Where providers find their files and secrets.
struct ProviderContext {
  std::string data_dir;    // models under <data_dir>/models/<name>/ unless settings say otherwise
  std::string models_dir;  // extra search folder for named models (default: QUARRY_MODELS_DIR)
  // Looks up a secret by name (the secret store, then the environment); "" when unknown.
  std::function<std::string(const std::string&)> secret;
};

using ProviderFactory =
    std::function<std::unique_ptr<EmbeddingProvider>(const ProviderSpec&, const ProviderContext&)>;

class ProviderRegistry {
 public:
  // The registry with every built-in provider (static, hash, openai, bert).
  static ProviderRegistry& builtin();

  // Throws invalid_argument for an empty id or a duplicate.
  void add(const std::string& id, ProviderFactory factory);
  bool has(const std::string& id) const { return factories_.count(id) > 0; }
  std::vector<std::string> ids() const;

  // Builds a provider; throws invalid_argument (unknown id, bad settings) naming the field.
  // A provider whose files/endpoint are missing is still built: its is_available() says so.
  // Validates the result: non-empty id, dimensions > 0.
  std::unique_ptr<EmbeddingProvider> create(const ProviderSpec& spec,
                                            const ProviderContext& ctx) const;

 private:
  std::map<std::string, ProviderFactory> factories_;
};

// The selection chain of SPEC §5/§6: operator pin (QUARRY_EMBEDDING_PROVIDER: a hard pin,
// missing or unavailable is an error) -> the KB's setting -> the server default -> none.
struct Selection {
  std::unique_ptr<EmbeddingProvider> provider;  // null: the KB has no embedder
  std::string source;                           // "pin" | "kb" | "default" | "none"
  std::string reason;                           // when null or unavailable: why
};
Selection select_provider(const ProviderRegistry& reg, const std::string& kb_setting,
                          const nlohmann::json& kb_settings, const std::string& server_default,
                          const ProviderContext& ctx);

// Throws Error(dimension_mismatch) naming both plugin ids and both dimensions.
void check_dimensions(const std::string& provider_id, int provider_dims,
                      const std::string& store_id, int store_dims);

// Built-in factories (one per adapter folder).
std::unique_ptr<EmbeddingProvider> make_hash_provider(const ProviderSpec&, const ProviderContext&);
std::unique_ptr<EmbeddingProvider> make_static_provider(const ProviderSpec&,
                                                        const ProviderContext&);
std::unique_ptr<EmbeddingProvider> make_openai_provider(const ProviderSpec&,
                                                        const ProviderContext&);
std::unique_ptr<EmbeddingProvider> make_bert_provider(const ProviderSpec&, const ProviderContext&);
// The token ids the bert provider feeds its model for `text` embedded as a document or a query
// (that side's prefix, [CLS] ... [SEP], truncated); empty for another provider.
std::vector<std::int32_t> bert_token_ids(EmbeddingProvider& p, const std::string& text,
                                         bool query = false);

// L2-normalises in place (a zero vector stays zero).
void l2_normalize(Vector& v);

}  // namespace quarry::embed
