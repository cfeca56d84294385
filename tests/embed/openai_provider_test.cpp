// The openai provider against a real loopback server that speaks the OpenAI and Ollama APIs.
// Time is injected (limiter clock, retry sleeper), so no test waits for a backoff.
#include "embed/openai/openai_provider.h"

#include <gtest/gtest.h>

#include <cmath>

#include "net/fake_embed_server.h"
#include "net/fakes.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::embed {
namespace {

using nlohmann::json;
using testing::FakeEmbedServer;
using testing::Reply;

const std::string kKey = "sk-test-0123456789abcdef-SECRET";

struct Harness {
  FakeEmbedServer server{4};
  testing::RecordingSleeper sleeper;
  std::shared_ptr<testing::FakeClock> clock = std::make_shared<testing::FakeClock>();

  std::unique_ptr<EmbeddingProvider> make(json settings = json::object(), bool ollama = false) {
    if (!settings.contains("base_url"))
      settings["base_url"] = ollama ? server.ollama_url() : server.base_url();
    if (!settings.contains("allow_private")) settings["allow_private"] = true;
    if (!settings.contains("dimensions")) settings["dimensions"] = 4;
    if (!settings.contains("api_key_secret")) settings["api_key_secret"] = "TEST_EMBED_KEY";
    if (ollama) settings["api"] = "ollama";
    ProviderContext ctx;
    ctx.secret = [](const std::string& name) { return name == "TEST_EMBED_KEY" ? kKey : ""; };
    OpenAiDeps deps;
    deps.clock = clock;
    deps.sleeper = sleeper;
    deps.jitter = [] { return 0.5; };
    return make_openai_provider(
        ProviderSpec{"openai", "test-model", core::settings_from_json(settings)}, ctx, deps);
  }
};

using quarry::testing::error_of;

void expect_no_key(const Error& e) {
  EXPECT_EQ(e.message().find(kKey), std::string::npos) << e.message();
  for (const auto& [k, v] : e.details()) EXPECT_EQ(v.find(kKey), std::string::npos) << k;
}

std::vector<std::string> texts(int n, std::size_t bytes = 8) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::string(bytes, static_cast<char>('a' + i % 26)));
  return out;
}

TEST(OpenAiProvider, EmbedsInInputOrderNormalisedWithTheKey) {
  Harness h;
  auto p = h.make();
  auto v = p->embed_documents({"alpha", "beta", "gamma"});
  ASSERT_EQ(v.size(), 3u);
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i].size(), 4u);
    double norm = 0;
    for (float x : v[i]) norm += double(x) * x;
    EXPECT_NEAR(norm, 1.0, 1e-5);
    // The server answers in reverse order; the provider must sort by "index".
    EXPECT_NEAR(FakeEmbedServer::marker(v[i]), double(i + 1), 1e-5);
  }
  auto body = h.server.bodies().at(0);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["input"], json({"alpha", "beta", "gamma"}));
  EXPECT_EQ(body["dimensions"], 4);
  EXPECT_EQ(h.server.auth_headers().at(0), "Bearer " + kKey);
}

TEST(OpenAiProvider, SpeaksOllamasApiEmbed) {
  Harness h;
  auto p = h.make(json::object(), /*ollama=*/true);
  auto v = p->embed_documents({"x", "y"});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NEAR(FakeEmbedServer::marker(v[1]), 2.0, 1e-5);
  EXPECT_EQ(p->embed_query("q").size(), 4u);
  EXPECT_EQ(h.server.requests(), 2);
}

TEST(OpenAiProvider, BatchesByCount) {
  Harness h;
  auto p = h.make({{"batch_size", 3}});
  EXPECT_EQ(p->embed_documents(texts(10)).size(), 10u);
  auto bodies = h.server.bodies();
  ASSERT_EQ(bodies.size(), 4u);
  EXPECT_EQ(bodies[0]["input"].size(), 3u);
  EXPECT_EQ(bodies[3]["input"].size(), 1u);
}

TEST(OpenAiProvider, BatchesByEstimatedTokens) {
  Harness h;
  auto p = h.make({{"max_batch_tokens", 25}});
  // 40 ASCII bytes = 10 tokens each: two fit in 25, the third does not.
  EXPECT_EQ(p->embed_documents(texts(10, 40)).size(), 10u);
  EXPECT_EQ(h.server.requests(), 5);
  // A text above the budget on its own still goes, alone.
  p->embed_documents({std::string(400, 'x'), "y"});
  EXPECT_EQ(h.server.requests(), 7);
}

