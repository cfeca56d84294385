// Keyword search in every script (issue 27): text without spaces is cut into words (ICU word
// break, or overlapping bigrams per KB), folding makes Straße ≡ strasse and full-width ≡
// ASCII, and a KB made before these settings keeps its index until one is set, then rebuilds.
#include <nlohmann/json.hpp>

#include "core/layout.h"
#include "engine_fixture.h"

namespace quarry::lifecycle {
namespace {
using namespace testing_support;

const char* kZh = "我们使用向量数据库来存储嵌入。检索时先比较向量的距离。\n";
const char* kZhTraditional = "我們使用向量資料庫來儲存嵌入。檢索時先比較向量的距離。\n";
const char* kJa = "東京の天気は晴れです。明日は雨が降るでしょう。\n";
const char* kMixed = "使用 PostgreSQL 的 pgvector 扩展和 HNSW 索引来加速检索。\n";
const char* kGerman = "Die Straße führt am Café vorbei.\n";
const char* kWidth = "Der Code ＡＢＣ１２３ steht auf dem Etikett, daneben ｶﾀｶﾅ.\n";

class LanguagesTest : public EngineTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    engine->create_kb("k", R"({"keyword": {"segmenter": ")" + GetParam() + R"("}})");
    add("k", "zh.md", kZh);
    add("k", "zht.md", kZhTraditional);
    add("k", "ja.md", kJa);
    add("k", "mixed.md", kMixed);
    add("k", "de.md", kGerman);
    add("k", "width.md", kWidth);
  }
  std::string doc_of(const std::string& file) {
    for (const auto& d : all_documents("k"))
      if (d.filename == file) return d.id;
    return "";
  }
  // The filenames of the documents a keyword query finds, best first.
  std::vector<std::string> files(const std::string& query, bool advanced = false) {
    SearchRequest r;
    r.kb = "k";
    r.query = query;
    r.mode = Mode::keyword;
    r.top_k = 20;
    r.advanced = advanced;
    std::vector<std::string> out;
    for (const auto& h : engine->search(r).hits)
      if (std::find(out.begin(), out.end(), h.filename) == out.end()) out.push_back(h.filename);
    return out;
  }
  bool finds(const std::string& query, const std::string& file, bool advanced = false) {
    auto f = files(query, advanced);
    return std::find(f.begin(), f.end(), file) != f.end();
  }
};

TEST_P(LanguagesTest, ChineseWordsInsideASentenceAreFound) {
  EXPECT_TRUE(finds("向量", "zh.md"));
  EXPECT_TRUE(finds("数据库", "zh.md"));
  EXPECT_TRUE(finds("存储嵌入", "zh.md"));  // a query typed without spaces
  EXPECT_FALSE(finds("数据库", "ja.md"));
  EXPECT_FALSE(finds("天气", "zh.md"));  // Simplified 天气 is not in any document
}

TEST_P(LanguagesTest, TraditionalChineseIsFoundLikeSimplified) {
  EXPECT_TRUE(finds("資料庫", "zht.md"));
  EXPECT_TRUE(finds("儲存", "zht.md"));
  EXPECT_EQ(files("儲存")[0], "zht.md");
}

TEST_P(LanguagesTest, JapaneseWordsAreFound) {
  EXPECT_TRUE(finds("天気", "ja.md"));
  EXPECT_TRUE(finds("東京", "ja.md"));
  EXPECT_TRUE(finds("明日の雨", "ja.md"));
  EXPECT_FALSE(finds("天気", "zh.md"));
}

TEST_P(LanguagesTest, EnglishTermsInsideChineseStaySearchable) {
  EXPECT_TRUE(finds("pgvector", "mixed.md"));
  EXPECT_TRUE(finds("postgresql", "mixed.md"));
  EXPECT_TRUE(finds("HNSW 索引", "mixed.md"));
  EXPECT_EQ(files("pgvector").size(), 1u);
}

