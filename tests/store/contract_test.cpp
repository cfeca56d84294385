// The contract every vector store passes (store_contract.h), instantiated for the built-ins:
// memory (the reference), embedded (exact scan) and embedded with a low hnsw_threshold so the
// HNSW path, its delta and its tombstones run the same tests.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <set>
#include <thread>

#include "numbered.h"
#include "quarry/error.h"
#include "store_contract.h"
#include "test_util.h"

namespace quarry::store::contract {
namespace {
using quarry::testing::numbered;

using Vec = std::vector<float>;
constexpr int kDim = 16;

Vec random_vec(std::mt19937& rng, int dim = kDim) {
  std::normal_distribution<float> g;
  Vec v(static_cast<std::size_t>(dim));
  for (auto& x : v) x = g(rng);
  return v;
}

// A point near `center` (noise relative to a unit center).
Vec near(const Vec& center, std::mt19937& rng, float noise = 0.1f) {
  std::normal_distribution<float> g(0, noise);
  double n = 0;
  for (float x : center) n += double(x) * x;
  Vec v = center;
  for (auto& x : v) x = static_cast<float>(x / std::sqrt(n)) + g(rng);
  return v;
}

DocumentVectors doc(const std::string& id, std::vector<Vec> vecs,
                    nlohmann::json meta = nlohmann::json::object()) {
  DocumentVectors d{id, meta.dump(), {}};
  for (std::size_t i = 0; i < vecs.size(); ++i)
    d.chunks.push_back({static_cast<int>(i), id + numbered("#", i), std::move(vecs[i]), ""});
  return d;
}

Scope scope(const std::string& kb, const std::string& rev = "r1") {
  return {kb, rev, kDim};
}

Query query(Vec v, int k, core::Filter f = {}) {
  Query q;
  q.vector = std::move(v);
  q.top_k = k;
  q.filter = std::move(f);
  return q;
}

double cosine_distance(const Vec& a, const Vec& b) {
  double d = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return 1 - d / std::sqrt(na * nb);
}

using quarry::testing::code_of;

TEST_P(StoreContract, UpsertThenQueryReturnsNearestFirst) {
  std::mt19937 rng(1);
  std::vector<Vec> v = {random_vec(rng), random_vec(rng), random_vec(rng)};
  for (int i = 0; i < 3; ++i) store_->upsert(scope("kb"), doc(numbered("d", i), {v[i]}));
  auto hits = store_->query(scope("kb"), query(v[1], 3));
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].doc_id, "d1");
  EXPECT_EQ(hits[0].chunk_id, "d1#0");
  EXPECT_NEAR(hits[0].score, 1.0, 1e-5);
  EXPECT_NEAR(hits[0].raw_score, 0.0, 1e-5);
  EXPECT_EQ(hits[0].metric, "cosine_distance");
  EXPECT_TRUE(store_->has(scope("kb"), "d1"));
  EXPECT_FALSE(store_->has(scope("kb"), "nope"));
  EXPECT_EQ(store_->count(scope("kb")), 3);
  EXPECT_TRUE(store_->is_available());
}

TEST_P(StoreContract, IdenticalUpsertIsSkipped) {
  std::mt19937 rng(2);
  auto d = doc("a", {random_vec(rng), random_vec(rng), random_vec(rng)});
  auto first = store_->upsert(scope("kb"), d);
  EXPECT_EQ(first.written, 3);
  EXPECT_EQ(first.skipped, 0);
  auto second = store_->upsert(scope("kb"), d);
  EXPECT_EQ(second.written, 0);
  EXPECT_EQ(second.skipped, 3);
  d.chunks[1].vector = random_vec(rng);
  auto third = store_->upsert(scope("kb"), d);
  EXPECT_EQ(third.written, 1);
  EXPECT_EQ(third.skipped, 2);
  EXPECT_EQ(store_->count(scope("kb")), 3);
}

