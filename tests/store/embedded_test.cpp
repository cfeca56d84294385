// Embedded-store behaviour beyond the contract: durability, the derived index file (rebuilt
// when missing, corrupt or stale; memory-mapped when only read), several store objects on one
// data dir as several processes would be, recall of the HNSW path, settings.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "numbered.h"
#include "quarry/error.h"
#include "store/embedded/embedded_store.h"
#include "store/embedded/kernels.h"
#include "test_util.h"

namespace quarry::store::embedded {
using quarry::testing::numbered;
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
  return DocumentVectors{id, meta.dump(), {{0, id + "#0", std::move(v), ""}}};
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
      s.upsert(kScope, one(numbered("d", i), vs.back()));
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

// The file holds sections (codes, precise vectors, removed flags, graph) whose sizes the header
// implies: a file cut or grown anywhere, an older format, or a header for other settings is
// never mapped; the index is rebuilt with the same answers.
TEST_F(EmbeddedStoreTest, IndexFileOfWrongSizeVersionOrSettingsIsRebuilt) {
  std::vector<Vec> vs;
  std::vector<std::string> before;
  {
    auto s = open();
    vs = fill(*s);
    before = ids(s->query(kScope, q(vs[3], 10)));
  }
  auto bytes = quarry::testing::read_file(index_file());
  ASSERT_GT(bytes.size(), 300u * kDim * 5);  // codes (1 byte) + f32 copy (4 bytes) per element
  auto expect_rebuilt = [&](const std::string& content, const char* what) {
    quarry::testing::write_file(index_file(), content);
    auto s = open();
    EXPECT_EQ(ids(s->query(kScope, q(vs[3], 10))), before) << what;
    EXPECT_EQ(scope_stats(*s, kScope)->rebuilds, 1) << what;
  };
  expect_rebuilt(bytes.substr(0, 128), "header only");
  expect_rebuilt(bytes.substr(0, 128 + 300 * kDim / 2), "cut in the codes");
  expect_rebuilt(bytes.substr(0, bytes.size() - 1), "last byte missing");
  expect_rebuilt(bytes + "x", "one byte too many");
  std::string v1 = bytes;
  v1[7] = 1;  // the magic of format 1 (USearch's own dense layout)
  expect_rebuilt(v1, "format 1");
  // Same data dir, other quantization: the f32 file is not used for an f16 index.
  quarry::testing::write_file(index_file(), bytes);
  auto f16 = open({{"hnsw_threshold", 100}, {"quantization", "f16"}});
  EXPECT_EQ(f16->query(kScope, q(vs[3], 1))[0].doc_id, "d3");
  EXPECT_EQ(scope_stats(*f16, kScope)->rebuilds, 1);
}

// Answers of the HNSW path carry exact cosine scores (candidates are re-scored with the f32
// copy), and a mapped reader answers exactly like the process that built the index.
TEST_F(EmbeddedStoreTest, HnswScoresAreExactAndReadersAgree) {
  std::vector<Vec> vs;
  std::vector<StoreHit> built;
  {
    auto s = open();
    vs = fill(*s);
    built = s->query(kScope, q(vs[11], 5));
  }
  auto exact = make_memory_store();
  for (std::size_t i = 0; i < vs.size(); ++i) exact->upsert(kScope, one(numbered("d", i), vs[i]));
  auto truth = exact->query(kScope, q(vs[11], 5));
  auto s = open();
  auto mapped = s->query(kScope, q(vs[11], 5));
  ASSERT_EQ(built.size(), 5u);
  ASSERT_EQ(mapped.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(built[i].doc_id, mapped[i].doc_id);
    EXPECT_FLOAT_EQ(static_cast<float>(built[i].score), static_cast<float>(mapped[i].score));
    EXPECT_NEAR(built[i].score, truth[i].score, 1e-5) << i;
  }
  EXPECT_TRUE(scope_stats(*s, kScope)->view);
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
    s->upsert(kScope, one(numbered("m", i), more.back()));
  }
  for (int i = 0; i < 100; ++i) s->delete_document("kb", numbered("d", i));
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
    DocumentVectors d{numbered("d", i), "{}", {}};
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
      EXPECT_EQ(s->query(kScope, q(vs[static_cast<std::size_t>(i)], 1))[0].doc_id, numbered("d", i))
          << quant;
  }
}