TEST_P(LanguagesTest, CaseAndWidthFolding) {
  EXPECT_TRUE(finds("strasse", "de.md"));
  EXPECT_TRUE(finds("STRASSE", "de.md"));
  EXPECT_TRUE(finds("Straße", "de.md"));
  EXPECT_TRUE(finds("cafe", "de.md"));  // diacritics fold by default
  EXPECT_TRUE(finds("abc123", "width.md"));
  EXPECT_TRUE(finds("ＡＢＣ１２３", "width.md"));
  EXPECT_TRUE(finds("カタカナ", "width.md"));  // half-width katakana ≡ full-width
}

TEST_P(LanguagesTest, APhraseStillMeansAdjacency) {
  EXPECT_TRUE(finds("\"向量数据库\"", "zh.md", true));
  EXPECT_TRUE(finds("\"数据库\"", "zh.md", true));
  // Both words are in zh.md, but not next to each other in this order.
  EXPECT_FALSE(finds("\"数据库 向量\"", "zh.md", true));
  EXPECT_TRUE(finds("向量 AND 距离", "zh.md", true));
  EXPECT_FALSE(finds("向量 NOT 距离", "zh.md", true));
}

TEST_P(LanguagesTest, SnippetsHighlightTheWordsFound) {
  SearchRequest r;
  r.kb = "k";
  r.query = "数据库";
  r.mode = Mode::keyword;
  auto hits = engine->search(r).hits;
  ASSERT_FALSE(hits.empty());
  EXPECT_NE(hits[0].snippet.find("**数据库**"), std::string::npos) << hits[0].snippet;
  ASSERT_FALSE(hits[0].highlights.empty());
  r.query = "天気";
  hits = engine->search(r).hits;
  ASSERT_FALSE(hits.empty());
  EXPECT_NE(hits[0].snippet.find("**天気**"), std::string::npos) << hits[0].snippet;
}

// Function words (の, は, 的, ...) are dropped from queries like English stopwords: they are
// neither searched for nor highlighted, unless a query holds nothing else.
TEST_P(LanguagesTest, FunctionWordsAreNotSearchedForUnlessAlone) {
  SearchRequest r;
  r.kb = "k";
  r.mode = Mode::keyword;
  r.query = "東京の天気";
  auto hits = engine->search(r).hits;
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].filename, "ja.md");
  if (GetParam() != "icu") return;  // bigrams hold no lone particle to drop or find
  EXPECT_EQ(hits[0].snippet.rfind("**東京**の**天気**は", 0), 0u) << hits[0].snippet;
  // A query made only of function words still searches for them.
  EXPECT_TRUE(finds("的", "zh.md"));
  EXPECT_TRUE(finds("の", "ja.md"));
}

TEST_P(LanguagesTest, TheInMemoryCopyRanksAsTheIndexDoes) {
  // The first query reads the FTS5 index; later ones may be answered by the in-memory copy
  // built on a KB's second query: both must cut the words the same way.
  for (const char* q : {"向量", "数据库 向量", "天気", "strasse", "abc123", "pgvector 检索"}) {
    auto first = files(q);
    auto second = files(q);
    auto third = files(q);
    EXPECT_FALSE(first.empty()) << q;
    EXPECT_EQ(first, second) << q;
    EXPECT_EQ(first, third) << q;
  }
}

INSTANTIATE_TEST_SUITE_P(Segmenters, LanguagesTest, ::testing::Values("icu", "bigram"));

TEST_F(EngineTest, DiacriticsKeepTellsCafeFromCafé) {
  engine->create_kb("k", R"({"keyword": {"diacritics": "keep"}})");
  add("k", "de.md", kGerman);
  EXPECT_EQ(hit_docs("k", "café").size(), 1u);
  EXPECT_TRUE(hit_docs("k", "cafe").empty());
  EXPECT_EQ(hit_docs("k", "strasse").size(), 1u);  // case folding is not optional
}

