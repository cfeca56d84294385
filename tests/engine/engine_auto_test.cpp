// `auto` picks keyword or hybrid per query (issue 27, docs/search.md): a query whose vector
// weight comes to nothing under adaptive weighting (here: an embedder that has vectors for none
// of its words) is answered by keyword, and the response says so.
#include <cmath>

#include "engine_fixture.h"
#include "quarry/embedding_provider.h"
#include "quarry/plugin.h"

namespace quarry::lifecycle {
namespace {
using namespace testing_support;

// An embedder that reads ASCII only: every text gets the same unit vector, and a query with any
// non-ASCII byte is one it has no vectors for.
class AsciiOnlyProvider final : public EmbeddingProvider {
 public:
  std::string id() const override { return "ascii-only"; }
  std::string model() const override { return "m"; }
  int dimensions() const override { return 4; }
  int max_input_tokens() const override { return 100000; }
  std::size_t count_tokens(std::string_view text) const override { return text.size() / 4 + 1; }
  std::string identity() const override { return "ascii-only/m/4"; }
  std::vector<std::vector<float>> embed_documents(const std::vector<std::string>& texts) override {
    return std::vector<std::vector<float>>(texts.size(), unit());
  }
  std::vector<float> embed_query(const std::string&) override { return unit(); }
  std::optional<double> query_coverage(const std::string& text) override {
    for (unsigned char c : text)
      if (c >= 0x80) return 0.0;
    return 1.0;
  }

 private:
  static std::vector<float> unit() { return {0.5f, 0.5f, 0.5f, 0.5f}; }
};

void register_once() {
  static const bool done = [] {
    register_provider("ascii-only", [](const ProviderSpec&, const ProviderContext&) {
      return std::make_unique<AsciiOnlyProvider>();
    });
    return true;
  }();
  (void)done;
}

TEST_F(EngineTest, AutoAnswersByKeywordWhenTheEmbedderCannotReadTheQuery) {
  register_once();
  engine->create_kb("k", R"({"embedder": "ascii-only:m"})");
  add("k", "zh.md", "我们使用向量数据库来存储嵌入。\n");
  add("k", "bread.md", "Sourdough bread needs flour, water and a starter.\n");
  add("k", "rockets.md", "Rockets burn liquid oxygen and kerosene.\n");
  ASSERT_EQ(engine->reindex("k", {}).pending, 0);

  SearchRequest r;
  r.kb = "k";
  r.top_k = 5;
  r.query = "sourdough starter";  // read by the model, and the lists share the bread document
  auto resp = engine->search(r);
  EXPECT_EQ(resp.mode, Mode::hybrid);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].filename, "bread.md");
  EXPECT_TRUE(resp.degraded.empty());

  r.query = "数据库";  // the model has no vector for it: keyword answers, and says so
  resp = engine->search(r);
  EXPECT_EQ(resp.mode, Mode::keyword);
  ASSERT_EQ(resp.hits.size(), 1u);
  EXPECT_EQ(resp.hits[0].filename, "zh.md");
  EXPECT_EQ(resp.hits[0].metric, "bm25");
  EXPECT_TRUE(resp.degraded.empty());  // a choice, not a failure

  // Named hybrid still fuses (with no vector weight: the keyword order), and a ratio the
  // request names is used as it is.
  r.mode = Mode::hybrid;
  resp = engine->search(r);
  EXPECT_EQ(resp.mode, Mode::hybrid);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_EQ(resp.hits[0].filename, "zh.md");
  EXPECT_EQ(resp.hits[0].metric, "interpolation");
  r.semantic_ratio = 0.5;
  resp = engine->search(r);
  ASSERT_FALSE(resp.hits.empty());
  EXPECT_NEAR(resp.hits[0].score, 0.5 + 0.5 * 1.0, 1e-9);  // first in both lists

  // Under fixed weighting auto is hybrid for every query the embedder can answer.
  engine->set_kb("k", {{"hybrid.weighting", "fixed"}});
  r.mode.reset();
  r.semantic_ratio.reset();
  EXPECT_EQ(engine->search(r).mode, Mode::hybrid);
}

}  // namespace
}  // namespace quarry::lifecycle

namespace quarry::lifecycle {
namespace {
using namespace testing_support;

// auto hints that grep matches a pattern or an identifier as written (docs/search.md); other
// queries, and a mode the caller named, get no hint.
TEST_F(EngineTest, AutoHintsAtGrepForPatternsAndIdentifiers) {
  engine->create_kb("k", "{}");
  add("k", "a.md", "# Config\n\nSet max_tokens to 256; error E1234 means the disk is full.\n");
  auto hint_of = [&](const std::string& q, std::optional<Mode> mode = std::nullopt) {
    SearchRequest r;
    r.kb = "k";
    r.query = q;
    r.mode = mode;
    return engine->search(r).hint;
  };
  for (const char* q : {"max_tokens", "E\\d+", "error.*disk", "[a-z]+_tokens", "^Set", "maxTokens",
                        "Engine::search", "open()", "tokens|disk"}) {
    const std::string h = hint_of(q);
    EXPECT_NE(h.find("grep"), std::string::npos) << q;
  }
  EXPECT_NE(hint_of("E\\d+").find("regular expression"), std::string::npos);
  EXPECT_NE(hint_of("max_tokens").find("code identifier"), std::string::npos);
  for (const char* q : {"how do I set the token budget", "disk full", "E1234", "max tokens",
                        "iso 8601 dates, e.g. 2026"}) {
    EXPECT_EQ(hint_of(q), "") << q;
  }
  EXPECT_EQ(hint_of("max_tokens", Mode::keyword), "");  // the caller chose the mode
  EXPECT_FALSE(engine
                   ->search([] {
                     SearchRequest r;
                     r.kb = "k";
                     r.query = "max_tokens";
                     return r;
                   }())
                   .hits.empty())
      << "a hint comes with the keyword answer, not instead of it";
}

}  // namespace
}  // namespace quarry::lifecycle
