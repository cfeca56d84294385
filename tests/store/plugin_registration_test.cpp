// quarry::register_store() (quarry/plugin.h): what an application linking the library calls to
// add a store, the same call the built-ins register through. The registry is process-wide, so
// each test registers ids of its own.
#include <gtest/gtest.h>

#include <algorithm>

#include "quarry/plugin.h"
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

}  // namespace
}  // namespace quarry::store