TEST_P(StoreContract, ReplaceNeverAppends) {
  std::mt19937 rng(3);
  std::vector<Vec> five;
  for (int i = 0; i < 5; ++i) five.push_back(random_vec(rng));
  store_->upsert(scope("kb"), doc("a", five));
  for (int i = 0; i < 150; ++i)  // enough rows that the HNSW variant indexes them
    store_->upsert(scope("kb"), doc(numbered("filler", i), {random_vec(rng)}));
  store_->query(scope("kb"), query(five[0], 1));
  std::vector<Vec> two = {random_vec(rng), random_vec(rng)};
  store_->upsert(scope("kb"), doc("a", two));
  EXPECT_EQ(store_->count(scope("kb")), 152);
  auto hits = store_->query(scope("kb"), query(five[4], 200));
  std::set<int> indexes;
  for (const auto& h : hits)
    if (h.doc_id == "a") indexes.insert(h.chunk_index);
  EXPECT_EQ(indexes, (std::set<int>{0, 1}));
  auto top = store_->query(scope("kb"), query(two[1], 1));
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].doc_id, "a");
  EXPECT_EQ(top[0].chunk_index, 1);
  EXPECT_NEAR(top[0].score, 1.0, 1e-5);
}

TEST_P(StoreContract, TargetedDeletes) {
  std::mt19937 rng(4);
  for (const char* rev : {"r1", "r2"})
    for (int i = 0; i < 4; ++i)
      store_->upsert(scope("kb", rev), doc(numbered("d", i), {random_vec(rng)}));
  store_->upsert(scope("other"), doc("d1", {random_vec(rng)}));
  EXPECT_EQ(store_->delete_document("kb", "d1"), 2);  // every revision
  EXPECT_FALSE(store_->has(scope("kb", "r1"), "d1"));
  EXPECT_FALSE(store_->has(scope("kb", "r2"), "d1"));
  EXPECT_TRUE(store_->has(scope("other"), "d1"));
  for (const auto& h : store_->query(scope("kb", "r2"), query(random_vec(rng), 10)))
    EXPECT_NE(h.doc_id, "d1");
  EXPECT_EQ(store_->delete_other_revisions("kb", "r2"), 3);
  EXPECT_EQ(store_->count(scope("kb", "r1")), 0);
  EXPECT_EQ(store_->count(scope("kb", "r2")), 3);
  EXPECT_EQ(store_->delete_kb("kb"), 3);
  EXPECT_EQ(store_->count(scope("kb", "r2")), 0);
  EXPECT_TRUE(store_->query(scope("kb", "r2"), query(random_vec(rng), 10)).empty());
  EXPECT_EQ(store_->count(scope("other")), 1);
  EXPECT_EQ(store_->delete_document("kb", "never-existed"), 0);
}

TEST_P(StoreContract, DeleteWhereForgetsASubjectEverywhere) {
  std::mt19937 rng(5);
  for (const char* rev : {"r1", "r2"})
    for (int i = 0; i < 6; ++i) {
      nlohmann::json meta = i % 2 ? nlohmann::json{{"contact_id", numbered("c", i % 3)}}
                                  : nlohmann::json{{"company_id", "k1"}};
      store_->upsert(scope("kb", rev),
                     doc(numbered("d", i), {random_vec(rng), random_vec(rng)}, meta));
    }
  store_->upsert(scope("kb2"), doc("x", {random_vec(rng)}, {{"contact_id", "c1"}}));
  // d1 (c1) and d3 (c0) and d5 (c2): c1 is d1 only
  EXPECT_EQ(store_->delete_where("kb", core::parse_filter({{"contact_id", "c1"}})), 4);
  for (const char* rev : {"r1", "r2"}) {
    EXPECT_FALSE(store_->has(scope("kb", rev), "d1"));
    EXPECT_TRUE(store_->has(scope("kb", rev), "d3"));
    for (const auto& h : store_->query(scope("kb", rev), query(random_vec(rng), 100)))
      EXPECT_NE(h.doc_id, "d1");
  }
  EXPECT_TRUE(store_->has(scope("kb2"), "x"));
  EXPECT_EQ(code_of([&] { store_->delete_where("kb", core::Filter{}); }), Code::invalid_argument);
  EXPECT_EQ(store_->count(scope("kb", "r1")), 10);
}

