// The embedding-provider port (SPEC §5): turns text into vectors. The built-ins (static, bert,
// hash, openai) implement it, and so can an application's own provider, registered with
// quarry::register_provider() (quarry/plugin.h, docs/plugins.md).
//
// "Unavailable right now" (a model file missing, an endpoint down) is a value returned by
// is_available(), never an exception: callers degrade to keyword search and say why.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quarry/error.h"
#include "quarry/settings.h"
#include "quarry/tokenizer.h"

namespace quarry {

// A model's own tokenizer, in which chunk budgets are counted (SPEC §3).
struct ModelTokenizer {
  std::shared_ptr<const Tokenizer> tokenizer;  // null: none (the chunker approximates)
  int max_tokens = 0;  // text tokens one input holds: the model's limit less what it adds
};

struct ProviderAvailability {
  bool ok = true;
  std::string reason;  // when !ok: what is wrong and what to do, e.g. "model file ... missing"
  // when !ok: the code a caller that must fail reports (`quarry embed`): a missing model is
  // engine_unavailable, a missing or undecryptable API key unauthorized, an exposed secret key
  // file forbidden.
  Code code = Code::engine_unavailable;
};

// Implementations are thread-safe: the indexer's workers and the pump call one provider from
// several threads at once.
class EmbeddingProvider {
 public:
  virtual ~EmbeddingProvider() = default;

  virtual std::string id() const = 0;     // the plugin id: "static", "hash", "openai"
  virtual std::string model() const = 0;  // e.g. "glove-100d", "text-embedding-3-small"
  virtual int dimensions() const = 0;     // > 0 (the registry refuses a provider without)
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
  virtual ProviderAvailability is_available() { return {}; }

  // One vector per text, L2-normalised, dimensions() long. Throws quarry::Error (e.g.
  // engine_unavailable, rate_limited, invalid_argument) when the batch cannot be embedded.
  virtual std::vector<std::vector<float>> embed_documents(
      const std::vector<std::string>& texts) = 0;
  virtual std::vector<float> embed_query(const std::string& text) = 0;
  // The share (0..1) of the query's tokens this model has a vector for; hybrid search gives a
  // query the model cannot read less vector weight (docs/search.md). nullopt: it cannot tell
  // (remote models, subword models that read every word).
  virtual std::optional<double> query_coverage(const std::string& text) {
    (void)text;
    return std::nullopt;
  }
};

// What a KB (or the operator) asks for: "static:glove-100d", "hash", "hash:512",
// "openai:text-embedding-3-small". The part after ':' is the model; `settings` carries the
// provider-specific options of the KB config (`embedding.settings`: model_dir, base_url, ...).
struct ProviderSpec {
  std::string id;
  std::string model;
  Settings settings;

  // Splits "id" or "id:model"; throws quarry::Error(invalid_argument) for an empty id or model.
  static ProviderSpec parse(const std::string& spec, Settings settings = {});
  std::string to_string() const { return model.empty() ? id : id + ":" + model; }
};

// Where providers find their files and secrets.
struct ProviderContext {
  std::string data_dir;    // models under <data_dir>/models/<name>/ unless settings say otherwise
  std::string models_dir;  // extra search folder for named models (default: QUARRY_MODELS_DIR)
  // Looks up a secret by name (the secret store, then the environment); "" when unknown.
  std::function<std::string(const std::string&)> secret;
};

// Builds a provider for a spec. Throws quarry::Error(invalid_argument) naming the setting for
// bad settings; a provider whose files or endpoint are missing is still built (its
// is_available() says why).
using ProviderFactory =
    std::function<std::unique_ptr<EmbeddingProvider>(const ProviderSpec&, const ProviderContext&)>;

}  // namespace quarry
