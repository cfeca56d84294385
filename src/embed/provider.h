// The embedding-provider port (quarry/embedding_provider.h, SPEC §5) under its internal names,
// with what only the library uses: the registry that builds providers from a spec string and a
// settings object, the selection chain that picks one for a KB, and the built-in factories
// (one per sub-folder: static/, bert/, hash/, openai/).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings_json.h"
#include "core/tokenizer.h"
#include "quarry/embedding_provider.h"
#include "quarry/error.h"
#include "quarry/plugin.h"

namespace quarry::embed {

using Vector = std::vector<float>;
using quarry::EmbeddingProvider;
using quarry::ModelTokenizer;
using quarry::ProviderContext;
using quarry::ProviderFactory;
using quarry::ProviderSpec;
using Availability = quarry::ProviderAvailability;

// The chunking revision's part that names a model tokenizer and its limit (core::config_revision):
// "" for none, so that KBs chunked by the approximation keep their revisions.
inline std::string chunking_key(const ModelTokenizer& t) {
  return t.tokenizer ? t.tokenizer->id() + "/" + std::to_string(t.max_tokens) : "";
}

// ProviderSpec::parse with the settings as JSON (a KB config's `embedding.settings`): null
// counts as {}, anything but an object is refused (invalid_argument).
ProviderSpec parse_spec(const std::string& spec,
                        const nlohmann::json& settings = nlohmann::json::object());

// A provider's settings as the JSON object the built-ins read.
inline const nlohmann::json& settings_json(const ProviderSpec& spec) {
  return core::settings_json(spec.settings);
}

// Thread-safe: an application may register while another thread builds a provider.
class ProviderRegistry {
 public:
  // The process-wide registry: the built-ins (static, hash, openai, bert), registered through
  // quarry::register_provider() on first use, and every provider an application registered.
  static ProviderRegistry& builtin();

  // Throws invalid_argument for an empty id, a missing factory or a duplicate.
  void add(const std::string& id, ProviderFactory factory,
           std::optional<PluginSchema> schema = std::nullopt);
  bool has(const std::string& id) const;
  std::vector<std::string> ids() const;
  // Every provider with its schema (when it registered one), sorted by id.
  std::vector<RegisteredPlugin> described() const;

  // Builds a provider; throws invalid_argument (unknown id, bad settings) naming the field.
  // A provider whose files/endpoint are missing is still built: its is_available() says so.
  // Validates the result: non-empty id, dimensions > 0.
  std::unique_ptr<EmbeddingProvider> create(const ProviderSpec& spec,
                                            const ProviderContext& ctx) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, ProviderFactory> factories_;
  std::map<std::string, std::optional<PluginSchema>> schemas_;
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

// The configuration-time check of the endpoint a provider spec names (SPEC §10): for the
// openai provider, the SSRF guard's verdict on its base_url without DNS, as
// Error(blocked_address) naming the address and the setting that allows private ranges, under
// `settings_path` (where the caller's surface keeps the provider's settings: "embedder.settings"
// in a KB config, "settings" for `quarry embed --settings`); nullopt when nothing is refused or
// the provider has no endpoint. Invalid settings are left to the provider's factory.
std::optional<Error> endpoint_refusal(const ProviderSpec& spec, const std::string& settings_path);

// Throws Error(dimension_mismatch) naming both plugin ids and both dimensions.
void check_dimensions(const std::string& provider_id, int provider_dims,
                      const std::string& store_id, int store_dims);

// Built-in factories (one per adapter folder).
// The built-ins' descriptions (quarry::PluginSchema), each beside the code that reads its
// settings: every setting listed is one that provider reads.
PluginSchema static_provider_schema();
PluginSchema hash_provider_schema();
PluginSchema openai_provider_schema();
PluginSchema bert_provider_schema();

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