TEST_P(StoreContract, RevisionsAreIsolated) {
  std::mt19937 rng(6);
  Vec c1 = random_vec(rng), c2 = random_vec(rng);
  for (int i = 0; i < 120; ++i) {
    store_->upsert(scope("kb", "r1"), doc(numbered("r1-", i), {near(c1, rng)}));
    store_->upsert(scope("kb", "r2"), doc(numbered("r2-", i), {near(c2, rng)}));
  }
  for (int q = 0; q < 10; ++q) {
    for (const auto& h : store_->query(scope("kb", "r1"), query(near(c2, rng), 20)))
      EXPECT_EQ(h.doc_id.rfind("r1-", 0), 0u) << h.doc_id;
    for (const auto& h : store_->query(scope("kb", "r2"), query(near(c1, rng), 20)))
      EXPECT_EQ(h.doc_id.rfind("r2-", 0), 0u) << h.doc_id;
  }
}

TEST_P(StoreContract, NoCrossKbHitsUnderConcurrentLoad) {
  constexpr int kKbs = 4;
  std::mt19937 seed_rng(7);
  std::vector<Vec> centers;
  for (int i = 0; i < kKbs; ++i) centers.push_back(random_vec(seed_rng));
  std::atomic<int> leaks{0}, queries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kKbs; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::string kb = numbered("kb", t);
      for (int op = 0; op < 300; ++op) {
        int r = static_cast<int>(rng() % 10);
        std::string id = kb + numbered("-d", rng() % 60);
        if (r < 5) {
          std::vector<Vec> vs;
          for (int c = 0, n = 1 + static_cast<int>(rng() % 3); c < n; ++c)
            vs.push_back(near(centers[static_cast<std::size_t>(t)], rng));
          store_->upsert(scope(kb), doc(id, vs));
        } else if (r < 6) {
          store_->delete_document(kb, id);
        } else {  // query near another KB's cluster: the tempting wrong answer
          const auto& other =
              centers[(static_cast<std::size_t>(t) + 1 + rng() % (kKbs - 1)) % kKbs];
          for (const auto& h : store_->query(scope(kb), query(near(other, rng), 10)))
            if (h.doc_id.rfind(kb + "-", 0) != 0) ++leaks;
          ++queries;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(leaks.load(), 0);
  EXPECT_GT(queries.load(), 0);
  for (int t = 0; t < kKbs; ++t) {
    std::string kb = numbered("kb", t);
    auto hits =
        store_->query(scope(kb), query(centers[static_cast<std::size_t>((t + 1) % kKbs)], 1000));
    EXPECT_EQ(static_cast<std::int64_t>(hits.size()), store_->count(scope(kb)));
    std::set<std::pair<std::string, int>> keys;
    for (const auto& h : hits) {
      EXPECT_EQ(h.doc_id.rfind(kb + "-", 0), 0u);
      EXPECT_TRUE(keys.emplace(h.doc_id, h.chunk_index).second) << "duplicate " << h.doc_id;
    }
  }
}

nlohmann::json random_meta(std::mt19937& rng) {
  static const char* langs[] = {"en", "fr", "de"};
  nlohmann::json m = {{"lang", langs[rng() % 3]},
                      {"year", 2015 + static_cast<int>(rng() % 10)},
                      {"rank", static_cast<double>(rng() % 1000) / 100.0},
                      {"draft", rng() % 2 == 0},
                      {"info", {{"team", rng() % 2 ? "red" : "blue"}}}};
  if (rng() % 3 == 0) m["author"] = rng() % 2 ? "ann" : "bob";
  if (rng() % 5 == 0) m["year"] = "unknown";  // a string where others have numbers
  return m;
}

TEST_P(StoreContract, FiltersAgreeWithBruteForce) {
  std::mt19937 rng(8);
  struct Row {
    std::string doc;
    int chunk;
    Vec v;
    nlohmann::json meta;
  };
  std::vector<Row> rows;
  for (int d = 0; d < 70; ++d) {
    auto meta = random_meta(rng);
    std::vector<Vec> vs = {random_vec(rng), random_vec(rng), random_vec(rng)};
    std::string id = numbered("d", d);
    for (int c = 0; c < 3; ++c) rows.push_back({id, c, vs[static_cast<std::size_t>(c)], meta});
    store_->upsert(scope("kb"), doc(id, vs, meta));
  }
  const char* filters[] = {
      R"({"lang": "en"})",
      R"({"lang": {"$eq": "fr"}})",
      R"({"lang": {"$ne": "fr"}})",
      R"({"year": {"$gt": 2020}})",
      R"({"year": {"$gte": 2020, "$lt": 2023}})",
      R"({"rank": {"$lte": 2.5}})",
      R"({"lang": {"$in": ["de", "fr"]}})",
      R"({"lang": {"$nin": ["de", "fr"]}})",
      R"({"author": {"$exists": true}})",
      R"({"author": {"$exists": false}})",
      R"({"$or": [{"author": "ann"}, {"year": 2015}]})",
      R"({"$and": [{"draft": false}, {"info.team": "red"}]})",
      R"({"lang": "en", "year": {"$ne": 2019}})",
      R"({"author": {"$ne": "bob"}})",
      R"({"lang": "xx"})",
  };
  for (const char* text : filters) {
    auto f = core::parse_filter_text(text);
    Vec qv = random_vec(rng);
    std::vector<std::pair<double, std::pair<std::string, int>>> expect;
    for (const auto& r : rows)
      if (core::filter_matches(f, r.meta))
        expect.push_back({cosine_distance(qv, r.v), {r.doc, r.chunk}});
    std::sort(expect.begin(), expect.end());
    // Every matching chunk when k covers them all ...
    auto all = store_->query(scope("kb"), query(qv, 1000, f));
    std::set<std::pair<std::string, int>> got, want;
    for (const auto& h : all) got.emplace(h.doc_id, h.chunk_index);
    for (const auto& e : expect) want.insert(e.second);
    EXPECT_EQ(got, want) << text;
    // ... and the exact nearest ones, in order, for a small k.
    auto top = store_->query(scope("kb"), query(qv, 5, f));
    ASSERT_EQ(top.size(), std::min<std::size_t>(5, expect.size())) << text;
    for (std::size_t i = 0; i < top.size(); ++i)
      EXPECT_NEAR(top[i].raw_score, expect[i].first, 1e-4) << text << " rank " << i;
  }
}

TEST_P(StoreContract, FilteredQueryReturnsKWheneverKMatch) {
  std::mt19937 rng(9);
  Vec center = random_vec(rng);
  for (int d = 0; d < 400; ++d) {
    // 12 rare chunks lie far from the query; the common ones crowd around it.
    bool rare = d % 50 == 7 || d % 50 == 21 || d % 50 == 33;
    Vec v = rare ? random_vec(rng) : near(center, rng, 0.05f);
    store_->upsert(scope("kb"), doc(numbered("d", d), {v}, {{"tag", rare ? "rare" : "common"}}));
  }
  auto f = core::parse_filter_text(R"({"tag": "rare"})");
  auto hits = store_->query(scope("kb"), query(center, 10, f));
  ASSERT_EQ(hits.size(), 10u);
  for (const auto& h : hits) {
    int d = std::stoi(h.doc_id.substr(1));
    EXPECT_TRUE(d % 50 == 7 || d % 50 == 21 || d % 50 == 33) << h.doc_id;
  }
  EXPECT_EQ(store_->query(scope("kb"), query(center, 50, f)).size(), 24u);
  auto none = core::parse_filter_text(R"({"tag": "missing"})");
  EXPECT_TRUE(store_->query(scope("kb"), query(center, 10, none)).empty());
}

TEST_P(StoreContract, DimensionMismatchNamesBothNumbers) {
  std::mt19937 rng(10);
  auto check = [](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::dimension_mismatch);
      std::string m = e.message();
      EXPECT_NE(m.find("16"), std::string::npos) << m;
      EXPECT_NE(m.find("12"), std::string::npos) << m;
    }
  };
  check([&] { store_->upsert(scope("kb"), doc("a", {random_vec(rng, 12)})); });
  store_->upsert(scope("kb"), doc("a", {random_vec(rng)}));
  check([&] { store_->query(scope("kb"), query(random_vec(rng, 12), 3)); });
  // The scope holds 16-dim vectors; a caller that claims 12 is refused too.
  check([&] { store_->upsert(Scope{"kb", "r1", 12}, doc("b", {random_vec(rng, 12)})); });
  EXPECT_EQ(store_->count(scope("kb")), 1);
}