TEST(OpenAiProvider, EstimatesTokensConservativelyForNonAscii) {
  EXPECT_EQ(estimate_tokens(""), 0u);
  EXPECT_EQ(estimate_tokens("abcd"), 1u);
  EXPECT_EQ(estimate_tokens("abcde"), 2u);
  EXPECT_EQ(estimate_tokens("日本語"), 3u);  // 9 bytes, 3 code points
}

TEST(OpenAiProvider, HonoursRetryAfterOn429) {
  Harness h;
  auto p = h.make();
  h.server.push(
      Reply::status_body(429, R"({"error":{"message":"slow down"}})", {{"Retry-After", "2"}}));
  EXPECT_EQ(p->embed_documents({"a"}).size(), 1u);
  EXPECT_EQ(h.server.requests(), 2);
  ASSERT_EQ(h.sleeper.delays->size(), 1u);
  EXPECT_EQ((*h.sleeper.delays)[0], net::Millis(2000));
}

TEST(OpenAiProvider, RetriesA500ThenSucceeds) {
  Harness h;
  auto p = h.make({{"retry_base_delay_ms", 100}});
  h.server.push(Reply::status_body(500, "oops"));
  EXPECT_EQ(p->embed_documents({"a"}).size(), 1u);
  EXPECT_EQ(h.server.requests(), 2);
  EXPECT_EQ(*h.sleeper.delays, std::vector<net::Millis>{net::Millis(50)});
}

TEST(OpenAiProvider, PersistentRateLimitBecomesRateLimited) {
  Harness h;
  auto p = h.make({{"max_retries", 2}});
  for (int i = 0; i < 3; ++i)
    h.server.push(Reply::status_body(429, R"({"error":{"message":"quota"}})"));
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::rate_limited);
  EXPECT_EQ(h.server.requests(), 3);
  EXPECT_NE(e.message().find("quota"), std::string::npos) << e.message();
}

TEST(OpenAiProvider, PersistentServerErrorBecomesUpstreamError) {
  Harness h;
  auto p = h.make({{"max_retries", 1}});
  h.server.push(Reply::status_body(503, R"({"error":{"message":"overloaded"}})"));
  h.server.push(Reply::status_body(503, R"({"error":{"message":"overloaded"}})"));
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::upstream_error);
  EXPECT_EQ(e.details().at("status"), "503");
  EXPECT_EQ(h.server.requests(), 2);
}

TEST(OpenAiProvider, SlowResponsesTimeOutAndAreRetried) {
  Harness h;
  auto p = h.make({{"timeout_ms", 100}, {"max_retries", 1}});
  h.server.push(Reply::slow(400));
  h.server.push(Reply::slow(400));
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::timeout);
  EXPECT_EQ(h.server.requests(), 2);
  EXPECT_NE(e.message().find("timeout_ms"), std::string::npos) << e.message();
}

TEST(OpenAiProvider, MalformedJsonIsAnUpstreamErrorWithAnExcerpt) {
  Harness h;
  auto p = h.make();
  h.server.push(Reply::status_body(200, "<html>Bad Gateway page</html>"));
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::upstream_error);
  EXPECT_NE(e.message().find("<html>Bad Gateway"), std::string::npos) << e.message();
  EXPECT_EQ(h.server.requests(), 1);
}

TEST(OpenAiProvider, WrongDimensionsIsADimensionMismatch) {
  Harness h;
  auto p = h.make();
  h.server.push([] {
    Reply r;
    r.kind = Reply::wrong_dims;
    return r;
  }());
  Error e = error_of([&] { p->embed_documents({"a", "b"}); });
  EXPECT_EQ(e.code(), Code::dimension_mismatch);
  EXPECT_NE(e.message().find("openai"), std::string::npos);
  EXPECT_NE(e.message().find("5-dimensional"), std::string::npos) << e.message();
}

TEST(OpenAiProvider, WrongItemCountIsAnUpstreamError) {
  Harness h;
  for (bool ollama : {false, true}) {
    auto p = h.make(json::object(), ollama);
    Reply r;
    r.kind = Reply::wrong_count;
    h.server.push(r);
    Error e = error_of([&] { p->embed_documents({"a", "b"}); });
    EXPECT_EQ(e.code(), Code::upstream_error);
    EXPECT_NE(e.message().find("3 embeddings for 2 inputs"), std::string::npos) << e.message();
  }
}

