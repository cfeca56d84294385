// Vector, hybrid and auto search through the Engine (SPEC §4–§6), end to end with the real
// `hash` embedder and both the in-memory and the embedded store.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "engine_fixture.h"
#include "quarry/deadline.h"

namespace quarry::lifecycle::testing_support {
namespace {
using nlohmann::json;

const char* kCats =
    "Cats purr and sleep most of the day; a kitten chases yarn and naps in sunlight.";
const char* kRockets =
    "Rockets burn liquid oxygen and kerosene; the launch vehicle reaches orbit after staging.";
const char* kBread =
    "Sourdough bread needs flour, water, salt and a starter; the dough proofs overnight.";

class EngineVectors : public EngineTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void make_kb(const std::string& name, const std::string& extra = "") {
    std::string cfg = R"({"embedder": {"provider": "hash:256"}, "store": {"id": ")" + GetParam() +
                      R"("}, "subjects": {"keys": ["team"]})" + extra + "}";
    engine->create_kb(name, cfg);
  }
  std::string add(const std::string& kb, const std::string& name, const std::string& text,
                  const std::string& team) {
    IngestOptions o;
    o.metadata_json = json{{"team", team}}.dump();
    auto item = engine->ingest_bytes(kb, name, text, o);
    // Ingest commits the keyword index; the vectors are pending until a sweep (SPEC §7).
    EXPECT_EQ(item.vector_status, "not_built");
    auto r = engine->reindex(kb, {});
    EXPECT_EQ(r.error_code, "") << r.error_message;
    EXPECT_EQ(r.pending, 0);
    EXPECT_EQ(engine->get_document(kb, item.doc_id).index_status.vector, "ready");
    return item.doc_id;
  }
  SearchResponse search(const std::string& kb, const std::string& q, const std::string& mode,
                        int k = 3, const std::string& filter = "") {
    SearchRequest r;
    r.kb = kb;
    r.query = q;
    r.mode = mode_from_name(mode);
    r.top_k = k;
    r.filter_json = filter;
    return engine->search(r);
  }
};

// Sibling windows of one oversize section count once. Candidates are completed a few at a time
// (src/search/hits.cpp), so when the first ones collapse the top is filled from further
// down the list.
TEST_P(EngineVectors, SiblingWindowsCollapseAndLaterCandidatesFillTheTop) {
  make_kb("k", R"(, "chunking": {"max_tokens": 24, "overlap_tokens": 4})");
  std::string big = "# Launch\n\n";
  for (int i = 0; i < 12; ++i)
    big +=
        "Rockets burn kerosene and reach orbit after staging, flight " + std::to_string(i) + ". ";
  const std::string rockets = add("k", "big.md", big, "a");
  const std::string cats = add("k", "cats.md", kCats, "b");
  const std::string bread = add("k", "bread.md", kBread, "c");
  ASSERT_GE(engine->get_document("k", rockets).chunk_count, 7);  // more than a batch of 5
  auto r = search("k", "rockets burn kerosene and reach orbit", "vector", 3);
  ASSERT_EQ(r.hits.size(), 3u);
  EXPECT_EQ(r.hits[0].doc_id, rockets);
  std::set<std::string> docs;
  for (const auto& h : r.hits) docs.insert(h.doc_id);
  EXPECT_EQ(docs, (std::set<std::string>{rockets, cats, bread}));
}

TEST_P(EngineVectors, VectorSearchFindsTheNearestDocumentWithCosineScores) {
  make_kb("k");
  add("k", "cats.md", kCats, "a");
  std::string rockets = add("k", "rockets.md", kRockets, "b");
  add("k", "bread.md", kBread, "c");
  auto r = search("k", "rocket launches into orbit", "vector");
  EXPECT_EQ(r.mode, Mode::vector);
  ASSERT_FALSE(r.hits.empty());
  EXPECT_EQ(r.hits[0].doc_id, rockets);
  EXPECT_EQ(r.hits[0].metric, "cosine_distance");
  EXPECT_EQ(r.hits[0].subject->value, "b");
  for (std::size_t i = 0; i < r.hits.size(); ++i) {
    EXPECT_GE(r.hits[i].score, 0);
    EXPECT_LE(r.hits[i].score, 1);
    EXPECT_NEAR(r.hits[i].score, 1 - r.hits[i].raw_score / 2, 1e-6);
    if (i) {
      EXPECT_LE(r.hits[i].score, r.hits[i - 1].score);
    }
  }
  EXPECT_EQ(r.index_status.vector, "ready");
}

