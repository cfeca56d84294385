// The `openai` provider (SPEC §5): any OpenAI-compatible /v1/embeddings endpoint, or Ollama's
// native /api/embed. Settings are documented in docs/configuration.md ("The openai provider").
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "embed/provider.h"
#include "net/http_client.h"
#include "net/rate_limiter.h"
#include "net/retry.h"
#include "quarry/error.h"

namespace quarry::embed {

struct OpenAiSettings {
  std::string base_url = "https://api.openai.com/v1";  // Ollama's default: http://127.0.0.1:11434
  std::string model;
  int dimensions = 0;  // configured, or the known model's; always > 0 once parsed
  bool dimensions_configured = false;
  std::string api_key_secret = "OPENAI_API_KEY";
  bool api_key_secret_configured = false;
  std::string api = "openai";  // "openai" | "ollama"
  int batch_size = 128;
  std::size_t max_batch_tokens = 8000;
  int max_input_tokens = 8191;
  double requests_per_minute = 0;  // 0: no limit
  double tokens_per_minute = 0;
  int timeout_ms = 30000;
  int max_retries = 5;
  int retry_base_delay_ms = 500;
  int retry_max_delay_ms = 30000;
  bool allow_private = false;
};

// Validates spec.model and spec.settings; throws Error(invalid_argument) naming the offending
// key (unknown keys included) and what to write instead.
OpenAiSettings parse_openai_settings(const ProviderSpec& spec);

// The SSRF guard's verdict on base_url without DNS (a private, loopback, link-local or
// cloud-metadata address, or "localhost"): Error(blocked_address) naming the URL, the address,
// its class and, for private and loopback ones, the setting that allows them, under
// `settings_path` (where the caller's surface keeps the settings: "embedder.settings" in a KB
// config, so "embedder.settings.allow_private"); nullopt when nothing is refused or base_url is
// not a URL (the provider's own check names that).
std::optional<Error> openai_endpoint_refusal(const OpenAiSettings& s,
                                             const std::string& settings_path);

// Token estimate used for batching and rate limiting, without the model's tokenizer: one token
// per 4 ASCII bytes (rounded up) plus one per non-ASCII code point. English BPE averages ~4
// bytes a token; CJK and other non-Latin scripts cost about a token per character, so counting
// their 3-byte characters as 3/4 token would overfill a batch by 4x.
std::size_t estimate_tokens(std::string_view text);

// Seams for tests: a fake or loopback-friendly HTTP client, the limiter's clock, the retry
// sleeper and jitter. Empty members get the real ones.
struct OpenAiDeps {
  std::shared_ptr<net::HttpClient> http;
  std::shared_ptr<net::Clock> clock;
  net::RetryPolicy::Sleeper sleeper;
  net::RetryPolicy::Jitter jitter;
};

std::unique_ptr<EmbeddingProvider> make_openai_provider(const ProviderSpec& spec,
                                                        const ProviderContext& ctx,
                                                        OpenAiDeps deps);

}  // namespace quarry::embed
