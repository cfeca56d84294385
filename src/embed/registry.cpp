// The provider registry, the selection chain (SPEC §5/§6), the dimension check and the small
// helpers every provider shares (spec parsing, L2 normalisation).
#include <cmath>
#include <cstdlib>

#include "core/plugin_version.h"
#include "embed/provider.h"
#include "quarry/error.h"
#include "quarry/plugin.h"

namespace quarry::embed {

namespace {

// The settings object a KB config gives, as the public view: null counts as {}.
Settings spec_settings(const nlohmann::json& settings) {
  if (!settings.is_null() && !settings.is_object())
    throw Error(Code::invalid_argument, "embedding settings must be a JSON object",
                {{"field", "embedding.settings"}});
  return core::settings_from_json(settings);
}

ProviderRegistry& registry() {
  static ProviderRegistry* reg = new ProviderRegistry();  // never destroyed: see builtin()
  return *reg;
}

// The built-ins register through the public call, like any application's provider; the flag
// lets those calls through while builtin() is still filling the registry on this thread.
thread_local bool registering_builtins = false;

void register_builtins() {
  registering_builtins = true;
  struct Reset {
    ~Reset() { registering_builtins = false; }
  } reset;
  register_provider("static", make_static_provider, static_provider_schema());
  register_provider("hash", make_hash_provider, hash_provider_schema());
  register_provider("openai", make_openai_provider, openai_provider_schema());
  register_provider("bert", make_bert_provider, bert_provider_schema());
}

}  // namespace

ProviderSpec parse_spec(const std::string& spec, const nlohmann::json& settings) {
  ProviderSpec out = ProviderSpec::parse(spec);  // the spec's errors first, as before
  out.settings = spec_settings(settings);
  return out;
}

ProviderRegistry& ProviderRegistry::builtin() {
  // Filled once, on first use (leaked on purpose: providers may outlive static destruction).
  static std::once_flag once;
  if (!registering_builtins) std::call_once(once, register_builtins);
  return registry();
}

void ProviderRegistry::add(const std::string& id, ProviderFactory factory,
                           std::optional<PluginSchema> schema) {
  if (id.empty())
    throw Error(Code::invalid_argument, "an embedding provider needs a non-empty id",
                {{"field", "id"}});
  if (!factory)
    throw Error(Code::invalid_argument, "embedding provider '" + id + "' has no factory",
                {{"field", "factory"}, {"provider", id}});
  std::lock_guard lock(mu_);
  if (factories_.count(id))
    throw Error(Code::invalid_argument,
                "embedding provider '" + id + "' is already registered: pick another id",
                {{"field", "id"}, {"provider", id}});
  factories_.emplace(id, std::move(factory));
  schemas_[id] = std::move(schema);
}

std::vector<RegisteredPlugin> ProviderRegistry::described() const {
  std::lock_guard lock(mu_);
  return core::described_plugins(factories_, schemas_);
}

bool ProviderRegistry::has(const std::string& id) const {
  std::lock_guard lock(mu_);
  return factories_.count(id) > 0;
}

std::vector<std::string> ProviderRegistry::ids() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, f] : factories_) out.push_back(id);
  return out;
}

namespace {
std::string join_ids(const std::vector<std::string>& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ", ") + id;
  return s;
}
}  // namespace

std::unique_ptr<EmbeddingProvider> ProviderRegistry::create(const ProviderSpec& spec,
                                                            const ProviderContext& ctx) const {
  ProviderFactory factory;
  {
    std::lock_guard lock(mu_);
    if (auto it = factories_.find(spec.id); it != factories_.end()) factory = it->second;
  }
  if (!factory)
    throw Error(Code::invalid_argument,
                "unknown embedding provider '" + spec.id + "': use one of " + join_ids(ids()),
                {{"field", "embedder.provider"}, {"provider", spec.id}});
  auto p = factory(spec, ctx);
  if (!p)
    throw Error(Code::internal, "embedding provider '" + spec.id + "' factory returned nothing",
                {{"provider", spec.id}});
  if (p->id().empty())
    throw Error(Code::invalid_argument,
                "embedding provider registered as '" + spec.id + "' reports an empty id",
                {{"provider", spec.id}});
  if (p->dimensions() <= 0)
    throw Error(Code::invalid_argument,
                "embedding provider '" + spec.id + "' reports " + std::to_string(p->dimensions()) +
                    " dimensions; it must be positive (set settings.dimensions)",
                {{"provider", spec.id}, {"field", "dimensions"}});
  return p;
}

namespace {

// The settings that belong to `spec_text`: the KB's settings only apply to the KB's own provider.
nlohmann::json settings_for(const std::string& spec_text, const std::string& kb_setting,
                            const nlohmann::json& kb_settings) {
  auto id_of = [](const std::string& s) { return s.substr(0, s.find(':')); };
  if (!kb_setting.empty() && id_of(spec_text) == id_of(kb_setting) && kb_settings.is_object())
    return kb_settings;
  return nlohmann::json::object();
}

Selection build(const ProviderRegistry& reg, const std::string& spec_text,
                const nlohmann::json& settings, const ProviderContext& ctx, const char* source) {
  Selection sel;
  sel.source = source;
  sel.provider = reg.create(parse_spec(spec_text, settings), ctx);
  auto av = sel.provider->is_available();
  if (!av.ok) sel.reason = av.reason;
  return sel;
}

}  // namespace