TEST(OpenAiProvider, UnauthorizedCarriesTheServersMessageButNeverTheKey) {
  Harness h;
  auto p = h.make();
  // Some servers echo the key they were given; it must not reach the error.
  h.server.push(Reply::status_body(
      401, json{{"error", {{"message", "Incorrect API key provided: " + kKey}}}}.dump()));
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::unauthorized);
  EXPECT_NE(e.message().find("Incorrect API key provided"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("TEST_EMBED_KEY"), std::string::npos);  // says which secret
  expect_no_key(e);
  EXPECT_EQ(h.server.requests(), 1);
}

TEST(OpenAiProvider, ClientErrorsAreNotRetried) {
  for (int st : {400, 403, 404, 422}) {
    Harness h;
    auto p = h.make();
    h.server.push(Reply::status_body(st, R"({"error":{"message":"model not found: test-model"}})"));
    Error e = error_of([&] { p->embed_documents({"a"}); });
    EXPECT_EQ(e.code(), st == 403 ? Code::unauthorized : Code::upstream_error) << st;
    EXPECT_NE(e.message().find("model not found"), std::string::npos) << e.message();
    EXPECT_EQ(h.server.requests(), 1) << st;
    EXPECT_TRUE(h.sleeper.delays->empty());
    expect_no_key(e);
  }
}

TEST(OpenAiProvider, TooLongInputNamingTheModelIsAboutTheInput) {
  // OpenAI's own wording for an over-long input mentions the model; it is still the input's fault.
  Harness h;
  auto p = h.make();
  h.server.push(Reply::status_body(
      400,
      R"({"error":{"message":"This model's maximum context length is 8192 tokens, however you requested 9000 tokens. Please reduce your input."}})"));
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::input_rejected) << e.message();
  EXPECT_NE(e.message().find("edit the text"), std::string::npos) << e.message();
  EXPECT_EQ(h.server.requests(), 1);
}

TEST(OpenAiProvider, MalformedBodyEchoingTheKeyIsRedacted) {
  Harness h;
  auto p = h.make();
  h.server.push(Reply::status_body(200, "not json, header was Bearer " + kKey));
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::upstream_error);
  expect_no_key(e);
}

TEST(OpenAiProvider, LoopbackIsRefusedWithoutAllowPrivate) {
  Harness h;
  auto p = h.make({{"allow_private", false}});
  EXPECT_FALSE(p->is_available().ok);
  EXPECT_NE(p->is_available().reason.find("allow_private"), std::string::npos);
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::blocked_address);
  EXPECT_EQ(h.server.requests(), 0);
}

TEST(OpenAiProvider, RateLimiterPacesRequestsOnTheInjectedClock) {
  Harness h;
  auto p = h.make({{"requests_per_minute", 2}, {"batch_size", 1}});
  p->embed_documents(texts(4));  // 2 burst, then one every 30 s
  EXPECT_EQ(h.server.requests(), 4);
  EXPECT_EQ(h.clock->slept(), net::Millis(60000));
}

TEST(OpenAiProvider, SettingsAreStrict) {
  Harness h;
  Error e = error_of([&] { h.make({{"dimension", 4}}); });
  EXPECT_EQ(e.code(), Code::invalid_argument);
  EXPECT_NE(e.message().find("settings.dimension "), std::string::npos) << e.message();
  EXPECT_EQ(error_of([&] { h.make({{"batch_size", 0}}); }).code(), Code::invalid_argument);
  EXPECT_EQ(error_of([&] { h.make({{"api", "cohere"}}); }).code(), Code::invalid_argument);
  Error pasted = error_of([&] { h.make({{"api_key_secret", "sk-" + kKey}}); });
  EXPECT_EQ(pasted.code(), Code::invalid_argument);
  expect_no_key(pasted);  // a key pasted in the wrong place is not echoed back
  EXPECT_EQ(error_of([&] { h.make({{"base_url", "ftp://x"}}); }).code(), Code::invalid_argument);
  ProviderContext ctx;
  Error dims = error_of([&] { make_openai_provider({"openai", "my-model", {}}, ctx); });
  EXPECT_EQ(dims.code(), Code::invalid_argument);
  EXPECT_NE(dims.message().find("settings.dimensions is required"), std::string::npos);
  EXPECT_EQ(error_of([&] {
              make_openai_provider({"openai", "", {}}, ctx);
            }).code(),
            Code::invalid_argument);
}