TEST_P(StoreContract, ScoresInRangeAndOrdered) {
  std::mt19937 rng(11);
  Vec base = random_vec(rng), opposite = base;
  for (auto& x : opposite) x = -x;
  store_->upsert(scope("kb"), doc("same", {base}));
  store_->upsert(scope("kb"), doc("opposite", {opposite}));
  for (int i = 0; i < 150; ++i)
    store_->upsert(scope("kb"), doc(numbered("r", i), {random_vec(rng)}));
  auto hits = store_->query(scope("kb"), query(base, 200));
  ASSERT_EQ(hits.size(), 152u);
  EXPECT_EQ(hits.front().doc_id, "same");
  EXPECT_EQ(hits.back().doc_id, "opposite");
  EXPECT_NEAR(hits.back().score, 0.0, 1e-5);
  EXPECT_NEAR(hits.back().raw_score, 2.0, 1e-5);
  for (std::size_t i = 0; i < hits.size(); ++i) {
    EXPECT_GE(hits[i].score, 0.0);
    EXPECT_LE(hits[i].score, 1.0);
    EXPECT_NEAR(hits[i].score, cosine_score(hits[i].raw_score), 1e-9);
    if (i) {
      EXPECT_LE(hits[i].score, hits[i - 1].score);
    }
  }
}