TEST_P(EngineVectors, HybridFusesAndReturnsTheLabelledPerModeLists) {
  make_kb("k");
  add("k", "cats.md", kCats, "a");
  add("k", "rockets.md", kRockets, "b");
  std::string bread = add("k", "bread.md", kBread, "c");
  auto r = search("k", "sourdough starter", "hybrid");
  EXPECT_EQ(r.mode, Mode::hybrid);
  EXPECT_TRUE(r.degraded.empty());
  ASSERT_FALSE(r.hits.empty());
  EXPECT_EQ(r.hits[0].doc_id, bread);
  EXPECT_EQ(r.hits[0].metric, "interpolation");
  ASSERT_EQ(r.per_mode.size(), 2u);
  EXPECT_EQ(r.per_mode[0].first, "keyword");
  EXPECT_EQ(r.per_mode[1].first, "vector");
  EXPECT_EQ(r.per_mode[0].second[0].metric, "bm25");
  EXPECT_EQ(r.per_mode[1].second[0].metric, "cosine_distance");
  SearchRequest rrf;
  rrf.kb = "k";
  rrf.query = "sourdough starter";
  rrf.mode = Mode::hybrid;
  rrf.fusion = "rrf";
  auto rr = engine->search(rrf);
  ASSERT_FALSE(rr.hits.empty());
  EXPECT_EQ(rr.hits[0].metric, "rrf");
  EXPECT_EQ(rr.hits[0].doc_id, bread);
  EXPECT_LE(rr.hits[0].score, 1.0);
  // auto = hybrid when the embedder works
  EXPECT_EQ(search("k", "sourdough starter", "auto").mode, Mode::hybrid);
}

// Keyword candidates reach the fusion without snippets (50 are ranked for a top 10); the hits
// returned are highlighted afterwards, whichever list they came from and however deep in the
// keyword list they were.
TEST_P(EngineVectors, HybridHitsAreHighlightedWhereverTheyRankedInTheKeywordList) {
  make_kb("k");
  // "sourdough" is rare, so BM25 puts the long note first; the vector side prefers the
  // one-word note, which keyword search ranks below it.
  std::string rare = add("k", "rare.md",
                         "Sourdough aside, the notebook lists hiking routes, tide tables, "
                         "knot diagrams, bird calls, star charts and campfire recipes for "
                         "the summer trip along the northern coast.",
                         "a");
  std::string plain = add("k", "plain.md", "Starter.", "b");
  add("k", "cats.md", std::string(kCats) + " A starter of kibble.", "c");
  add("k", "rockets.md", std::string(kRockets) + " The starter motor failed.", "d");
  SearchRequest q;
  q.kb = "k";
  q.query = "sourdough starter";
  q.mode = Mode::hybrid;
  q.top_k = 1;
  q.semantic_ratio = 1.0;  // the fused order is the vector order
  auto r = engine->search(q);
  ASSERT_EQ(r.mode, Mode::hybrid);
  ASSERT_EQ(r.hits.size(), 1u);
  ASSERT_EQ(r.per_mode.size(), 2u);
  ASSERT_EQ(r.per_mode[0].second.size(), 1u);
  EXPECT_EQ(r.per_mode[0].second[0].doc_id, rare);
  EXPECT_NE(r.per_mode[0].second[0].snippet.find("**Sourdough**"), std::string::npos)
      << r.per_mode[0].second[0].snippet;
  // The fused hit is a keyword candidate below keyword's own top 1.
  EXPECT_EQ(r.hits[0].doc_id, plain);
  EXPECT_EQ(r.hits[0].snippet, "**Starter**.");
  // With both halves weighted, every hit and every per-mode hit still carries its snippet.
  q.top_k = 4;
  q.semantic_ratio = 0.5;
  r = engine->search(q);
  ASSERT_EQ(r.hits.size(), 4u);
  for (const auto* list : {&r.hits, &r.per_mode[0].second, &r.per_mode[1].second})
    for (const auto& h : *list) EXPECT_NE(h.snippet.find("**"), std::string::npos) << h.filename;
  // A per-mode hit is that mode's own hit, even when its chunk is also in the fused top.
  auto kw = search("k", "sourdough starter", "keyword", 4);
  ASSERT_EQ(r.per_mode[0].second.size(), kw.hits.size());
  for (std::size_t i = 0; i < kw.hits.size(); ++i) {
    const Hit& h = r.per_mode[0].second[i];
    EXPECT_EQ(h.doc_id, kw.hits[i].doc_id);
    EXPECT_DOUBLE_EQ(h.score, kw.hits[i].score);
    EXPECT_DOUBLE_EQ(h.raw_score, kw.hits[i].raw_score);
    EXPECT_EQ(h.metric, "bm25");
    EXPECT_EQ(h.snippet, kw.hits[i].snippet);
    EXPECT_EQ(h.heading_path, kw.hits[i].heading_path);
  }
}

