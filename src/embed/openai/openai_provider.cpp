// The openai provider: batching, rate limiting, retries and the two wire formats. The API key
// is read per request (so `quarry secret set` takes effect without a restart) and is scrubbed
// from every message built from server text, since some servers echo what they were sent.
#include "embed/openai/openai_provider.h"

#include <cctype>
#include <cstdlib>
#include <mutex>

#include "core/util.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

using nlohmann::json;

// One limiter per (endpoint, key, limits) in the process: the limits belong to the account, so
// two KBs using the same key must share one budget rather than each spending the whole of it.
std::shared_ptr<net::RateLimiter> shared_limiter(const OpenAiSettings& s) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<net::RateLimiter>> limiters;
  std::string key = s.base_url + "|" + s.api_key_secret + "|" +
                    std::to_string(s.requests_per_minute) + "|" +
                    std::to_string(s.tokens_per_minute);
  std::lock_guard<std::mutex> lk(mu);
  if (auto existing = limiters[key].lock()) return existing;
  auto made = std::make_shared<net::RateLimiter>(s.requests_per_minute, s.tokens_per_minute);
  limiters[key] = made;
  return made;
}

std::string excerpt(const std::string& body) {
  std::string e = core::repair_utf8(body.substr(0, 160));
  for (auto& c : e)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return body.size() > 160 ? e + "..." : e;
}

class OpenAiProvider final : public EmbeddingProvider {
 public:
  OpenAiProvider(OpenAiSettings s, ProviderContext ctx, OpenAiDeps deps)
      : s_(std::move(s)),
        ctx_(std::move(ctx)),
        http_(deps.http ? deps.http : net::make_curl_client()),
        retry_(net::RetryOptions{s_.max_retries, net::Millis(s_.retry_base_delay_ms),
                                 net::Millis(s_.retry_max_delay_ms), net::Millis(120000)},
               deps.sleeper, deps.jitter) {
    try {
      url_ = net::parse_url(s_.base_url);
    } catch (const Error& e) {
      throw Error(Code::invalid_argument, "openai provider: settings.base_url: " + e.message(),
                  {{"field", "settings.base_url"}});
    }
    if (s_.requests_per_minute > 0 || s_.tokens_per_minute > 0)
      limiter_ = deps.clock ? std::make_shared<net::RateLimiter>(s_.requests_per_minute,
                                                                 s_.tokens_per_minute, deps.clock)
                            : shared_limiter(s_);
    std::string path = url_.path == "/" ? "" : url_.path;
    bool default_port = url_.port == (url_.scheme == "https" ? 443 : 80);
    bool v6 = url_.host.find(':') != std::string::npos;
    endpoint_ = (v6 ? "[" + url_.host + "]" : url_.host) +
                (default_port ? "" : ":" + std::to_string(url_.port)) + path;
    who_ = "openai provider (" + s_.model + " at " + url_.host + ")";
  }

  std::string id() const override { return "openai"; }
  std::string model() const override { return s_.model; }
  int dimensions() const override { return s_.dimensions; }
  int max_input_tokens() const override { return s_.max_input_tokens; }
  std::size_t count_tokens(std::string_view text) const override { return estimate_tokens(text); }
  std::string identity() const override {
    return "openai|" + endpoint_ + "|" + s_.model + "|" + std::to_string(s_.dimensions);
  }

  // No network here (callers ask often, and offline must stay fast): the guard's verdict on
  // what is knowable without DNS, and whether a key is there when one is needed.
  Availability is_available() override {
    if (auto refused = openai_endpoint_refusal(s_, "embedder.settings"))
      return {false, who_ + ": " + refused->message()};
    if (key_required()) {
      try {
        if (api_key().empty())
          return {false, who_ + ": no API key; " + key_hint(), Code::unauthorized};
      } catch (const Error& e) {
        return {false, who_ + ": " + e.message(), e.code()};
      }
    }
    return {};
  }