TEST_P(StoreContract, TopKBound) {
  std::mt19937 rng(12);
  for (int i = 0; i < 8; ++i) store_->upsert(scope("kb"), doc(numbered("d", i), {random_vec(rng)}));
  EXPECT_TRUE(store_->query(scope("kb"), query(random_vec(rng), 0)).empty());
  EXPECT_EQ(store_->query(scope("kb"), query(random_vec(rng), 3)).size(), 3u);
  EXPECT_EQ(store_->query(scope("kb"), query(random_vec(rng), 50)).size(), 8u);
  EXPECT_TRUE(store_->query(scope("empty-kb"), query(random_vec(rng), 5)).empty());
}

// upsert_many: the same outcome as one upsert per document, in one call.
TEST_P(StoreContract, UpsertManyEqualsOneByOne) {
  std::mt19937 rng(13);
  std::vector<DocumentVectors> docs;
  int total = 0;
  for (int i = 0; i < 40; ++i) {
    std::vector<Vec> vecs;
    for (int c = 0; c <= i % 4; ++c) vecs.push_back(random_vec(rng));
    total += static_cast<int>(vecs.size());
    std::string id = numbered("d", i);
    docs.push_back(doc(id, vecs, {{"g", i % 3}, {"name", id}}));
  }
  auto res = store_->upsert_many(scope("kb"), docs);
  ASSERT_EQ(res.size(), docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    EXPECT_EQ(res[i].written, static_cast<int>(docs[i].chunks.size())) << i;
    EXPECT_EQ(res[i].skipped, 0) << i;
  }
  EXPECT_EQ(store_->count(scope("kb")), total);
  for (const auto& d : docs) store_->upsert(scope("kb", "r2"), d);
  EXPECT_EQ(store_->count(scope("kb", "r2")), total);
  for (const auto& d : docs)  // every stored vector is its own nearest neighbour, in both
    for (const char* rev : {"r1", "r2"}) {
      auto hits = store_->query(scope("kb", rev), query(d.chunks.back().vector, 1));
      ASSERT_EQ(hits.size(), 1u);
      EXPECT_EQ(hits[0].doc_id, d.doc_id) << rev;
      EXPECT_EQ(hits[0].chunk_index, d.chunks.back().chunk_index) << rev;
      EXPECT_EQ(hits[0].chunk_id, d.chunks.back().chunk_id) << rev;
    }

  // Again with changes: d3 shrinks from 4 chunks to 2, d1 gets a new vector for chunk 0, d2
  // new metadata only, d5 unchanged, and a new document.
  std::vector<DocumentVectors> next;
  next.push_back(docs[3]);
  next.back().chunks.resize(2);
  next.push_back(docs[1]);
  next.back().chunks[0].vector = random_vec(rng);
  next.push_back(docs[2]);
  next.back().metadata_json = nlohmann::json{{"g", 99}, {"name", "d2"}}.dump();
  next.push_back(docs[5]);
  next.push_back(doc("new", {random_vec(rng), random_vec(rng)}, {{"g", 1}, {"name", "new"}}));
  auto again = store_->upsert_many(scope("kb"), next);
  ASSERT_EQ(again.size(), 5u);
  EXPECT_EQ(again[0].written, 0);
  EXPECT_EQ(again[0].skipped, 2);
  EXPECT_EQ(again[1].written, 1);
  EXPECT_EQ(again[1].skipped, 1);
  EXPECT_EQ(again[2].written + again[2].skipped, 3);  // a store may rewrite on new metadata
  EXPECT_EQ(again[3].written, 0);
  EXPECT_EQ(again[3].skipped, 2);
  EXPECT_EQ(again[4].written, 2);
  EXPECT_EQ(store_->count(scope("kb")), total - 2 + 2);

  auto chunks_of = [&](const std::string& name) {
    std::set<int> out;
    auto f = core::parse_filter_text(R"({"name": ")" + name + R"("})");
    for (const auto& h : store_->query(scope("kb"), query(random_vec(rng), 10, f)))
      out.insert(h.chunk_index);
    return out;
  };
  EXPECT_EQ(chunks_of("d3"), (std::set<int>{0, 1}));
  EXPECT_EQ(chunks_of("new"), (std::set<int>{0, 1}));
  auto moved = store_->query(scope("kb"),
                             query(random_vec(rng), 10, core::parse_filter_text(R"({"g": 99})")));
  ASSERT_EQ(moved.size(), 3u);
  for (const auto& h : moved) EXPECT_EQ(h.doc_id, "d2");
  auto top = store_->query(scope("kb"), query(next[1].chunks[0].vector, 1));
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].doc_id, "d1");
  EXPECT_NEAR(top[0].score, 1.0, 1e-5);
  EXPECT_TRUE(store_->upsert_many(scope("kb"), {}).empty());
  EXPECT_EQ(store_->count(scope("kb")), total);
}

