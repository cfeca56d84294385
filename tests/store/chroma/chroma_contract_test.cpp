// The store contract suite (tests/store/contract_test.cpp, unchanged) against a real Chroma
// server, plus what only a real server can show: batching, metadata edge cases end to end.
//
// The server comes from ctest's fixture (CMakeLists.txt: chroma_server_start/stop, port 18011)
// and its URL from QUARRY_TEST_CHROMA_URL. Without the variable, or with a server that does not
// answer, every test here FAILS: a skipped integration test reads as a passing one. Each test
// gets a database of its own, so tests never see each other's collections.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <set>

#include "core/util.h"
#include "quarry/error.h"
#include "store/chroma/chroma_store.h"
#include "remote_store_util.h"
#include "store_contract.h"

namespace quarry::store::contract {
namespace {
using nlohmann::json;

std::string chroma_url() {
  const char* url = std::getenv("QUARRY_TEST_CHROMA_URL");
  if (!url || !*url)
    throw std::runtime_error(
        "QUARRY_TEST_CHROMA_URL is not set: run these tests through ctest (its fixture starts "
        "Chroma), or start one (bash tests/store/chroma/chroma_server.sh start 18011) and export "
        "QUARRY_TEST_CHROMA_URL=http://127.0.0.1:18011");
  return url;
}

std::unique_ptr<VectorStore> fresh_chroma(json extra = json::object()) {
  std::string db = "quarry-test-" + core::new_ulid();
  json settings = {{"url", chroma_url()},
                   {"allow_private", true},
                   {"database", db},
                   {"create_database", true},
                   {"timeout_ms", 60000}};
  settings.update(extra);
  auto store = chroma::make_chroma_store(settings, StoreContext{});
  if (!store->is_available())
    throw std::runtime_error("no Chroma server answers at " + chroma_url() +
                             " (QUARRY_TEST_CHROMA_URL); is the ctest fixture running?");
  return store;
}

std::unique_ptr<VectorStore> chroma_store(const std::filesystem::path&) {
  return fresh_chroma();
}
// Tiny writes: every document's chunks span several upsert/get/delete batches.
std::unique_ptr<VectorStore> chroma_small_batches(const std::filesystem::path&) {
  return fresh_chroma({{"batch_size", 2}});
}

INSTANTIATE_TEST_SUITE_P(Chroma, StoreContract,
                         ::testing::Values(StoreUnderTest{"chroma", chroma_store},
                                           StoreUnderTest{"chroma_batch2", chroma_small_batches}),
                         StoreUnderTest::name_of);

TEST(ChromaStoreIT, MetadataEdgeCasesFilterExactlyOnTheServer) {
  auto s = fresh_chroma();
  Scope scope{"kb", "r1", 4};
  s->upsert(scope, doc("int", 1, {{"a", 1}, {"o", {{"b", "x"}}}}));
  s->upsert(scope, doc("float", 1, {{"a", 1.0}, {"o", "flat"}}));
  s->upsert(scope, doc("str", 1, {{"a", "1"}}));
  s->upsert(scope, doc("bool", 1, {{"a", true}}));
  s->upsert(scope, doc("null", 1, {{"a", nullptr}}));
  s->upsert(scope, doc("array", 1, {{"a", {1, 2}}}));
  s->upsert(scope, doc("none", 1));
  using Set = std::set<std::string>;
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": 1})"), (Set{"int", "float"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$ne": 1}})"),
            (Set{"str", "bool", "null", "array", "none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": null})"), (Set{"null"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$exists": false}})"), (Set{"none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$in": ["1", true, null]}})"),
            (Set{"str", "bool", "null"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$nin": [1, "1"]}})"),
            (Set{"bool", "null", "array", "none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$gte": 0.5}})"), (Set{"int", "float"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"o.b": "x"})"), (Set{"int"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"o": {"$exists": true}})"), (Set{"int", "float"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$in": []}})"), Set{});
  Query q;
  q.vector = unit(0);
  q.top_k = 3;
  q.filter = core::parse_filter_text(R"({"a": {"$lt": "b"}})");
  try {
    s->query(scope, q);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::mode_unavailable);
  }
}

TEST(ChromaStoreIT, LargeDocumentsSpanBatchesAndShrinkCleanly) {
  auto s = fresh_chroma({{"batch_size", 7}});
  Scope scope{"kb", "r1", 4};
  auto first = s->upsert(scope, doc("big", 50));
  EXPECT_EQ(first.written, 50);
  EXPECT_EQ(s->count(scope), 50);
  auto again = s->upsert(scope, doc("big", 50));
  EXPECT_EQ(again.skipped, 50);
  auto shrunk = s->upsert(scope, doc("big", 9));
  EXPECT_EQ(shrunk.skipped, 9);
  EXPECT_EQ(s->count(scope), 9);
  EXPECT_EQ(s->delete_document("kb", "big"), 9);
  EXPECT_EQ(s->count(scope), 0);
}

TEST(ChromaStoreIT, AMissingDatabaseIsANamedErrorUnlessCreated) {
  auto s = chroma::make_chroma_store({{"url", chroma_url()},
                                      {"allow_private", true},
                                      {"database", "quarry-absent-" + core::new_ulid()}},
                                     StoreContext{});
  EXPECT_FALSE(s->is_available());
  try {
    s->count(Scope{"kb", "r1", 4});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
    EXPECT_NE(e.message().find("create_database"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace quarry::store::contract
