// Embedded-store behaviour beyond the contract: durability, the derived index file (rebuilt
// when missing, corrupt or stale; memory-mapped when only read), several store objects on one
// data dir as several processes would be, recall of the HNSW path, settings.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "quarry/error.h"
#include "store/embedded/embedded_store.h"
#include "test_util.h"

namespace quarry::store::embedded {
namespace {

using Vec = std::vector<float>;
constexpr int kDim = 32;
const Scope kScope{"kb", "rev1", kDim};

Vec unit_random(std::mt19937& rng) {
  std::normal_distribution<float> g;
  Vec v(kDim);
  for (auto& x : v) x = g(rng);
  return v;
}

DocumentVectors one(const std::string& id, Vec v, nlohmann::json meta = nlohmann::json::object()) {
  return DocumentVectors{id, std::move(meta), {{0, id + "#0", std::move(v), ""}}};
}

Query q(const Vec& v, int k) {
  Query x;
  x.vector = v;
  x.top_k = k;
  return x;
}

std::vector<std::string> ids(const std::vector<StoreHit>& hits) {
  std::vector<std::string> out;
  for (const auto& h : hits) out.push_back(h.doc_id);
  return out;
}

class EmbeddedStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<VectorStore> open(nlohmann::json settings = {{"hnsw_threshold", 100}}) {
    return make_embedded_store(settings, StoreContext{dir_.path().string(), {}});
  }
  // 300 vectors: above the threshold, so the scope is served by HNSW.
  std::vector<Vec> fill(VectorStore& s, int n = 300, std::uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::vector<Vec> vs;
    for (int i = 0; i < n; ++i) {
      vs.push_back(unit_random(rng));
      s.upsert(kScope, one("d" + std::to_string(i), vs.back()));
    }
    return vs;
  }
  std::string index_file() const { return index_path(dir_.path().string(), "kb", "rev1"); }

  quarry::testing::TempDir dir_;
};

TEST_F(EmbeddedStoreTest, VectorsSurviveCloseAndReopen) {
  std::vector<Vec> vs;
  std::vector<std::string> before;
  {
    auto s = open();
    vs = fill(*s);
    before = ids(s->query(kScope, q(vs[7], 10)));
  }
  auto s = open();
  EXPECT_EQ(s->count(kScope), 300);
  EXPECT_EQ(ids(s->query(kScope, q(vs[7], 10))), before);
  EXPECT_EQ(before.front(), "d7");
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "vectors" / "vectors.db"));
}

TEST_F(EmbeddedStoreTest, ReaderMapsTheIndexFileInsteadOfRebuilding) {
  std::vector<Vec> vs;
  {
    auto s = open();
    vs = fill(*s);
    s->query(kScope, q(vs[0], 5));
    auto st = scope_stats(*s, kScope);
    ASSERT_TRUE(st && st->hnsw);
    EXPECT_EQ(st->rebuilds, 1);
  }
  ASSERT_TRUE(std::filesystem::exists(index_file()));
  auto s = open();
  auto hits = s->query(kScope, q(vs[42], 3));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].doc_id, "d42");
  auto st = scope_stats(*s, kScope);
  EXPECT_TRUE(st->view);
  EXPECT_EQ(st->rebuilds, 0);
  EXPECT_EQ(st->index_size, 300u);
}

TEST_F(EmbeddedStoreTest, MissingOrCorruptIndexIsRebuiltWithTheSameAnswers) {
  std::vector<Vec> vs;
  std::vector<std::string> before;
  {
    auto s = open();
    vs = fill(*s);
    before = ids(s->query(kScope, q(vs[9], 10)));
  }
  auto expect_rebuilt = [&](const char* what) {
    auto s = open();
    EXPECT_EQ(ids(s->query(kScope, q(vs[9], 10))), before) << what;
    EXPECT_EQ(scope_stats(*s, kScope)->rebuilds, 1) << what;
  };
  std::filesystem::remove(index_file());
  expect_rebuilt("deleted");
  auto bytes = quarry::testing::read_file(index_file());
  ASSERT_GT(bytes.size(), 1000u);
  quarry::testing::write_file(index_file(), "garbage" + bytes.substr(7));
  expect_rebuilt("bad header");
  quarry::testing::write_file(index_file(), bytes.substr(0, bytes.size() / 2));
  expect_rebuilt("truncated");
  quarry::testing::write_file(index_file(), "");
  expect_rebuilt("empty");
}