TEST_P(EngineVectors, FiltersApplyToVectorHits) {
  make_kb("k");
  add("k", "cats.md", kCats, "a");
  add("k", "rockets.md", kRockets, "b");
  add("k", "bread.md", kBread, "c");
  auto r = search("k", "rocket launches into orbit", "vector", 3, R"({"team": "a"})");
  ASSERT_EQ(r.hits.size(), 1u);
  EXPECT_EQ(r.hits[0].filename, "cats.md");
}

TEST_P(EngineVectors, DeletedAndForgottenDocumentsLeaveNoVectors) {
  make_kb("k");
  std::string cats = add("k", "cats.md", kCats, "a");
  std::string rockets = add("k", "rockets.md", kRockets, "b");
  add("k", "bread.md", kBread, "c");
  engine->delete_document("k", rockets);
  engine->delete_where("k", R"({"team": "a"})");  // forget subject a
  auto r = search("k", "rocket cats orbit kitten", "vector", 10);
  for (const auto& h : r.hits) {
    EXPECT_NE(h.doc_id, rockets);
    EXPECT_NE(h.doc_id, cats);
  }
  EXPECT_EQ(r.hits.size(), 1u);
}

TEST_P(EngineVectors, AnEditReplacesTheDocumentsVectors) {
  make_kb("k");
  std::string id = add("k", "note.md", kCats, "a");
  add("k", "bread.md", kBread, "c");
  auto d = engine->edit_document("k", id, kRockets);
  EXPECT_EQ(d.index_status.vector, "not_built");  // its old vectors are of the old text
  EXPECT_EQ(engine->reindex("k", {}).documents, 1);
  auto r = search("k", "rocket launches into orbit", "vector", 1);
  ASSERT_EQ(r.hits.size(), 1u);
  EXPECT_EQ(r.hits[0].doc_id, id);
  EXPECT_NE(r.hits[0].snippet.find("ocket"), std::string::npos);
  EXPECT_EQ(engine->get_document("k", id).index_status.vector, "ready");
}

TEST_P(EngineVectors, KnowledgeBasesNeverSeeEachOthersVectors) {
  make_kb("one");
  make_kb("two");
  add("one", "cats.md", kCats, "a");
  add("two", "rockets.md", kRockets, "a");
  add("two", "bread.md", kBread, "a");
  for (const char* q : {"rocket orbit", "bread dough", "cats"}) {
    for (const auto& h : search("one", q, "vector", 10).hits) EXPECT_EQ(h.kb, "one");
    for (const auto& h : search("two", q, "vector", 10).hits) EXPECT_EQ(h.kb, "two");
  }
}

