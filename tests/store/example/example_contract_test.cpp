// The example out-of-tree store (examples/brute_force_store/) through the store contract suite
// (contract_test.cpp, unchanged): it registers itself with quarry::register_store(), and every
// test builds it by id through the registry the engine builds stores from, so the suite runs
// the path an application's store takes.
#include "brute_force_store.h"
#include "quarry/engine.h"
#include "quarry/plugin.h"
#include "store_contract.h"

namespace quarry::store::contract {
namespace {

using quarry::testing::code_of;

void register_once() {
  static const bool done = [] {
    quarry_example::register_brute_force_store();
    return true;
  }();
  (void)done;
}

std::unique_ptr<VectorStore> example(const std::filesystem::path& dir) {
  register_once();
  return StoreRegistry::builtin().create(quarry_example::kBruteForceStoreId,
                                         nlohmann::json::object(), StoreContext{dir.string(), {}});
}

INSTANTIATE_TEST_SUITE_P(Example, StoreContract,
                         ::testing::Values(StoreUnderTest{"brute_force", example}),
                         StoreUnderTest::name_of);

TEST(ExampleStore, RegisteredByIdAndRefusesUnknownSettings) {
  register_once();
  auto ids = registered_stores();
  EXPECT_NE(std::find(ids.begin(), ids.end(), quarry_example::kBruteForceStoreId), ids.end());
  auto store = StoreRegistry::builtin().create(quarry_example::kBruteForceStoreId,
                                               quarry::Settings(), StoreContext{});
  EXPECT_EQ(store->id(), quarry_example::kBruteForceStoreId);
  EXPECT_TRUE(store->is_available());  // the port's default probe: a top_k = 0 query
  std::map<std::string, std::string> details;
  EXPECT_EQ(code_of(
                [] {
                  StoreRegistry::builtin().create(quarry_example::kBruteForceStoreId,
                                                  nlohmann::json{{"threads", 4}}, StoreContext{});
                },
                &details),
            Code::invalid_argument);
  EXPECT_EQ(details["field"], "threads");
  // Registering again is refused: the id is taken.
  EXPECT_EQ(code_of([] { quarry_example::register_brute_force_store(); }), Code::invalid_argument);
}

// The whole path an application's store takes: registered by the application, named by a KB's
// config, written by the indexer and queried by a vector search with a filter, all through the
// public Engine API.
TEST(ExampleStore, AKbOfAnEngineKeepsItsVectorsThere) {
  register_once();
  quarry::testing::TempDir dir;
  EngineOptions opts;
  opts.data_dir = dir.path().string();
  auto engine = Engine::open(opts);
  engine->create_kb("k",
                    R"({"embedder": {"provider": "hash:64"}, "store": {"id": "brute-force"}})");
  auto add = [&](const char* name, const char* text, const char* team) {
    IngestOptions o;
    o.metadata_json = std::string(R"({"team": ")") + team + R"("})";
    return engine->ingest_bytes("k", name, text, o).doc_id;
  };
  const std::string rockets =
      add("rockets.md", "Rockets burn kerosene and reach orbit after staging.", "red");
  add("cats.md", "Cats purr and sleep most of the day in the sunlight.", "blue");
  add("orbits.md", "A satellite in orbit circles the planet; rockets put it there.", "blue");
  auto report = engine->reindex("k", {});
  EXPECT_EQ(report.error_code, "") << report.error_message;
  EXPECT_EQ(report.pending, 0);

  SearchRequest r;
  r.kb = "k";
  r.query = "rockets reach orbit";
  r.mode = Mode::vector;
  r.top_k = 3;
  auto all = engine->search(r);
  EXPECT_EQ(all.mode, Mode::vector);
  ASSERT_EQ(all.hits.size(), 3u);
  EXPECT_EQ(all.hits[0].doc_id, rockets);
  r.query = "satellite circles the planet";
  r.filter_json = R"({"team": "red"})";  // evaluated by the example store's filter_matches()
  auto red = engine->search(r);
  ASSERT_EQ(red.hits.size(), 1u);
  EXPECT_EQ(red.hits[0].doc_id, rockets);
}

}  // namespace
}  // namespace quarry::store::contract