Selection select_provider(const ProviderRegistry& reg, const std::string& kb_setting,
                          const nlohmann::json& kb_settings, const std::string& server_default,
                          const ProviderContext& ctx) {
  // The operator pin is hard: if it cannot be honoured we refuse rather than silently fall back
  // to another model, which would mix vector spaces behind the operator's back.
  if (const char* pin = std::getenv("QUARRY_EMBEDDING_PROVIDER"); pin && *pin) {
    std::string spec = pin;
    auto id = spec.substr(0, spec.find(':'));
    if (!reg.has(id))
      throw Error(Code::invalid_argument,
                  "QUARRY_EMBEDDING_PROVIDER names unknown provider '" + id + "': use one of " +
                      join_ids(reg.ids()) + " or unset it",
                  {{"field", "QUARRY_EMBEDDING_PROVIDER"}, {"provider", id}});
    auto sel = build(reg, spec, settings_for(spec, kb_setting, kb_settings), ctx, "pin");
    if (!sel.reason.empty())
      throw Error(Code::engine_unavailable,
                  "the pinned embedding provider '" + spec +
                      "' (QUARRY_EMBEDDING_PROVIDER) is "
                      "unavailable: " +
                      sel.reason + "; fix it or unset QUARRY_EMBEDDING_PROVIDER",
                  {{"provider", id}, {"source", "pin"}});
    return sel;
  }
  if (kb_setting == "none") {
    Selection sel;
    sel.source = "none";
    sel.reason = "the knowledge base has embeddings turned off (embedding provider 'none')";
    return sel;
  }
  if (!kb_setting.empty()) return build(reg, kb_setting, kb_settings, ctx, "kb");
  if (!server_default.empty())
    return build(reg, server_default, nlohmann::json::object(), ctx, "default");
  Selection sel;
  sel.source = "none";
  sel.reason =
      "no embedding provider is configured: set the knowledge base's embedding provider "
      "(e.g. 'static:glove-100d' or 'hash') or a server default";
  return sel;
}

void check_dimensions(const std::string& provider_id, int provider_dims,
                      const std::string& store_id, int store_dims) {
  if (provider_dims == store_dims) return;
  throw Error(Code::dimension_mismatch,
              "embedding provider '" + provider_id + "' makes " + std::to_string(provider_dims) +
                  "-dimensional vectors but vector store '" + store_id + "' holds " +
                  std::to_string(store_dims) + "-dimensional ones: pick a provider/model with " +
                  std::to_string(store_dims) + " dimensions or a new store collection for " +
                  std::to_string(provider_dims),
              {{"provider", provider_id},
               {"provider_dimensions", std::to_string(provider_dims)},
               {"store", store_id},
               {"store_dimensions", std::to_string(store_dims)}});
}

void l2_normalize(Vector& v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  if (sum <= 0 || !std::isfinite(sum)) return;
  auto inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : v) x *= inv;
}

}  // namespace quarry::embed

// The public registration calls (quarry/plugin.h) and ProviderSpec::parse.
namespace quarry {

ProviderSpec ProviderSpec::parse(const std::string& spec, Settings settings) {
  ProviderSpec out;
  auto colon = spec.find(':');
  out.id = spec.substr(0, colon);
  if (colon != std::string::npos) out.model = spec.substr(colon + 1);
  if (out.id.empty())
    throw Error(
        Code::invalid_argument,
        "embedding provider spec '" + spec +
            "' has no provider id: write it as 'id' or 'id:model', e.g. 'static:glove-100d'",
        {{"field", "embedder.provider"}});
  if (colon != std::string::npos && out.model.empty())
    throw Error(Code::invalid_argument,
                "embedding provider spec '" + spec +
                    "' ends with ':': name a model after it or drop "
                    "the ':'",
                {{"field", "embedder.provider"}});
  out.settings = std::move(settings);
  return out;
}

void register_provider(const std::string& id, ProviderFactory factory, int api_version) {
  core::check_plugin_api_version("embedding provider", "provider", id, api_version);
  embed::ProviderRegistry::builtin().add(id, std::move(factory));
}

void register_provider(const std::string& id, ProviderFactory factory, PluginSchema schema,
                       int api_version) {
  core::check_plugin_api_version("embedding provider", "provider", id, api_version);
  embed::ProviderRegistry::builtin().add(id, std::move(factory), std::move(schema));
}

std::vector<std::string> registered_providers() {
  return embed::ProviderRegistry::builtin().ids();
}

std::vector<RegisteredPlugin> described_providers() {
  return embed::ProviderRegistry::builtin().described();
}

}  // namespace quarry
