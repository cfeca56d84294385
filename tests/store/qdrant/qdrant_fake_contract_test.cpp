// The store contract suite (tests/store/contract_test.cpp, unchanged) run against the qdrant
// store through a FAKE Qdrant (fake_qdrant_server.h) that checks documented request shapes and
// implements Qdrant's documented semantics in memory. NOT a real Qdrant server: this shows the
// store speaks the documented REST API and that its translations are exact under the documented
// semantics. qdrant_real_contract_test.cpp runs the same suite against a real server (opt-in,
// QUARRY_QDRANT_URL).
//
// Both tenancies run the suite, plus namespace tenancy with tiny batches. Every test gets a
// collection_prefix of its own, so tests never see each other's collections.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/util.h"
#include "fake_qdrant_server.h"
#include "quarry/error.h"
#include "remote_store_util.h"
#include "store/qdrant/qdrant_store.h"
#include "store_contract.h"

namespace quarry::store::contract {
namespace {
using nlohmann::json;
using quarry::testing::FakeQdrant;

FakeQdrant& fake() {
  static FakeQdrant* server = new FakeQdrant();  // one per process, never torn down mid-test
  return *server;
}

std::string fresh_prefix() {
  std::string p(1, 't');  // not "t" + new_ulid(): g++ 12 -O3's false -Wrestrict (GCC PR 105651)
  p += core::new_ulid();
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return std::tolower(c); });
  return p;
}

json settings(json extra = json::object()) {
  json s = {{"url", fake().url()},
            {"allow_private", true},
            {"collection_prefix", fresh_prefix()},
            {"max_retries", 0}};
  s.update(extra);
  return s;
}

std::unique_ptr<VectorStore> namespace_store(const std::filesystem::path&) {
  return qdrant::make_qdrant_store(settings(), StoreContext{});
}
std::unique_ptr<VectorStore> collection_store(const std::filesystem::path&) {
  return qdrant::make_qdrant_store(settings({{"tenancy", "collection"}}), StoreContext{});
}
std::unique_ptr<VectorStore> batch2_store(const std::filesystem::path&) {
  return qdrant::make_qdrant_store(settings({{"batch_size", 2}}), StoreContext{});
}

INSTANTIATE_TEST_SUITE_P(
    QdrantFake, StoreContract,
    ::testing::Values(StoreUnderTest{"qdrant_fake_namespace", namespace_store},
                      StoreUnderTest{"qdrant_fake_collection", collection_store},
                      StoreUnderTest{"qdrant_fake_namespace_batch2", batch2_store}),
    StoreUnderTest::name_of);

// After all tests of the process (ctest runs each test in a process of its own): nothing the
// store sent was refused by the fake as an undocumented shape.
class NoRejectedRequests : public ::testing::Environment {
 public:
  void TearDown() override {
    EXPECT_EQ(fake().rejected(), 0)
        << "the store sent an undocumented request shape: " << fake().last_error();
  }
};
[[maybe_unused]] ::testing::Environment* const kNoRejected =
    ::testing::AddGlobalTestEnvironment(new NoRejectedRequests);

TEST(QdrantFakeStore, MetadataEdgeCasesFilterExactlyUnderQdrantSemantics) {
  auto s = qdrant::make_qdrant_store(settings(), StoreContext{});
  Scope scope{"kb", "r1", 4};
  s->upsert(scope, doc("int", 1, {{"a", 1}, {"o", {{"b", "x"}}}}));
  s->upsert(scope, doc("float", 1, {{"a", 1.0}, {"o", "flat"}}));
  s->upsert(scope, doc("str", 1, {{"a", "1"}}));
  s->upsert(scope, doc("bool", 1, {{"a", true}}));
  s->upsert(scope, doc("null", 1, {{"a", nullptr}}));
  s->upsert(scope, doc("array", 1, {{"a", {1, 2}}}));  // Qdrant would match [1, 2] against 1
  s->upsert(scope, doc("none", 1));
  using Set = std::set<std::string>;
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": 1})"), (Set{"int", "float"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$ne": 1}})"),
            (Set{"str", "bool", "null", "array", "none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": null})"), (Set{"null"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$exists": false}})"), (Set{"none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$exists": true}})"),
            (Set{"int", "float", "str", "bool", "null", "array"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$in": ["1", true, null]}})"),
            (Set{"str", "bool", "null"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$nin": [1, "1"]}})"),
            (Set{"bool", "null", "array", "none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$gte": 0.5}})"), (Set{"int", "float"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"o.b": "x"})"), (Set{"int"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"o": {"$exists": true}})"), (Set{"int", "float"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$in": []}})"), Set{});
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$nin": []}})").size(), 7u);
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
  EXPECT_EQ(fake().rejected(), 0) << fake().last_error();
}