// Nothing of a call is written when any of its documents is refused.
TEST_P(StoreContract, UpsertManyChecksEveryDocumentFirst) {
  std::mt19937 rng(14);
  auto good = [&](const std::string& id) { return doc(id, {random_vec(rng), random_vec(rng)}); };
  std::vector<DocumentVectors> wrong_dims = {good("a"), good("b"), doc("c", {random_vec(rng, 12)})};
  EXPECT_EQ(code_of([&] { store_->upsert_many(scope("kb"), wrong_dims); }),
            Code::dimension_mismatch);
  std::vector<DocumentVectors> twice = {good("a"), good("b"), good("a")};
  EXPECT_EQ(code_of([&] { store_->upsert_many(scope("kb"), twice); }), Code::invalid_argument);
  std::vector<DocumentVectors> repeated_chunk = {good("a"), good("b")};
  repeated_chunk[1].chunks[1].chunk_index = 0;
  EXPECT_EQ(code_of([&] { store_->upsert_many(scope("kb"), repeated_chunk); }),
            Code::invalid_argument);
  EXPECT_EQ(store_->count(scope("kb")), 0);
  EXPECT_FALSE(store_->has(scope("kb"), "a"));
  // The scope holds 16 dimensions now; a batch that claims 12 is refused whole.
  store_->upsert(scope("kb"), good("z"));
  std::vector<DocumentVectors> small = {doc("s1", {random_vec(rng, 12)}),
                                        doc("s2", {random_vec(rng, 12)})};
  EXPECT_EQ(code_of([&] {
              store_->upsert_many(Scope{"kb", "r1", 12}, small);
            }),
            Code::dimension_mismatch);
  EXPECT_EQ(store_->count(scope("kb")), 2);
}

std::unique_ptr<VectorStore> memory(const std::filesystem::path&) {
  return make_memory_store();
}
std::unique_ptr<VectorStore> embedded(const std::filesystem::path& dir) {
  return make_embedded_store(nlohmann::json::object(), StoreContext{dir.string(), {}});
}
std::unique_ptr<VectorStore> embedded_hnsw(const std::filesystem::path& dir) {
  return make_embedded_store({{"hnsw_threshold", 64}, {"threads", 2}},
                             StoreContext{dir.string(), {}});
}

INSTANTIATE_TEST_SUITE_P(Builtin, StoreContract,
                         ::testing::Values(StoreUnderTest{"memory", memory},
                                           StoreUnderTest{"embedded", embedded},
                                           StoreUnderTest{"embedded_hnsw", embedded_hnsw}),
                         StoreUnderTest::name_of);

}  // namespace
}  // namespace quarry::store::contract