TEST_F(EmbeddedStoreTest, SecondStoreObjectSeesCommittedWrites) {
  auto writer = open();
  auto vs = fill(*writer);
  writer->query(kScope, q(vs[0], 1));  // builds and saves the index
  auto reader = open();
  ASSERT_EQ(reader->query(kScope, q(vs[5], 1))[0].doc_id, "d5");
  EXPECT_TRUE(scope_stats(*reader, kScope)->view);

  std::mt19937 rng(99);
  Vec fresh = unit_random(rng), moved = unit_random(rng);
  writer->upsert(kScope, one("new", fresh));
  writer->upsert(kScope, one("d6", moved));  // replaced: new vector, same key
  writer->delete_document("kb", "d5");
  auto top = reader->query(kScope, q(fresh, 1));
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].doc_id, "new");
  for (const auto& h : reader->query(kScope, q(vs[5], 300))) EXPECT_NE(h.doc_id, "d5");
  auto d6 = reader->query(kScope, q(moved, 1));
  EXPECT_EQ(d6[0].doc_id, "d6");
  EXPECT_NEAR(d6[0].score, 1.0, 1e-5);
  // d6's old vector no longer finds d6 first, and d6 appears once.
  auto all = reader->query(kScope, q(vs[6], 400));
  EXPECT_EQ(all.size(), 300u);
  EXPECT_EQ(std::count_if(all.begin(), all.end(), [](auto& h) { return h.doc_id == "d6"; }), 1);
  auto st = scope_stats(*reader, kScope);
  EXPECT_EQ(st->delta, 2u);  // "new" and the new d6, scanned exactly on top of the index
  EXPECT_EQ(st->dead, 2u);   // old d5 and d6, excluded from the index
}

TEST_F(EmbeddedStoreTest, LargeDeltaIsFoldedIntoTheIndex) {
  auto s = open();
  auto vs = fill(*s, 300);
  s->query(kScope, q(vs[0], 1));
  std::mt19937 rng(5);
  std::vector<Vec> more;
  for (int i = 0; i < 1100; ++i) {
    more.push_back(unit_random(rng));
    s->upsert(kScope, one("m" + std::to_string(i), more.back()));
  }
  for (int i = 0; i < 100; ++i) s->delete_document("kb", "d" + std::to_string(i));
  auto hits = s->query(kScope, q(more[500], 5));
  EXPECT_EQ(hits[0].doc_id, "m500");
  auto st = scope_stats(*s, kScope);
  EXPECT_EQ(st->delta, 0u);
  EXPECT_EQ(st->dead, 0u);
  EXPECT_EQ(st->index_size, 1300u);
  // A fresh reader starts from the saved, extended file.
  auto r = open();
  EXPECT_EQ(r->query(kScope, q(more[7], 1))[0].doc_id, "m7");
  EXPECT_EQ(scope_stats(*r, kScope)->rebuilds, 0);
  for (const auto& h : r->query(kScope, q(vs[3], 50)))  // d0..d99 were deleted
    EXPECT_FALSE(h.doc_id[0] == 'd' && std::stoi(h.doc_id.substr(1)) < 100) << h.doc_id;
}

TEST_F(EmbeddedStoreTest, DeleteKbRemovesIndexFiles) {
  auto s = open();
  auto vs = fill(*s);
  s->query(kScope, q(vs[0], 1));
  ASSERT_TRUE(std::filesystem::exists(index_file()));
  EXPECT_EQ(s->delete_kb("kb"), 300);
  EXPECT_FALSE(std::filesystem::exists(index_file()));
  EXPECT_TRUE(s->query(kScope, q(vs[0], 1)).empty());
}