TEST(QdrantFakeStore, NamespaceTenancyIndexesTheKbAsTenantAndFiltersEveryRequest) {
  json cfg = settings();
  auto s = qdrant::make_qdrant_store(cfg, StoreContext{});
  EXPECT_EQ(s->capabilities().tenancy, "namespace");
  fake().clear_seen();
  Scope scope{"kb", "r1", 4};
  s->upsert(scope, doc("d", 2));
  s->count(scope);
  s->has(scope, "d");
  Query q;
  q.vector = unit(0);
  q.top_k = 2;
  s->query(scope, q);
  s->delete_document("kb", "d");
  const std::string name = qdrant::collection_name(qdrant::parse_qdrant_settings(cfg), "kb", "r1");
  json schema = fake().payload_schema(name);
  EXPECT_EQ(schema[qdrant::kKbKey]["params"]["is_tenant"], true) << schema.dump();
  EXPECT_EQ(schema[qdrant::kKbKey]["params"]["type"], "keyword") << schema.dump();
  const json kb = qdrant::kb_condition("kb");
  int filtered = 0;
  for (const auto& r : fake().seen()) {
    if (!r.body.contains("filter")) continue;
    ++filtered;
    EXPECT_EQ(r.body["filter"]["must"][0], kb) << r.line << " " << r.body.dump();
  }
  EXPECT_GE(filtered, 5);
  for (const auto& r : fake().seen()) {
    const bool write = r.line.find("/points/delete") != std::string::npos ||
                       r.line.find("/index") != std::string::npos ||
                       (r.line.rfind("PUT", 0) == 0 && r.line.find("/points") != std::string::npos);
    if (write) {
      EXPECT_NE(r.line.find("wait=true"), std::string::npos) << r.line;
    }
  }
}

TEST(QdrantFakeStore, CollectionTenancyDropsWholeCollections) {
  json cfg = settings({{"tenancy", "collection"}});
  auto s = qdrant::make_qdrant_store(cfg, StoreContext{});
  EXPECT_EQ(s->capabilities().tenancy, "collection");
  s->upsert(Scope{"a", "r1", 4}, doc("d", 3));
  s->upsert(Scope{"b", "r1", 4}, doc("d", 1));
  auto qs = qdrant::parse_qdrant_settings(cfg);
  EXPECT_NE(qdrant::collection_name(qs, "a", "r1"), qdrant::collection_name(qs, "b", "r1"));
  fake().clear_seen();
  EXPECT_EQ(s->delete_kb("a"), 3);
  bool dropped = false;
  for (const auto& r : fake().seen())
    dropped = dropped || r.line == "DELETE /collections/" + qdrant::collection_name(qs, "a", "r1");
  EXPECT_TRUE(dropped);
  EXPECT_EQ(s->count(Scope{"b", "r1", 4}), 1);
}

TEST(QdrantFakeStore, ApiKeyFromTheSecretStoreIsSentAsTheApiKeyHeader) {
  FakeQdrant locked("s3cret");
  json cfg = {{"url", locked.url()},
              {"allow_private", true},
              {"max_retries", 0},
              {"api_key_secret", "qdrant-key"}};
  StoreContext ctx;
  ctx.secret = [](const std::string& name) { return name == "qdrant-key" ? "s3cret" : ""; };
  auto s = qdrant::make_qdrant_store(cfg, ctx);
  EXPECT_TRUE(s->is_available());
  s->upsert(Scope{"kb", "r1", 4}, doc("d", 1));
  EXPECT_EQ(s->count(Scope{"kb", "r1", 4}), 1);
  cfg.erase("api_key_secret");
  auto anonymous = qdrant::make_qdrant_store(cfg, StoreContext{});
  try {
    anonymous->count(Scope{"kb", "r1", 4});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unauthorized);
    EXPECT_NE(e.message().find("api_key_secret"), std::string::npos) << e.message();
  }
}

TEST(QdrantFakeStore, AnUnreachableServerIsUnavailableAndNamedInErrors) {
  auto s = qdrant::make_qdrant_store(
      {{"url", "http://127.0.0.1:9"}, {"allow_private", true}, {"max_retries", 0}}, StoreContext{});
  EXPECT_FALSE(s->is_available());
  try {
    s->count(Scope{"kb", "r1", 4});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::upstream_error);
    EXPECT_NE(e.message().find("127.0.0.1:9"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace quarry::store::contract