TEST_F(EngineTest, KeywordSettingsAreValidatedAndShown) {
  EXPECT_EQ(code_of([&] { engine->create_kb("a", R"({"keyword": {"segmenter": "mecab"}})"); }),
            Code::invalid_argument);
  EXPECT_EQ(code_of([&] { engine->create_kb("b", R"({"keyword": {"diacritics": "x"}})"); }),
            Code::invalid_argument);
  EXPECT_EQ(code_of([&] { engine->create_kb("c", R"({"keyword": {"stemmer": "x"}})"); }),
            Code::invalid_argument);
  auto info = engine->create_kb("k", "");
  EXPECT_EQ(info.config.keyword.segmenter, "icu");
  EXPECT_EQ(info.config.keyword.diacritics, "fold");
  info = engine->set_kb("k", {{"keyword.segmenter", "bigram"}});
  EXPECT_EQ(info.config.keyword.segmenter, "bigram");
  info = engine->set_kb("k", {{"keyword.segmenter", "null"}});
  EXPECT_EQ(info.config.keyword.segmenter, "icu");
}

TEST_F(EngineTest, ChangingTheSegmenterRebuildsTheIndexWithNothingLost) {
  engine->create_kb("k", R"({"keyword": {"segmenter": "icu"}})");
  add("k", "zh.md", kZh);
  add("k", "en.md", "Capybaras live near rivers.\n");
  ASSERT_EQ(hit_docs("k", "数据库").size(), 1u);
  engine->set_kb("k", {{"keyword.segmenter", "bigram"}});
  EXPECT_EQ(hit_docs("k", "数据库").size(), 1u);
  EXPECT_EQ(hit_docs("k", "capybara").size(), 1u);
  engine->set_kb("k", {{"keyword.diacritics", "keep"}});
  EXPECT_EQ(hit_docs("k", "据库").size(), 1u);  // a bigram of the document
  EXPECT_EQ(hit_docs("k", "rivers").size(), 1u);
}

// A KB made before keyword settings existed (schema v8): its config has no `keyword`, its
// index was built by the one tokenizer every KB had. Made here as migration v9 leaves it.
TEST_F(EngineTest, AKbFromBeforeKeepsItsIndexUntilASettingRebuildsIt) {
  engine->create_kb("k", "");
  add("k", "zh.md", kZh);
  add("k", "en.md", "Capybaras live near rivers.\n");
  {
    // What migration v9 leaves of a v8 KB: no `keyword` in its config, and an index built by
    // the tokenizer every KB had (update_config rebuilds it with that one).
    auto c = catalog();
    const catalog::KbRow row = c->kbs().get("k");
    auto stored = nlohmann::json::parse(row.config_json);
    ASSERT_TRUE(stored.contains("keyword"));
    stored.erase("keyword");
    c->kbs().update_config(row.ref(), stored.dump(), {"tester", "library", "kb.update", "k", "k"});
  }
  engine.reset();
  engine = open_engine();
  // The old index answers as it always did: English yes, a Chinese word inside a sentence no.
  EXPECT_EQ(hit_docs("k", "capybara").size(), 1u);
  EXPECT_TRUE(hit_docs("k", "数据库").empty());
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.config.keyword.segmenter, "");  // shown as made before the setting
  // A new document goes into the same (old) index, cut the same way as the query.
  add("k", "en2.md", "Rivers flood in spring.\n");
  EXPECT_EQ(hit_docs("k", "rivers").size(), 2u);
  // Choosing a segmenter rebuilds the index: every document is found, now CJK too.
  info = engine->set_kb("k", {{"keyword.segmenter", "icu"}});
  EXPECT_EQ(info.config.keyword.segmenter, "icu");
  EXPECT_EQ(info.config.keyword.diacritics, "fold");
  EXPECT_EQ(hit_docs("k", "数据库").size(), 1u);
  EXPECT_EQ(hit_docs("k", "rivers").size(), 2u);
  EXPECT_EQ(hit_docs("k", "capybara").size(), 1u);
}

}  // namespace
}  // namespace quarry::lifecycle