  std::vector<Vector> embed_documents(const std::vector<std::string>& texts) override {
    std::vector<Vector> out;
    out.reserve(texts.size());
    std::size_t i = 0;
    while (i < texts.size()) {
      // Greedy: fill a batch up to batch_size texts and max_batch_tokens estimated tokens. A
      // single text above the token budget still goes, alone; the server is the judge of it.
      std::size_t end = i, tokens = 0;
      while (end < texts.size() && end - i < static_cast<std::size_t>(s_.batch_size)) {
        std::size_t t = estimate_tokens(texts[end]);
        if (end > i && tokens + t > s_.max_batch_tokens) break;
        tokens += t;
        ++end;
      }
      std::vector<std::string> batch(texts.begin() + static_cast<std::ptrdiff_t>(i),
                                     texts.begin() + static_cast<std::ptrdiff_t>(end));
      for (auto& v : embed_batch(batch, tokens)) out.push_back(std::move(v));
      i = end;
    }
    return out;
  }

  Vector embed_query(const std::string& text) override {
    return std::move(embed_documents({text}).front());
  }

 private:
  bool key_required() const {
    return s_.api_key_secret_configured || url_.host == "api.openai.com";
  }

  std::string key_hint() const {
    return "store it with `quarry secret set " + s_.api_key_secret + "` or set the " +
           s_.api_key_secret + " environment variable";
  }

  std::string api_key() const {
    if (ctx_.secret) return ctx_.secret(s_.api_key_secret);
    const char* v = std::getenv(s_.api_key_secret.c_str());
    return v ? v : "";
  }