// The f16 first pass of a large exact scan must not change its answer: near-duplicates (closer
// than f16 can tell apart) are re-scored from f32, with and without a row filter, in one part
// and in several.
TEST(ExactScan, F16FirstPassKeepsTheExactTopK) {
  constexpr std::size_t kRows = 20000, kD = 64;
  std::mt19937 rng(3);
  std::normal_distribution<float> g;
  std::vector<float> m(kRows * kD);
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t j = 0; j < kD; ++j)
      m[r * kD + j] = r % 7 == 0 && r > 0 ? m[(r - 1) * kD + j] + 1e-4f * g(rng) : g(rng);
    normalize(&m[r * kD], kD);
  }
  std::vector<std::uint16_t> half(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) half[i] = f32_to_f16(m[i]);
  std::function<bool(std::size_t)> odd = [](std::size_t r) { return r % 2 == 1; };
  for (int t = 0; t < 20; ++t) {
    std::vector<float> query(m.begin() + static_cast<long>((t * 997 % kRows) * kD),
                             m.begin() + static_cast<long>((t * 997 % kRows + 1) * kD));
    for (auto& x : query) x += 0.05f * g(rng);
    normalize(query.data(), kD);
    for (unsigned threads : {1u, 2u})
      for (bool filtered : {false, true}) {
        std::function<bool(std::size_t)> f = filtered ? odd : std::function<bool(std::size_t)>{};
        auto want = scan_topk(query.data(), m.data(), kRows, kD, 10, f, threads);
        auto got = scan_topk_f16(query.data(), half.data(), m.data(), kRows, kD, 10, f, threads);
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
          EXPECT_NEAR(got[i].distance, want[i].distance, 1e-6) << t << " " << i;
          if (std::fabs(got[i].distance - want[i].distance) > 1e-6f) continue;
          if (i + 1 < want.size() && std::fabs(want[i + 1].distance - want[i].distance) < 1e-6f)
            continue;  // a tie within float noise may come out in either order
          EXPECT_EQ(got[i].row, want[i].row) << t << " " << i;
        }
      }
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
  EXPECT_EQ(reg.create("memory", quarry::Settings(), {})->id(), "memory");
  StoreRegistry mine;
  mine.add("x", [](const quarry::Settings&, const StoreContext&) { return make_memory_store(); });
  EXPECT_THROW(mine.add("x", [](const quarry::Settings&,
                                const StoreContext&) { return make_memory_store(); }),
               Error);
  EXPECT_THROW(mine.add("", [](const quarry::Settings&,
                               const StoreContext&) { return make_memory_store(); }),
               Error);
  EXPECT_THROW(reg.create("nope", quarry::Settings(), {}), Error);
  EXPECT_EQ(mine.ids(), std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace quarry::store::embedded

namespace quarry::store::embedded {
namespace {

// Every kernel build this CPU can run gives the generic build's answer (exactly for i8, to
// float rounding otherwise), at lengths that exercise the vector bodies and their tails.
TEST(Kernels, EveryBuildAgreesWithTheGenericOne) {
  const auto v = kernel_variants();
  ASSERT_FALSE(v.dot.empty());
  ASSERT_FALSE(v.dot_i8.empty());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uf(-1, 1);
  std::uniform_int_distribution<int> ui(-127, 127);
  for (std::size_t n : {1u, 7u, 16u, 31u, 64u, 100u, 384u, 1000u}) {
    std::vector<float> a(n), b(4 * n);
    std::vector<std::int8_t> x(n), y(n);
    std::vector<std::uint16_t> h(4 * n);
    for (auto& f : a) f = uf(rng);
    for (auto& f : b) f = uf(rng);
    for (auto& i : x) i = static_cast<std::int8_t>(ui(rng));
    for (auto& i : y) i = static_cast<std::int8_t>(ui(rng));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = f32_to_f16(b[i]);
    const float tol = 1e-4f * static_cast<float>(n);
    const float ref = v.dot[0].second(a.data(), b.data(), n);
    for (const auto& [name, fn] : v.dot) EXPECT_NEAR(fn(a.data(), b.data(), n), ref, tol) << name;
    float ref4[4];
    v.dot4[0].second(a.data(), b.data(), n, ref4);
    for (const auto& [name, fn] : v.dot4) {
      float out[4];
      fn(a.data(), b.data(), n, out);
      for (int j = 0; j < 4; ++j) EXPECT_NEAR(out[j], ref4[j], tol) << name << " row " << j;
    }
    const auto iref = v.dot_i8[0].second(x.data(), y.data(), n);
    for (const auto& [name, fn] : v.dot_i8) EXPECT_EQ(fn(x.data(), y.data(), n), iref) << name;
    const float href = v.dot_f16[0].second(a.data(), h.data(), n);
    for (const auto& [name, fn] : v.dot_f16)
      EXPECT_NEAR(fn(a.data(), h.data(), n), href, tol) << name;
    if (n % 16 == 0) {
      for (const auto& [name, fn] : v.dot4_f16) {
        float out[4];
        fn(a.data(), h.data(), n, out);
        for (std::size_t j = 0; j < 4; ++j)
          EXPECT_NEAR(out[j], v.dot_f16[0].second(a.data(), h.data() + j * n, n), tol)
              << name << " row " << j;
      }
    }
  }
  std::printf("kernel builds checked: dot %zu, dot4 %zu, dot_i8 %zu, dot_f16 %zu, dot4_f16 %zu\n",
              v.dot.size(), v.dot4.size(), v.dot_i8.size(), v.dot_f16.size(), v.dot4_f16.size());
}

}  // namespace
}  // namespace quarry::store::embedded