TEST(OpenAiProvider, KnownModelsNeedNoDimensionsAndIdentityHasNoSecrets) {
  ProviderContext ctx;
  ctx.secret = [](const std::string&) { return kKey; };
  auto p = make_openai_provider(parse_spec("openai:text-embedding-3-small",
                                           {{"requests_per_minute", 100}, {"timeout_ms", 5}}),
                                ctx);
  EXPECT_EQ(p->dimensions(), 1536);
  EXPECT_EQ(p->identity(), "openai|api.openai.com/v1|text-embedding-3-small|1536");
  EXPECT_TRUE(p->is_available().ok) << p->is_available().reason;
  auto large =
      make_openai_provider(parse_spec("openai:text-embedding-3-large",
                                      {{"dimensions", 256}, {"base_url", "http://h:8080/x/"}}),
                           ctx);
  EXPECT_EQ(large->identity(), "openai|h:8080/x|text-embedding-3-large|256");
}

TEST(OpenAiProvider, MissingKeyForOpenAiIsUnavailableNotAnException) {
  ProviderContext ctx;
  ctx.secret = [](const std::string&) { return std::string(); };
  auto p = make_openai_provider({"openai", "text-embedding-3-small", {}}, ctx);
  auto a = p->is_available();
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("quarry secret set OPENAI_API_KEY"), std::string::npos) << a.reason;
  Error e = error_of([&] { p->embed_documents({"a"}); });
  EXPECT_EQ(e.code(), Code::unauthorized);
}

TEST(OpenAiProvider, MetadataEndpointIsNeverAvailable) {
  ProviderContext ctx;
  auto p = make_openai_provider(parse_spec("openai:m", {{"dimensions", 8},
                                                        {"allow_private", true},
                                                        {"base_url", "http://169.254.169.254/v1"}}),
                                ctx);
  EXPECT_FALSE(p->is_available().ok);
  EXPECT_EQ(error_of([&] { p->embed_documents({"a"}); }).code(), Code::blocked_address);
}

// The configuration-time check (SPEC §10): a base_url the SSRF guard refuses without DNS is
// Error(blocked_address) naming the address and, for private and loopback ones, the setting
// that allows them, spelled where the caller keeps the settings.
TEST(OpenAiProvider, EndpointRefusalNamesTheAddressAndTheSetting) {
  auto refusal = [](json settings, const std::string& path = "embedder.settings") {
    settings["dimensions"] = 8;
    return endpoint_refusal(parse_spec("openai:m", settings), path);
  };
  auto priv = refusal({{"base_url", "http://10.0.0.1/v1"}});
  ASSERT_TRUE(priv.has_value());
  EXPECT_EQ(priv->code(), Code::blocked_address);
  EXPECT_NE(priv->message().find("10.0.0.1, a private address"), std::string::npos)
      << priv->message();
  EXPECT_NE(priv->message().find("unless embedder.settings.allow_private is true"),
            std::string::npos)
      << priv->message();
  EXPECT_EQ(priv->details().at("address"), "10.0.0.1");
  EXPECT_EQ(priv->details().at("setting"), "embedder.settings.allow_private");
  EXPECT_EQ(priv->details().at("field"), "embedder.settings.base_url");
  auto local = refusal({{"api", "ollama"}}, "settings");  // Ollama's default, 127.0.0.1
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->details().at("setting"), "settings.allow_private");
  EXPECT_NE(local->message().find("loopback"), std::string::npos) << local->message();
  auto metadata = refusal({{"base_url", "http://169.254.169.254/v1"}, {"allow_private", true}});
  ASSERT_TRUE(metadata.has_value());
  EXPECT_NE(metadata->message().find("always"), std::string::npos) << metadata->message();
  EXPECT_EQ(metadata->details().count("setting"), 0u);
  EXPECT_FALSE(refusal({{"base_url", "http://10.0.0.1/v1"}, {"allow_private", true}}));
  EXPECT_FALSE(refusal({{"base_url", "https://api.example.com/v1"}}));
  EXPECT_FALSE(refusal({{"base_url", "ftp://x"}}));  // the factory's invalid_argument says it
  EXPECT_FALSE(endpoint_refusal(parse_spec("hash:16", {}), "embedder.settings"));
  // The provider's own availability says the same.
  ProviderContext ctx;
  auto p = make_openai_provider(
      parse_spec("openai:m", {{"dimensions", 8}, {"base_url", "http://10.0.0.1/v1"}}), ctx);
  EXPECT_NE(p->is_available().reason.find("embedder.settings.allow_private"), std::string::npos);
}

}  // namespace
}  // namespace quarry::embed