  // Replaces every occurrence of the key, so no message can carry it even if a server echoes it.
  static std::string redact(std::string text, const std::string& key) {
    if (key.size() < 4) return text;  // too short to matter, and would shred ordinary text
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at))
      text.replace(at, key.size(), "[redacted]");
    return text;
  }

  std::string server_message(const std::string& body, const std::string& key) const {
    std::string msg;
    try {
      json j = json::parse(body);
      if (j.contains("error")) {
        const json& e = j["error"];
        if (e.is_string())
          msg = e.get<std::string>();
        else if (e.is_object() && e.contains("message") && e["message"].is_string())
          msg = e["message"].get<std::string>();
      }
    } catch (const json::exception&) {
    }
    if (msg.empty()) msg = body.empty() ? "(empty body)" : excerpt(body);
    return redact(core::repair_utf8(msg), key);
  }

  std::vector<Vector> embed_batch(std::vector<std::string> batch, std::size_t tokens) {
    const std::string key = api_key();
    if (key.empty() && key_required())
      throw Error(Code::unauthorized, who_ + ": no API key; " + key_hint(),
                  {{"provider", "openai"}, {"secret", s_.api_key_secret}});
    // OpenAI refuses an empty string in `input`; a single space embeds as "nothing" instead.
    for (auto& t : batch)
      if (t.empty()) t = " ";
    json body = {{"model", s_.model}, {"input", batch}};
    if (s_.dimensions_configured) body["dimensions"] = s_.dimensions;

    net::HttpRequest req;
    req.method = "POST";
    req.url = s_.base_url + (s_.api == "ollama" ? "/api/embed" : "/embeddings");
    req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    if (!key.empty()) req.headers.emplace_back("Authorization", "Bearer " + key);
    req.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    req.timeout_ms = s_.timeout_ms;
    req.connect_timeout_ms = std::min(s_.timeout_ms, 10000);
    req.allow_private = s_.allow_private;

    net::RetryOutcome outcome;
    try {
      outcome = retry_.run([&] {
        if (limiter_) limiter_->acquire(tokens);  // every attempt spends from the budget
        return http_->send(req);
      });
    } catch (const Error& e) {
      auto details = e.details();
      details["provider"] = "openai";
      throw Error(e.code(), redact(who_ + ": " + e.message(), key), details);
    }
    const auto& r = outcome.response;
    if (r.status < 200 || r.status > 299) fail(outcome, key);
    return s_.api == "ollama" ? parse_ollama(r.body, batch.size(), key)
                              : parse_openai(r.body, batch.size(), key);
  }

  // Whether a 400/422 message is about the input text rather than the request's settings.
  static bool input_refused(const std::string& msg) {
    std::string m = msg;
    for (auto& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // "This model's maximum context length is N tokens ... your input is too long" names the
    // model but is about the input; "model not found: X" is about the settings.
    for (const char* w : {"context length", "too long", "too many tokens", "flagged"})
      if (m.find(w) != std::string::npos) return true;
    for (const char* w : {"input", "token", "content"})
      if (m.find(w) != std::string::npos && m.find("model") == std::string::npos) return true;
    return false;
  }

  [[noreturn]] void fail(const net::RetryOutcome& o, const std::string& key) const {
    const long st = o.response.status;
    std::map<std::string, std::string> d = {{"provider", "openai"},
                                            {"status", std::to_string(st)},
                                            {"attempts", std::to_string(o.attempts)}};
    std::string msg = server_message(o.response.body, key);
    std::string http = " (HTTP " + std::to_string(st) + "): " + msg;
    if (st == 401 || st == 403)
      throw Error(Code::unauthorized,
                  who_ + " refused the API key" + http + "; check it, then " + key_hint(), d);
    if (st == 429) {
      if (o.retry_after.count() > 0) d["retry_after_ms"] = std::to_string(o.retry_after.count());
      std::string when =
          o.gave_up_on_retry_after
              ? "asked to wait " + std::to_string(o.retry_after.count() / 1000) +
                    " s, longer than Quarry waits"
              : "kept rate-limiting after " + std::to_string(o.attempts) + " attempts";
      throw Error(Code::rate_limited,
                  who_ + " " + when + http +
                      "; retry later or lower requests_per_minute / tokens_per_minute",
                  d);
    }
    if (st >= 300 && st < 400)
      throw Error(Code::upstream_error,
                  who_ + " answered with a redirect" + http +
                      "; redirects are not followed: set base_url to the final address",
                  d);
    if (st >= 500 || st == 408 || st == 425)
      throw Error(Code::upstream_error,
                  who_ + " failed after " + std::to_string(o.attempts) + " attempts" + http +
                      "; retry later, or check base_url",
                  d);
    // 413 and 400/422 that name the input (too long, refused content) are about this input:
    // the lifecycle tombstones the document instead of retrying it forever.
    if (st == 413)
      throw Error(Code::content_too_large,
                  who_ + " refused the input as too large" + http +
                      "; lower chunking.max_tokens below the model's input limit",
                  d);
    if ((st == 400 || st == 422) && input_refused(msg))
      throw Error(Code::input_rejected,
                  who_ + " rejected the input" + http +
                      "; edit the text, or use another embedder (the document is not retried "
                      "until its content or the embedder changes)",
                  d);
    throw Error(Code::upstream_error,
                who_ + " rejected the request" + http + "; check the model name and base_url", d);
  }

  json parse_body(const std::string& body, const std::string& key) const {
    try {
      return json::parse(body);
    } catch (const json::exception&) {
      throw Error(Code::upstream_error,
                  who_ + " returned malformed JSON: '" + redact(excerpt(body), key) +
                      "'; is base_url an embeddings endpoint?",
                  {{"provider", "openai"}});
    }
  }

  [[noreturn]] void malformed(const std::string& what) const {
    throw Error(Code::upstream_error, who_ + " returned an unexpected response: " + what,
                {{"provider", "openai"}});
  }

  Vector to_vector(const json& arr, std::size_t item) const {
    if (!arr.is_array())
      malformed("item " + std::to_string(item) +
                " has no embedding array (set no "
                "encoding_format other than float)");
    if (static_cast<int>(arr.size()) != s_.dimensions)
      throw Error(Code::dimension_mismatch,
                  who_ + " returned " + std::to_string(arr.size()) +
                      "-dimensional vectors but is configured for " +
                      std::to_string(s_.dimensions) +
                      "; set settings.dimensions to match the model, or use another model",
                  {{"provider", "openai"},
                   {"expected", std::to_string(s_.dimensions)},
                   {"actual", std::to_string(arr.size())}});
    Vector v;
    v.reserve(arr.size());
    for (const auto& x : arr) {
      if (!x.is_number()) malformed("a non-numeric vector component");
      v.push_back(x.get<float>());
    }
    l2_normalize(v);
    return v;
  }

  void check_count(std::size_t got, std::size_t want) const {
    if (got != want)
      throw Error(Code::upstream_error,
                  who_ + " returned " + std::to_string(got) + " embeddings for " +
                      std::to_string(want) + " inputs; lower batch_size or check the server",
                  {{"provider", "openai"}});
  }

  std::vector<Vector> parse_openai(const std::string& body, std::size_t n,
                                   const std::string& key) const {
    json j = parse_body(body, key);
    if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
      malformed("no \"data\" array");
    const json& data = j["data"];
    check_count(data.size(), n);
    std::vector<Vector> out(n);
    std::vector<bool> seen(n, false);
    for (std::size_t pos = 0; pos < data.size(); ++pos) {
      const json& item = data[pos];
      if (!item.is_object()) malformed("a data item that is not an object");
      // Results may arrive in any order; `index` says which input each belongs to.
      std::size_t idx = pos;
      if (item.contains("index")) {
        if (!item["index"].is_number_unsigned() || item["index"].get<std::size_t>() >= n)
          malformed("an index outside 0.." + std::to_string(n - 1));
        idx = item["index"].get<std::size_t>();
      }
      if (seen[idx]) malformed("index " + std::to_string(idx) + " twice");
      seen[idx] = true;
      out[idx] = to_vector(item.value("embedding", json()), idx);
    }
    return out;
  }

  std::vector<Vector> parse_ollama(const std::string& body, std::size_t n,
                                   const std::string& key) const {
    json j = parse_body(body, key);
    if (!j.is_object() || !j.contains("embeddings") || !j["embeddings"].is_array())
      malformed("no \"embeddings\" array");
    const json& e = j["embeddings"];
    check_count(e.size(), n);
    std::vector<Vector> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(to_vector(e[i], i));
    return out;
  }

  OpenAiSettings s_;
  ProviderContext ctx_;
  std::shared_ptr<net::HttpClient> http_;
  std::shared_ptr<net::RateLimiter> limiter_;
  net::RetryPolicy retry_;
  net::Url url_;
  std::string endpoint_, who_;
};

}  // namespace