// Clustered data (like real embeddings): recall@10 of the HNSW path against exact search.
TEST_F(EmbeddedStoreTest, HnswRecallAt10) {
  constexpr int kN = 3000, kQueries = 50;
  std::mt19937 rng(7);
  std::vector<Vec> centers;
  for (int i = 0; i < 30; ++i) centers.push_back(unit_random(rng));
  std::normal_distribution<float> noise(0, 0.25f);
  auto sample = [&] {
    Vec v = centers[rng() % centers.size()];
    for (auto& x : v) x += noise(rng);
    return v;
  };
  auto s = open({{"hnsw_threshold", 500}});
  auto exact = make_memory_store();
  for (int i = 0; i < kN; i += 10) {  // 10 chunks per document
    DocumentVectors d{"d" + std::to_string(i), nlohmann::json::object(), {}};
    for (int c = 0; c < 10; ++c) d.chunks.push_back({c, "", sample(), ""});
    s->upsert(kScope, d);
    exact->upsert(kScope, d);
  }
  double found = 0;
  for (int i = 0; i < kQueries; ++i) {
    Vec v = sample();
    std::set<std::pair<std::string, int>> truth;
    for (const auto& h : exact->query(kScope, q(v, 10))) truth.emplace(h.doc_id, h.chunk_index);
    for (const auto& h : s->query(kScope, q(v, 10)))
      found += truth.count({h.doc_id, h.chunk_index});
  }
  EXPECT_TRUE(scope_stats(*s, kScope)->hnsw);
  EXPECT_GE(found / (kQueries * 10), 0.95);
}

TEST_F(EmbeddedStoreTest, QuantizedIndexesFindTheQueriedVector) {
  for (const char* quant : {"f16", "i8"}) {
    quarry::testing::TempDir dir;
    auto s = make_embedded_store({{"hnsw_threshold", 50}, {"quantization", quant}},
                                 StoreContext{dir.path().string(), {}});
    auto vs = fill(*s, 200);
    for (int i : {0, 77, 199})
      EXPECT_EQ(s->query(kScope, q(vs[static_cast<std::size_t>(i)], 1))[0].doc_id,
                "d" + std::to_string(i))
          << quant;
  }
}

TEST_F(EmbeddedStoreTest, SettingsAreValidated) {
  auto code_and_key = [&](nlohmann::json settings) -> std::pair<Code, std::string> {
    try {
      open(settings);
    } catch (const Error& e) {
      auto it = e.details().find("key");
      return {e.code(), it == e.details().end() ? "" : it->second};
    }
    return {Code::ok, ""};
  };
  EXPECT_EQ(code_and_key({{"hnsw_treshold", 5}}),
            std::make_pair(Code::invalid_argument, std::string("hnsw_treshold")));
  EXPECT_EQ(code_and_key({{"quantization", "f8"}}),
            std::make_pair(Code::invalid_argument, std::string("quantization")));
  EXPECT_EQ(code_and_key({{"connectivity", 1}}),
            std::make_pair(Code::invalid_argument, std::string("connectivity")));
  EXPECT_EQ(code_and_key({{"connectivity", 32},
                          {"expansion_add", 100},
                          {"expansion_search", 50},
                          {"quantization", "f16"},
                          {"hnsw_threshold", 10},
                          {"threads", 1}})
                .first,
            Code::ok);
  EXPECT_EQ(code_and_key(nlohmann::json::array()).first, Code::invalid_argument);
}

TEST(StoreRegistryTest, BuiltinsAndRegistration) {
  auto& reg = StoreRegistry::builtin();
  EXPECT_TRUE(reg.has("embedded"));
  EXPECT_TRUE(reg.has("memory"));
  quarry::testing::TempDir dir;
  auto s = reg.create("embedded", nlohmann::json::object(), StoreContext{dir.path().string(), {}});
  EXPECT_EQ(s->id(), "embedded");
  EXPECT_TRUE(s->is_available());
  EXPECT_EQ(reg.create("memory", {}, {})->id(), "memory");
  StoreRegistry mine;
  mine.add("x", [](const nlohmann::json&, const StoreContext&) { return make_memory_store(); });
  EXPECT_THROW(
      mine.add("x", [](const nlohmann::json&, const StoreContext&) { return make_memory_store(); }),
      Error);
  EXPECT_THROW(
      mine.add("", [](const nlohmann::json&, const StoreContext&) { return make_memory_store(); }),
      Error);
  EXPECT_THROW(reg.create("nope", {}, {}), Error);
  EXPECT_EQ(mine.ids(), std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace quarry::store::embedded