TEST_P(EngineVectors, ChangingTheEmbedderReembedsUnderTheNewRevision) {
  make_kb("k");
  add("k", "cats.md", kCats, "a");
  std::string rockets = add("k", "rockets.md", kRockets, "b");
  engine->set_kb("k", {{"embedder.provider", "hash:64"}});
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "stale");  // blue-green: old serves
  EXPECT_TRUE(engine->reindex("k", {}).cut_over);
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "ready");
  auto r = search("k", "rocket launches into orbit", "vector", 1);
  ASSERT_EQ(r.hits.size(), 1u);
  EXPECT_EQ(r.hits[0].doc_id, rockets);
  // Rechunking is a new revision too.
  engine->set_kb("k", {{"chunking.max_tokens", "64"}});
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "stale");  // blue-green as well
  EXPECT_TRUE(engine->reindex("k", {}).cut_over);
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "ready");
  EXPECT_EQ(search("k", "rocket launches into orbit", "vector", 1).hits.at(0).doc_id, rockets);
}

// A request deadline (quarry/deadline.h) stops every kind of read once it has passed, with
// Error(timeout) saying what to do; without a deadline the same calls run to the end. The
// filter is expensive on purpose: 10,000 comparisons for each of 300 documents, whose metadata
// differ so that none is evaluated only once.
TEST_P(EngineVectors, ADeadlineStopsSearchesAndWithoutOneTheSameCallsSucceed) {
  make_kb("k");
  for (int i = 0; i < 300; ++i) {
    IngestOptions o;
    o.metadata_json = json{{"team", "a"}, {"i", i}}.dump();
    engine->ingest_bytes("k", std::to_string(i) + ".md",
                         std::string(kCats) + " Number " + std::to_string(i) + ".", o);
  }
  ASSERT_EQ(engine->reindex("k", {}).pending, 0);
  json values = json::array();
  for (int v = 0; v < 1000; ++v) values.push_back(-v - 1);
  json clauses = json::array();
  for (int c = 0; c < 10; ++c) clauses.push_back({{"i", {{"$nin", values}}}});
  const std::string filter = json{{"$and", clauses}}.dump();
  GrepRequest g;
  g.kb = "k";
  g.pattern = "kitten";
  g.filter_json = filter;
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"keyword", [&] { search("k", "kitten yarn", "keyword", 5, filter); }},
      {"vector", [&] { search("k", "kitten yarn", "vector", 5, filter); }},
      {"hybrid", [&] { search("k", "kitten yarn", "hybrid", 5, filter); }},
      {"grep", [&] { engine->grep(g); }},
      {"list", [&] { engine->list_documents("k", "", 1000, filter); }},
  };
  for (const auto& [name, call] : calls) {
    std::string message;
    std::map<std::string, std::string> details;
    {
      ScopedDeadline deadline(std::chrono::milliseconds(1), "this search");
      EXPECT_EQ(code_of(call, &details, &message), Code::timeout) << name << ": " << message;
    }
    EXPECT_NE(message.find("this search took longer than its limit of 1 ms"), std::string::npos)
        << name << ": " << message;
    EXPECT_NE(message.find("--deadline"), std::string::npos) << message;
    EXPECT_EQ(details["limit_ms"], "1") << name;
    EXPECT_EQ(code_of(call), Code::ok) << name;  // no deadline: the same call runs to the end
  }
  EXPECT_EQ(search("k", "kitten yarn", "vector", 5, filter).hits.size(), 5u);
}

INSTANTIATE_TEST_SUITE_P(Stores, EngineVectors, ::testing::Values("memory", "embedded"));