std::optional<Error> openai_endpoint_refusal(const OpenAiSettings& s,
                                             const std::string& settings_path) {
  const std::string allow_setting = settings_path + ".allow_private";
  std::optional<net::StaticRefusal> r;
  try {
    r = net::SsrfGuard::refusal_static(s.base_url, s.allow_private);
  } catch (const Error&) {
    return std::nullopt;  // not a URL: the provider refuses it with invalid_argument
  }
  if (!r) return std::nullopt;
  const std::string cls = net::address_class_name(r->address_class);
  const bool may_allow = r->address_class == net::AddressClass::private_net ||
                         r->address_class == net::AddressClass::loopback;
  std::string what = "the embedder's base_url " + s.base_url + " points at " + r->host + ", a " +
                     cls + " address, which the SSRF guard refuses";
  what += may_allow ? " unless " + allow_setting +
                          " is true: set it for an embedder on this machine or your own "
                          "network (a local Ollama), or use a public endpoint"
                    : " always (link-local, cloud-metadata, unspecified and multicast "
                      "addresses); use another endpoint";
  std::map<std::string, std::string> details = {{"field", settings_path + ".base_url"},
                                                {"host", r->host},
                                                {"address", r->host},
                                                {"class", cls}};
  if (may_allow) details["setting"] = allow_setting;
  return Error(Code::blocked_address, what, std::move(details));
}

// Of the built-in providers only openai has an endpoint (provider.h).
std::optional<Error> endpoint_refusal(const ProviderSpec& spec, const std::string& settings_path) {
  if (spec.id != "openai") return std::nullopt;
  OpenAiSettings s;
  try {
    s = parse_openai_settings(spec);
  } catch (const Error&) {
    return std::nullopt;  // the factory names the bad setting
  }
  return openai_endpoint_refusal(s, settings_path);
}

std::unique_ptr<EmbeddingProvider> make_openai_provider(const ProviderSpec& spec,
                                                        const ProviderContext& ctx,
                                                        OpenAiDeps deps) {
  return std::make_unique<OpenAiProvider>(parse_openai_settings(spec), ctx, std::move(deps));
}

std::unique_ptr<EmbeddingProvider> make_openai_provider(const ProviderSpec& spec,
                                                        const ProviderContext& ctx) {
  return make_openai_provider(spec, ctx, OpenAiDeps{});
}

}  // namespace quarry::embed
