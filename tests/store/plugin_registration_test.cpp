// quarry::register_store() (quarry/plugin.h): what an application linking the library calls to
// add a store, the same call the built-ins register through. The registry is process-wide, so
// each test registers ids of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "quarry/plugin.h"
#include "store/chroma/chroma_store.h"
#include "store/embedded/embedded_store.h"
#include "store/pgvector/pg_sql.h"
#include "store/qdrant/qdrant_store.h"
#include "store/vector_store.h"
#include "test_util.h"

namespace quarry::store {
namespace {

using quarry::testing::code_of;

StoreFactory memory_factory() {
  return [](const quarry::Settings&, const StoreContext&) { return make_memory_store(); };
}

bool registered(const std::string& id) {
  auto ids = registered_stores();
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(StorePluginRegistration, BuiltinsAreRegisteredThroughThePublicCall) {
  for (const char* id : {"embedded", "memory", "chroma", "qdrant", "pgvector"}) {
    EXPECT_TRUE(registered(id)) << id;
    // Taken by the built-in: the same call refuses a second store under that id.
    std::map<std::string, std::string> details;
    EXPECT_EQ(code_of([&] { register_store(id, memory_factory()); }, &details),
              Code::invalid_argument)
        << id;
    EXPECT_EQ(details["store"], id);
  }
}

TEST(StorePluginRegistration, AnotherApiVersionIsRefusedAndNothingIsRegistered) {
  std::map<std::string, std::string> details;
  std::string message;
  EXPECT_EQ(
      code_of([] { register_store("from-the-future", memory_factory(), kPluginApiVersion + 1); },
              &details, &message),
      Code::invalid_argument);
  EXPECT_NE(message.find("plugin API version " + std::to_string(kPluginApiVersion + 1)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rebuild the plugin"), std::string::npos) << message;
  EXPECT_EQ(details["expected"], std::to_string(kPluginApiVersion));
  EXPECT_FALSE(registered("from-the-future"));
  EXPECT_EQ(
      code_of([] { StoreRegistry::builtin().create("from-the-future", quarry::Settings(), {}); }),
      Code::not_found);
  EXPECT_EQ(code_of([] { register_store("from-the-past", memory_factory(), 0); }),
            Code::invalid_argument);
}

TEST(StorePluginRegistration, EmptyIdOrFactoryIsRefused) {
  EXPECT_EQ(code_of([] { register_store("", memory_factory()); }), Code::invalid_argument);
  EXPECT_EQ(code_of([] { register_store("no-factory", nullptr); }), Code::invalid_argument);
  EXPECT_FALSE(registered("no-factory"));
}

TEST(StorePluginRegistration, ARegisteredStoreIsBuiltByIdWithItsSettings) {
  static std::string seen_settings, seen_dir;
  register_store("recording", [](const quarry::Settings& s, const StoreContext& ctx) {
    seen_settings = s.json_text();
    seen_dir = ctx.data_dir;
    if (s.has("refuse"))
      throw Error(Code::invalid_argument, "setting 'refuse' is not known", {{"field", "refuse"}});
    return make_memory_store();
  });
  EXPECT_TRUE(registered("recording"));
  // The engine builds a KB's store from its config's settings object (lifecycle/vectors.cpp).
  auto s = StoreRegistry::builtin().create("recording", nlohmann::json{{"k", 1}},
                                           StoreContext{"/data", {}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->id(), "memory");
  EXPECT_EQ(seen_settings, R"({"k":1})");
  EXPECT_EQ(seen_dir, "/data");
  // The factory's own refusals reach the caller as they are.
  EXPECT_EQ(code_of([] {
              StoreRegistry::builtin().create("recording", nlohmann::json{{"refuse", true}}, {});
            }),
            Code::invalid_argument);
  // Settings that are not an object never reach a factory.
  EXPECT_EQ(
      code_of([] { StoreRegistry::builtin().create("recording", nlohmann::json::array(), {}); }),
      Code::invalid_argument);
  EXPECT_EQ(seen_settings, R"({"refuse":true})");
}

TEST(StorePluginRegistration, MetadataMustBeTheTextOfAnObject) {
  auto s = make_memory_store();
  DocumentVectors d{"d", "[1, 2]", {{0, "c", {1, 0}, ""}}};
  std::map<std::string, std::string> details;
  EXPECT_EQ(code_of(
                [&] {
                  s->upsert(StoreScope{"kb", "r", 2}, d);
                },
                &details),
            Code::invalid_argument);
  EXPECT_EQ(details["doc_id"], "d");
  EXPECT_EQ(code_of([&] {
              s->upsert_many(StoreScope{"kb", "r", 2}, {d});
            }),
            Code::invalid_argument);
  d.metadata_json = "";  // counts as {}
  EXPECT_EQ(s->upsert(StoreScope{"kb", "r", 2}, d).written, 1);
  EXPECT_EQ(s->count(StoreScope{"kb", "r", 2}), 1);
}

// A value of a described setting: its default, else one of its type.
nlohmann::json sample_value(const PluginSetting& s) {
  if (!s.default_json.empty()) return nlohmann::json::parse(s.default_json);
  if (!s.allowed.empty()) return s.allowed.front();
  if (s.type == "integer") return 2;
  if (s.type == "boolean") return false;
  return "SOME_SECRET";  // secret-name (and any other string)
}

// Every setting a built-in store lists is one its parser reads (each parser refuses keys it
// does not know): each one alone (pgvector: with its required dsn_secret), all of them at once,
// and every allowed value are accepted; the documented defaults are values the parser takes.
TEST(StorePluginRegistration, BuiltinsDescribeExactlyTheSettingsTheyRead) {
  using Parse = std::function<void(const nlohmann::json&)>;
  const std::map<std::string, Parse> parsers = {
      {"embedded", [](const nlohmann::json& j) { embedded::parse_settings(j); }},
      {"chroma", [](const nlohmann::json& j) { chroma::parse_chroma_settings(j); }},
      {"qdrant", [](const nlohmann::json& j) { qdrant::parse_qdrant_settings(j); }},
      {"pgvector", [](const nlohmann::json& j) { pgvector::parse_pg_settings(j); }},
      {"memory",
       [](const nlohmann::json& j) {
         StoreRegistry::builtin().create("memory", j, StoreContext{});
       }},
  };
  std::map<std::string, std::optional<PluginSchema>> schemas;
  for (auto& p : described_stores()) schemas[p.id] = p.schema;
  for (const auto& kv : parsers) {
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& id = kv.first;
    const auto& parse = kv.second;
    SCOPED_TRACE(id);
    ASSERT_TRUE(schemas[id]);
    const PluginSchema& schema = *schemas[id];
    EXPECT_FALSE(schema.description.empty());
    EXPECT_TRUE(schema.models.empty());
    nlohmann::json base = nlohmann::json::object();
    for (const auto& s : schema.settings)
      if (s.required) base[s.name] = sample_value(s);
    nlohmann::json all = base;
    for (const auto& s : schema.settings) {
      SCOPED_TRACE(s.name);
      nlohmann::json one = base;
      one[s.name] = sample_value(s);
      EXPECT_NO_THROW(parse(one)) << one;
      for (const auto& v : s.allowed) {
        one[s.name] = v;
        EXPECT_NO_THROW(parse(one)) << one;
      }
      all[s.name] = sample_value(s);
    }
    EXPECT_NO_THROW(parse(all)) << all;
    nlohmann::json unknown = base;
    unknown["not_a_setting"] = 1;
    EXPECT_EQ(code_of([&] { parse(unknown); }), Code::invalid_argument);
  }
  EXPECT_TRUE(schemas["memory"]->settings.empty());
  // pgvector's one required setting, by name and type.
  const auto& pg = schemas["pgvector"]->settings;
  ASSERT_FALSE(pg.empty());
  EXPECT_EQ(pg[0].name, "dsn_secret");
  EXPECT_EQ(pg[0].type, "secret-name");
  EXPECT_TRUE(pg[0].required);
}

TEST(StorePluginRegistration, AStoreRegisteredWithoutASchemaIsListedUndescribed) {
  register_store("undescribed-store", memory_factory());
  PluginSchema schema;
  schema.description = "an app's store";
  register_store("described-store", memory_factory(), schema);
  std::map<std::string, std::optional<PluginSchema>> schemas;
  for (auto& p : described_stores()) schemas[p.id] = p.schema;
  ASSERT_TRUE(schemas.count("undescribed-store"));
  EXPECT_FALSE(schemas["undescribed-store"]);
  ASSERT_TRUE(schemas["described-store"]);
  EXPECT_EQ(schemas["described-store"]->description, "an app's store");
  EXPECT_TRUE(schemas["described-store"]->settings.empty());
}

}  // namespace
}  // namespace quarry::store