TEST_F(EngineTest, WithoutAnEmbedderVectorIsAnErrorAndAutoDegradesToKeyword) {
  engine->create_kb("plain", "{}");
  engine->ingest_bytes("plain", "cats.md", kCats, {});
  SearchRequest r;
  r.kb = "plain";
  r.query = "kitten";
  r.mode = Mode::vector;
  std::map<std::string, std::string> details;
  std::string message;
  EXPECT_EQ(code_of([&] { engine->search(r); }, &details, &message), Code::mode_unavailable);
  // The message names the real fix, an embedder, not the list of modes (which would only meet
  // the next refusal), and the command that embeds afterwards.
  EXPECT_EQ(details["reason"], "no_embedder");
  EXPECT_EQ(details["field"], "embedder.provider");
  EXPECT_NE(message.find("quarry kb set plain embedder.provider=static:glove-100d"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("quarry reindex --kb plain"), std::string::npos) << message;
  EXPECT_EQ(message.find("modes="), std::string::npos) << message;
  // A mode left out of the KB's own list is fixed by listing it: the command keeps the others.
  engine->set_kb("plain", {{"modes", "keyword"}});
  r.mode = Mode::grep;
  EXPECT_EQ(code_of([&] { engine->search(r); }, &details, &message), Code::mode_unavailable);
  EXPECT_NE(message.find("quarry kb set plain modes=keyword,grep"), std::string::npos) << message;
  engine->set_kb("plain", {{"modes", "null"}});
  r.mode = Mode::automatic;
  auto resp = engine->search(r);
  EXPECT_EQ(resp.mode, Mode::keyword);
  ASSERT_EQ(resp.degraded.size(), 1u);
  EXPECT_EQ(resp.hits.size(), 1u);
}

TEST_F(EngineTest, AMissingModelKeepsDocumentsAndDegradesHybrid) {
  engine->create_kb("m", R"({"embedder": {"provider": "static:no-such-model",
               "settings": {"model_dir": "/nonexistent/model"}}, "store": "memory"})");
  auto item = engine->ingest_bytes("m", "cats.md", kCats, {});
  EXPECT_EQ(item.status, "added");
  EXPECT_EQ(item.vector_status, "not_built");
  auto sweep = engine->reindex("m", {});
  EXPECT_EQ(sweep.error_code, "engine_unavailable");
  EXPECT_EQ(sweep.pending, 1);  // kept for when the model is installed
  SearchRequest r;
  r.kb = "m";
  r.query = "kitten";
  r.mode = Mode::hybrid;
  auto resp = engine->search(r);
  EXPECT_EQ(resp.mode, Mode::keyword);
  ASSERT_EQ(resp.degraded.size(), 1u);
  EXPECT_NE(resp.degraded[0].find("embedder_unavailable"), std::string::npos);
  EXPECT_EQ(resp.hits.size(), 1u);
  r.mode = Mode::vector;
  EXPECT_EQ(code_of([&] { engine->search(r); }), Code::mode_unavailable);
}

