// The provider registry, spec parsing, the selection chain and the dimension check.
#include <gtest/gtest.h>

#include <algorithm>

#include "embed/provider.h"
#include "model_fixture.h"
#include "quarry/error.h"
#include "quarry/plugin.h"
#include "test_util.h"

namespace quarry::embed {
namespace {

using quarry::testing::ScopedEnv;

// A provider whose availability and dimensions the test decides.
class FakeProvider : public EmbeddingProvider {
 public:
  FakeProvider(std::string id, int dims, bool ok) : id_(std::move(id)), dims_(dims), ok_(ok) {}
  std::string id() const override { return id_; }
  std::string model() const override { return "m"; }
  int dimensions() const override { return dims_; }
  int max_input_tokens() const override { return 10; }
  std::size_t count_tokens(std::string_view) const override { return 1; }
  std::string identity() const override { return id_; }
  Availability is_available() override {
    return ok_ ? Availability{} : Availability{false, "fake is down"};
  }
  std::vector<Vector> embed_documents(const std::vector<std::string>& t) override {
    return std::vector<Vector>(t.size(), Vector(static_cast<std::size_t>(dims_), 0.0f));
  }
  Vector embed_query(const std::string&) override {
    return Vector(static_cast<std::size_t>(dims_));
  }

 private:
  std::string id_;
  int dims_;
  bool ok_;
};

ProviderFactory fake(std::string id, int dims, bool ok) {
  return [=](const ProviderSpec&, const ProviderContext&) {
    return std::make_unique<FakeProvider>(id, dims, ok);
  };
}

using quarry::testing::code_of;

TEST(ProviderSpec, ParsesIdAndModel) {
  auto s = ProviderSpec::parse("static:glove-100d");
  EXPECT_EQ(s.id, "static");
  EXPECT_EQ(s.model, "glove-100d");
  EXPECT_EQ(s.to_string(), "static:glove-100d");
  auto h = ProviderSpec::parse("hash");
  EXPECT_EQ(h.id, "hash");
  EXPECT_EQ(h.model, "");
  auto o = parse_spec("openai:text-embedding-3-small", {{"dimensions", 256}});
  EXPECT_EQ(o.settings.get_integer("dimensions"), 256);
}

TEST(ProviderSpec, RejectsEmptyIdTrailingColonAndNonObjectSettings) {
  EXPECT_EQ(code_of([] { ProviderSpec::parse(""); }), Code::invalid_argument);
  EXPECT_EQ(code_of([] { ProviderSpec::parse(":model"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([] { ProviderSpec::parse("hash:"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([] { parse_spec("hash", nlohmann::json::array()); }), Code::invalid_argument);
}

TEST(ProviderRegistry, BuiltinHasStaticHashOpenai) {
  auto& reg = ProviderRegistry::builtin();
  EXPECT_TRUE(reg.has("static"));
  EXPECT_TRUE(reg.has("hash"));
  EXPECT_TRUE(reg.has("openai"));
}

TEST(ProviderRegistry, AddRejectsEmptyIdAndDuplicates) {
  ProviderRegistry reg;
  EXPECT_EQ(code_of([&] { reg.add("", fake("x", 3, true)); }), Code::invalid_argument);
  reg.add("x", fake("x", 3, true));
  EXPECT_EQ(code_of([&] { reg.add("x", fake("x", 3, true)); }), Code::invalid_argument);
  EXPECT_EQ(reg.ids(), std::vector<std::string>{"x"});
}

TEST(ProviderRegistry, CreateValidatesIdAndDimensions) {
  ProviderRegistry reg;
  reg.add("zero", fake("zero", 0, true));
  reg.add("neg", fake("neg", -4, true));
  reg.add("noid", fake("", 8, true));
  ProviderContext ctx;
  EXPECT_EQ(code_of([&] { reg.create(ProviderSpec::parse("zero"), ctx); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { reg.create(ProviderSpec::parse("neg"), ctx); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { reg.create(ProviderSpec::parse("noid"), ctx); }), Code::invalid_argument);
  try {
    reg.create(ProviderSpec::parse("nope"), ctx);
    FAIL() << "unknown id accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(e.message().find("nope"), std::string::npos);
    EXPECT_NE(e.message().find("zero"), std::string::npos);  // lists the known ids
  }
}

class SelectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg.add("up", fake("up", 8, true));
    reg.add("down", fake("down", 8, false));
  }
  ProviderRegistry reg;
  ProviderContext ctx;
};

TEST_F(SelectionTest, PinWinsOverKbAndDefault) {
  ScopedEnv pin("QUARRY_EMBEDDING_PROVIDER", "up");
  auto sel = select_provider(reg, "down", {}, "down", ctx);
  ASSERT_TRUE(sel.provider);
  EXPECT_EQ(sel.provider->id(), "up");
  EXPECT_EQ(sel.source, "pin");
}

TEST_F(SelectionTest, UnavailablePinIsAnErrorNotAFallback) {
  ScopedEnv pin("QUARRY_EMBEDDING_PROVIDER", "down");
  try {
    select_provider(reg, "up", {}, "up", ctx);
    FAIL() << "fell back";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::engine_unavailable);
    EXPECT_NE(e.message().find("fake is down"), std::string::npos);
    EXPECT_NE(e.message().find("QUARRY_EMBEDDING_PROVIDER"), std::string::npos);
  }
}

TEST_F(SelectionTest, UnknownPinIsAnError) {
  ScopedEnv pin("QUARRY_EMBEDDING_PROVIDER", "missing:model");
  EXPECT_EQ(code_of([&] { select_provider(reg, "up", {}, "", ctx); }), Code::invalid_argument);
}

TEST_F(SelectionTest, KbSettingThenDefaultThenNone) {
  ScopedEnv pin("QUARRY_EMBEDDING_PROVIDER", nullptr);
  auto kb = select_provider(reg, "up", {}, "down", ctx);
  EXPECT_EQ(kb.source, "kb");
  EXPECT_EQ(kb.provider->id(), "up");
  auto def = select_provider(reg, "", {}, "up", ctx);
  EXPECT_EQ(def.source, "default");
  EXPECT_EQ(def.provider->id(), "up");
  auto none = select_provider(reg, "", {}, "", ctx);
  EXPECT_EQ(none.source, "none");
  EXPECT_FALSE(none.provider);
  EXPECT_NE(none.reason.find("no embedding provider"), std::string::npos);
}

TEST_F(SelectionTest, UnavailableKbProviderIsReturnedWithItsReason) {
  ScopedEnv pin("QUARRY_EMBEDDING_PROVIDER", nullptr);
  auto sel = select_provider(reg, "down", {}, "up", ctx);
  ASSERT_TRUE(sel.provider);  // degrade to keyword, do not silently switch models
  EXPECT_EQ(sel.provider->id(), "down");
  EXPECT_EQ(sel.reason, "fake is down");
}

TEST_F(SelectionTest, KbSettingsReachTheRealHashProvider) {
  ScopedEnv pin("QUARRY_EMBEDDING_PROVIDER", nullptr);
  auto sel = select_provider(ProviderRegistry::builtin(), "hash", {{"dimensions", 64}}, "", ctx);
  ASSERT_TRUE(sel.provider);
  EXPECT_EQ(sel.provider->dimensions(), 64);
  EXPECT_TRUE(sel.reason.empty());
}

TEST(CheckDimensions, MismatchNamesBothPluginsAndBothDimensions) {
  EXPECT_NO_THROW(check_dimensions("static", 100, "embedded", 100));
  try {
    check_dimensions("static", 100, "qdrant", 384);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::dimension_mismatch);
    for (const char* s : {"static", "qdrant", "100", "384"})
      EXPECT_NE(e.message().find(s), std::string::npos) << s;
    EXPECT_EQ(e.details().at("store_dimensions"), "384");
  }
}

// quarry::register_provider() (quarry/plugin.h): the built-ins register through it, and an
// application's provider registered through it is what a KB's embedding.provider can name.
TEST(ProviderPluginRegistration, BuiltinsAreRegisteredThroughThePublicCall) {
  auto ids = registered_providers();
  for (const char* id : {"static", "hash", "openai", "bert"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
    EXPECT_EQ(code_of([&] { register_provider(id, fake(id, 3, true)); }), Code::invalid_argument)
        << id;
  }
}

TEST(ProviderPluginRegistration, AnotherApiVersionIsRefusedAndNothingIsRegistered) {
  std::string message;
  EXPECT_EQ(
      code_of([] { register_provider("v-next", fake("v-next", 3, true), kPluginApiVersion + 1); },
              nullptr, &message),
      Code::invalid_argument);
  EXPECT_NE(message.find("rebuild the plugin"), std::string::npos) << message;
  EXPECT_FALSE(ProviderRegistry::builtin().has("v-next"));
  EXPECT_EQ(code_of([] { register_provider("", fake("x", 3, true)); }), Code::invalid_argument);
}

TEST(ProviderPluginRegistration, ARegisteredProviderIsSelectedForAKbWithItsSettings) {
  static std::string seen;
  register_provider("app-embedder", [](const ProviderSpec& spec, const ProviderContext&) {
    seen = spec.to_string() + " " + spec.settings.json_text();
    return std::make_unique<FakeProvider>(
        "app-embedder", static_cast<int>(spec.settings.get_integer("dimensions").value_or(5)),
        true);
  });
  ProviderContext ctx;
  auto sel = select_provider(ProviderRegistry::builtin(), "app-embedder:m1",
                             nlohmann::json{{"dimensions", 12}}, "", ctx);
  ASSERT_TRUE(sel.provider);
  EXPECT_EQ(sel.source, "kb");
  EXPECT_EQ(sel.provider->dimensions(), 12);
  EXPECT_EQ(seen, R"(app-embedder:m1 {"dimensions":12})");
}

// A value of a described setting: its default, else one of its type.
nlohmann::json sample_value(const PluginSetting& s) {
  if (!s.default_json.empty()) return nlohmann::json::parse(s.default_json);
  if (!s.allowed.empty()) return s.allowed.front();
  if (s.type == "integer") return 100;
  if (s.type == "boolean") return false;
  if (s.type == "secret-name") return "SOME_SECRET";
  return "/nonexistent/model-folder";
}

const std::optional<PluginSchema>& schema_of(const std::string& id) {
  static const auto all = described_providers();
  for (const auto& p : all)
    if (p.id == id) return p.schema;
  static const std::optional<PluginSchema> none;
  return none;
}

// Every setting a built-in lists is one its factory reads: each one, at its default (or a
// value of its type), and every allowed value, is accepted; a key it does not list is refused
// by the providers that refuse unknown keys.
TEST(ProviderPluginRegistration, BuiltinsDescribeExactlyTheSettingsTheyRead) {
  // The factories themselves: a bert folder that is missing still builds (unavailable).
  const std::map<std::string, std::pair<std::string, ProviderFactory>> spec = {
      {"static", {"static:glove-100d", make_static_provider}},
      {"hash", {"hash", make_hash_provider}},
      {"openai", {"openai:text-embedding-3-small", make_openai_provider}},
      {"bert", {"bert:/nonexistent/minilm", make_bert_provider}}};
  ProviderContext ctx;
  for (const auto& [id, entry] : spec) {
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& text = entry.first;
    const ProviderFactory& make = entry.second;
    SCOPED_TRACE(id);
    const auto& schema = schema_of(id);
    ASSERT_TRUE(schema);
    EXPECT_FALSE(schema->description.empty());
    nlohmann::json all = nlohmann::json::object();
    for (const auto& s : schema->settings) {
      SCOPED_TRACE(s.name);
      EXPECT_TRUE(s.type == "string" || s.type == "integer" || s.type == "number" ||
                  s.type == "boolean" || s.type == "secret-name")
          << s.type;
      if (s.name == "model") continue;  // openai: must repeat the spec's model
      nlohmann::json one = {{s.name, sample_value(s)}};
      EXPECT_NO_THROW(make(parse_spec(text, one), ctx)) << one;
      for (const auto& v : s.allowed) EXPECT_NO_THROW(make(parse_spec(text, {{s.name, v}}), ctx));
      all[s.name] = sample_value(s);
    }
    EXPECT_NO_THROW(make(parse_spec(text, all), ctx)) << all;
    if (id == "openai" || id == "bert") {
      EXPECT_EQ(code_of([&] {
                  make(parse_spec(text, {{"not_a_setting", 1}}), ctx);
                }),
                Code::invalid_argument);
    }
  }
  // Known models and their dimensions.
  const auto& st = schema_of("static");
  ASSERT_EQ(st->models.size(), 1u);
  EXPECT_EQ(st->models[0].name, "glove-100d");
  EXPECT_EQ(st->models[0].dimensions, 100);
  EXPECT_TRUE(st->models[0].is_default);
  bool small = false;
  for (const auto& m : schema_of("openai")->models)
    small |= m.name == "text-embedding-3-small" && m.dimensions == 1536;
  EXPECT_TRUE(small);
}

TEST(ProviderPluginRegistration, APluginRegisteredWithoutASchemaIsListedUndescribed) {
  register_provider("undescribed-embedder", fake("undescribed-embedder", 3, true));
  PluginSchema schema;
  schema.description = "an app's embedder";
  schema.settings.push_back({"width", "integer", false, "8", "vector length", {}});
  register_provider("described-embedder", fake("described-embedder", 8, true), schema);
  bool undescribed = false, described = false;
  for (const auto& p : described_providers()) {
    if (p.id == "undescribed-embedder") undescribed = !p.schema.has_value();
    if (p.id == "described-embedder")
      described = p.schema && p.schema->description == "an app's embedder" &&
                  p.schema->settings.size() == 1 && p.schema->settings[0].name == "width";
  }
  EXPECT_TRUE(undescribed);
  EXPECT_TRUE(described);
}

TEST(L2Normalize, UnitLengthAndZeroStaysZero) {
  Vector v{3, 4};
  l2_normalize(v);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
  Vector z{0, 0, 0};
  l2_normalize(z);
  EXPECT_EQ(z, (Vector{0, 0, 0}));
}

}  // namespace
}  // namespace quarry::embed
