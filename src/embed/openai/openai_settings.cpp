// Settings of the openai provider: strict (an unknown or mistyped key is an error naming it, so
// a typo such as "dimension" never silently falls back to a default).
#include <algorithm>
#include <cstdint>
#include <map>

#include "core/plugin_version.h"
#include "core/util.h"
#include "embed/openai/openai_provider.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw Error(Code::invalid_argument, "openai provider: settings." + key + " " + what,
              {{"field", "settings." + key}, {"provider", "openai"}});
}

std::string get_string(const json& v, const std::string& key) {
  if (!v.is_string() || v.get<std::string>().empty()) bad(key, "must be a non-empty string");
  return v.get<std::string>();
}

std::int64_t get_int(const json& v, const std::string& key, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) bad(key, "must be an integer");
  auto n = v.get<std::int64_t>();
  if (n < lo || n > hi)
    bad(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return n;
}

// Models whose native dimension is public and stable, so `dimensions` may be left out.
const std::map<std::string, int>& known_models() {
  static const std::map<std::string, int> known = {
      {"text-embedding-3-small", 1536}, {"text-embedding-3-large", 3072},
      {"text-embedding-ada-002", 1536}, {"nomic-embed-text", 768},
      {"mxbai-embed-large", 1024},      {"all-minilm", 384},
  };
  return known;
}

int known_dimensions(std::string model) {
  const auto& known = known_models();
  if (auto colon = model.find(':');
      colon != std::string::npos && model.compare(colon, std::string::npos, ":latest") == 0)
    model.resize(colon);  // Ollama's default tag
  auto it = known.find(model);
  return it == known.end() ? 0 : it->second;
}

}  // namespace

OpenAiSettings parse_openai_settings(const ProviderSpec& spec) {
  OpenAiSettings s;
  s.model = spec.model;
  if (s.model.empty())
    throw Error(Code::invalid_argument,
                "openai provider: name the model, e.g. openai:text-embedding-3-small",
                {{"field", "model"}, {"provider", "openai"}});
  const json& set = settings_json(spec);
  if (!set.is_null() && !set.is_object())
    throw Error(Code::invalid_argument, "openai provider: settings must be a JSON object",
                {{"field", "settings"}});
  bool base_url_given = false;
  if (set.is_object()) {
    for (const auto& [key, v] : set.items()) {
      if (key == "base_url") {
        s.base_url = get_string(v, key);
        base_url_given = true;
      } else if (key == "model") {
        // Tolerated only when it repeats the spec's model: two different models is a mistake.
        if (get_string(v, key) != s.model)
          bad(key, "differs from the model in the provider spec ('" + s.model + "'); keep one");
      } else if (key == "dimensions") {
        s.dimensions = static_cast<int>(get_int(v, key, 1, 65536));
        s.dimensions_configured = true;
      } else if (key == "api_key_secret") {
        s.api_key_secret = get_string(v, key);
        if (!core::valid_secret_name(s.api_key_secret))
          bad(key,
              "must be a secret name such as OPENAI_API_KEY (letters, digits, '_'); the "
              "key itself goes in the secret store, not in the config");
        s.api_key_secret_configured = true;
      } else if (key == "api") {
        s.api = get_string(v, key);
        if (s.api != "openai" && s.api != "ollama") bad(key, "must be \"openai\" or \"ollama\"");
      } else if (key == "batch_size") {
        s.batch_size = static_cast<int>(get_int(v, key, 1, 2048));
      } else if (key == "max_batch_tokens") {
        s.max_batch_tokens = static_cast<std::size_t>(get_int(v, key, 1, 100000000));
      } else if (key == "max_input_tokens") {
        s.max_input_tokens = static_cast<int>(get_int(v, key, 1, 10000000));
      } else if (key == "requests_per_minute") {
        s.requests_per_minute = static_cast<double>(get_int(v, key, 0, 100000000));
      } else if (key == "tokens_per_minute") {
        s.tokens_per_minute = static_cast<double>(get_int(v, key, 0, 1000000000));
      } else if (key == "timeout_ms") {
        s.timeout_ms = static_cast<int>(get_int(v, key, 1, 3600000));
      } else if (key == "max_retries") {
        s.max_retries = static_cast<int>(get_int(v, key, 0, 20));
      } else if (key == "retry_base_delay_ms") {
        s.retry_base_delay_ms = static_cast<int>(get_int(v, key, 0, 600000));
      } else if (key == "retry_max_delay_ms") {
        s.retry_max_delay_ms = static_cast<int>(get_int(v, key, 0, 3600000));
      } else if (key == "allow_private") {
        if (!v.is_boolean()) bad(key, "must be true or false");
        s.allow_private = v.get<bool>();
      } else {
        bad(key,
            "is not a setting of the openai provider (known: base_url, dimensions, "
            "api_key_secret, api, batch_size, max_batch_tokens, max_input_tokens, "
            "requests_per_minute, tokens_per_minute, timeout_ms, max_retries, "
            "retry_base_delay_ms, retry_max_delay_ms, allow_private)");
      }
    }
  }
  if (!base_url_given && s.api == "ollama") s.base_url = "http://127.0.0.1:11434";
  while (s.base_url.size() > 1 && s.base_url.back() == '/') s.base_url.pop_back();
  if (s.base_url.rfind("http://", 0) != 0 && s.base_url.rfind("https://", 0) != 0)
    bad("base_url", "must start with http:// or https:// (got '" + s.base_url + "')");
  if (!s.dimensions_configured) {
    s.dimensions = known_dimensions(s.model);
    if (s.dimensions == 0)
      bad("dimensions",
          "is required for model '" + s.model +
              "' (only text-embedding-3-small/-3-large, text-embedding-ada-002, "
              "nomic-embed-text, mxbai-embed-large and all-minilm are known); set it to the "
              "length of the vectors the model returns");
  }
  return s;
}