// An embedder endpoint the SSRF guard refuses is a configuration error: KB create and change
// answer blocked_address (exit 22, HTTP 403) naming the address and the setting, instead of a
// KB whose vectors silently never build (ingest said not_built, vector search a bare
// mode_unavailable). A KB that already holds such a setting says why wherever it is looked at.
TEST_F(EngineTest, ABlockedEmbedderEndpointIsRefusedAtConfigurationAndExplainedAfter) {
  const json blocked = {{"embedder",
                         {{"provider", "openai:m"},
                          {"settings", {{"base_url", "http://10.0.0.1/v1"}, {"dimensions", 8}}}}}};
  std::map<std::string, std::string> details;
  std::string message;
  EXPECT_EQ(code_of([&] { engine->create_kb("b", blocked.dump()); }, &details, &message),
            Code::blocked_address);
  EXPECT_NE(message.find("10.0.0.1"), std::string::npos) << message;
  EXPECT_EQ(details["setting"], "embedder.settings.allow_private");
  EXPECT_EQ(code_of([&] { engine->describe_kb("b"); }), Code::not_found);  // nothing was made
  engine->create_kb("p", "{}");
  EXPECT_EQ(code_of([&] {
              engine->set_kb("p", {{"embedder.provider", "openai:m"},
                                   {"embedder.settings",
                                    R"({"base_url": "http://localhost:9/v1", "dimensions": 8})"}});
            }),
            Code::blocked_address);
  EXPECT_TRUE(engine->describe_kb("p").config.embedder.provider.empty());
  json allowed = blocked;
  allowed["embedder"]["settings"]["allow_private"] = true;
  engine->create_kb("old", allowed.dump());
  // A KB made before the check: its config holds the refused endpoint (and all else it has).
  {
    auto cat = catalog();
    catalog::AuditEntry a;
    a.actor = "tester";
    a.action = "kb.set";
    json stored = json::parse(cat->kbs().get("old").config_json);
    stored["embedder"]["settings"].erase("allow_private");
    cat->kbs().update_config(ref(*cat, "old"), stored.dump(), a);
  }
  auto item = engine->ingest_bytes("old", "a.md", "# A\n\nhello world\n", {});
  EXPECT_EQ(item.vector_status, "not_built");
  EXPECT_EQ(item.vector_code, "blocked_address");
  EXPECT_NE(item.vector_message.find("embedder.settings.allow_private"), std::string::npos);
  auto info = engine->describe_kb("old");
  EXPECT_EQ(info.vectors.unavailable_code, "blocked_address");
  EXPECT_NE(info.vectors.unavailable.find("10.0.0.1"), std::string::npos);
  SearchRequest r;
  r.kb = "old";
  r.query = "hello";
  r.mode = Mode::vector;
  EXPECT_EQ(code_of([&] { engine->search(r); }, &details, &message), Code::mode_unavailable);
  EXPECT_EQ(details["reason"], "blocked_address");
  EXPECT_NE(message.find("embedder.settings.allow_private"), std::string::npos) << message;
  r.mode = Mode::hybrid;
  auto degraded = engine->search(r);
  ASSERT_EQ(degraded.degraded.size(), 1u);
  EXPECT_EQ(degraded.degraded[0].rfind("blocked_address: ", 0), 0u) << degraded.degraded[0];
  auto sweep = engine->reindex("old", {});
  EXPECT_EQ(sweep.error_code, "blocked_address") << sweep.error_message;
}

TEST_F(EngineTest, UnknownProviderOrStoreIsRefusedAtCreate) {
  std::map<std::string, std::string> d;
  EXPECT_EQ(code_of([&] { engine->create_kb("x", R"({"embedder": "telepathy"})"); }, &d),
            Code::invalid_argument);
  EXPECT_EQ(code_of([&] { engine->create_kb("y", R"({"embedder": "hash", "store": "nope"})"); }),
            Code::invalid_argument);
  EXPECT_TRUE(engine->list_kbs().empty());
}

TEST_F(EngineTest, PluginEmbeddingModeNeedsAStoreThatEmbedsOnWrite) {
  std::string message;
  EXPECT_EQ(code_of(
                [&] {
                  engine->create_kb("p", R"({"embedder": "hash", "store": {"id": "embedded",
                               "embedding_mode": "plugin"}})");
                },
                nullptr, &message),
            Code::invalid_argument);
  EXPECT_NE(message.find("embeds on write"), std::string::npos) << message;
  // platform and auto work with the embedded store (auto = platform: it does not embed).
  engine->create_kb("q", R"({"embedder": "hash", "store": {"embedding_mode": "auto"}})");
  engine->ingest_bytes("q", "a.md", kCats, {});
  EXPECT_EQ(engine->reindex("q", {}).documents, 1);
}

TEST_F(EngineTest, OperatorEmbeddingModeComesFromTheEnvironment) {
  ::setenv("QUARRY_EMBEDDING_MODE", "plugin", 1);
  Code c = code_of([&] { engine->create_kb("e", R"({"embedder": "hash"})"); });
  ::unsetenv("QUARRY_EMBEDDING_MODE");
  EXPECT_EQ(c, Code::invalid_argument);
  // A KB's own setting overrides the operator default.
  ::setenv("QUARRY_EMBEDDING_MODE", "plugin", 1);
  c = code_of([&] {
    engine->create_kb("f", R"({"embedder": "hash", "store": {"embedding_mode": "platform"}})");
  });
  ::unsetenv("QUARRY_EMBEDDING_MODE");
  EXPECT_EQ(c, Code::ok);
}

}  // namespace
}  // namespace quarry::lifecycle::testing_support