std::size_t estimate_tokens(std::string_view text) {
  std::size_t ascii = 0, other = 0;
  for (unsigned char c : text) {
    if (c < 0x80)
      ++ascii;
    else if ((c & 0xC0) != 0x80)  // a lead byte: one code point
      ++other;
  }
  return (ascii + 3) / 4 + other;
}

// What parse_openai_settings() reads, with OpenAiSettings' defaults.
PluginSchema openai_provider_schema() {
  const OpenAiSettings d;
  using core::plugin_setting;
  auto num = [](auto v) { return std::to_string(static_cast<std::int64_t>(v)); };
  PluginSchema s;
  s.description =
      "OpenAI's embeddings API, or a server that speaks it or Ollama's (api: ollama); the model "
      "is required: openai:text-embedding-3-small.";
  s.settings = {
      plugin_setting("base_url", "string", "\"" + d.base_url + "\"",
                     "The API's base URL (Ollama's default: http://127.0.0.1:11434)."),
      plugin_setting("model", "string", "",
                     "Tolerated only when it repeats the model of the provider spec."),
      plugin_setting("dimensions", "integer", "",
                     "Vector length, 1-65536; required unless the model is a known one (see "
                     "models), and sent to models that can shorten their vectors.",
                     false),
      plugin_setting("api_key_secret", "secret-name", "\"" + d.api_key_secret + "\"",
                     "The secret (quarry secret set NAME) holding the API key."),
      plugin_setting("api", "string", "\"" + d.api + "\"",
                     "The wire protocol: openai, or ollama for Ollama's own API.", false,
                     {"openai", "ollama"}),
      plugin_setting("batch_size", "integer", num(d.batch_size), "Texts per request, 1-2048."),
      plugin_setting("max_batch_tokens", "integer", num(d.max_batch_tokens),
                     "Estimated tokens per request at most."),
      plugin_setting("max_input_tokens", "integer", num(d.max_input_tokens),
                     "The model's input limit in tokens (chunks are cut within it)."),
      plugin_setting("requests_per_minute", "integer", num(d.requests_per_minute),
                     "Rate limit of requests; 0 = none."),
      plugin_setting("tokens_per_minute", "integer", num(d.tokens_per_minute),
                     "Rate limit of tokens; 0 = none."),
      plugin_setting("timeout_ms", "integer", num(d.timeout_ms), "Limit for one request."),
      plugin_setting("max_retries", "integer", num(d.max_retries),
                     "Retries of a failed request, 0-20."),
      plugin_setting("retry_base_delay_ms", "integer", num(d.retry_base_delay_ms),
                     "First retry delay (full-jitter exponential backoff)."),
      plugin_setting("retry_max_delay_ms", "integer", num(d.retry_max_delay_ms),
                     "Longest retry delay."),
      plugin_setting("allow_private", "boolean", "false",
                     "Allow loopback and private addresses (a local Ollama needs true).")};
  for (const auto& [name, dims] : known_models()) s.models.push_back({name, dims, "", false});
  return s;
}

}  // namespace quarry::embed
