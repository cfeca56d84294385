// chunking.segmenter (issue 27): a new KB cuts text written without spaces between ICU's words
// and counts with approx-wordpiece-v2; a KB made before the setting (its stored config has no
// such key) keeps `none`, its tokenizer and its chunking revision; setting icu on it re-cuts its
// documents blue-green like any chunking change.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "chunk/chunk_checks.h"
#include "core/kb_config.h"
#include "engine/engine_fixture.h"

namespace quarry::lifecycle::testing_support {
namespace {

using nlohmann::json;

// Chinese without a sentence end in 12 repetitions: windows must end somewhere inside it.
std::string chinese() {
  std::string s = "# 向量\n\n";
  for (int i = 0; i < 12; ++i) s += "我们使用向量数据库来存储嵌入并且检索相关的文档";
  return s + "\n";
}

using chunk::test::word_boundaries;

class SegmenterChunking : public EngineTest {
 protected:
  // How many of the document's chunk edges fall inside a word.
  int edges_inside_words(const std::string& kb, const std::string& doc) {
    const std::string md = engine->read_markdown(kb, doc);
    const auto words = word_boundaries(md);
    const auto chunks = catalog()->documents().chunks_of(ref(*catalog(), kb), doc);
    EXPECT_GE(chunks.size(), 4u);
    if (chunks.empty()) return -1;
    // Offsets count from the start of the file on disk, front matter included: the first chunk
    // (it starts at the heading, found once) says where the Markdown begins.
    const std::size_t first = md.find(chunks[0].text);
    EXPECT_NE(first, std::string::npos);
    const auto base = static_cast<std::size_t>(chunks[0].offset) - first;
    int inside = 0;
    for (const auto& c : chunks) {
      const auto b = static_cast<std::size_t>(c.offset) - base;
      const auto e = b + static_cast<std::size_t>(c.length);
      EXPECT_EQ(md.substr(b, e - b), c.text);
      inside += words.count(b) == 0;
      inside += words.count(e) == 0;
    }
    return inside;
  }
};

TEST_F(SegmenterChunking, ANewKbCutsBetweenWords) {
  engine->create_kb("new", json{{"chunking", {{"max_tokens", 24}, {"overlap_tokens", 4}}}}.dump());
  const KbInfo info = engine->describe_kb("new");
  EXPECT_EQ(info.config.chunking.segmenter, "icu");
  EXPECT_EQ(info.chunk_tokenizer, "approx-wordpiece-v2");
  const std::string doc = add("new", "zh.md", chinese()).doc_id;
  EXPECT_EQ(edges_inside_words("new", doc), 0);
}

TEST_F(SegmenterChunking, AKbFromBeforeKeepsItsRevisionUntilItOptsIn) {
  // What a KB made before the setting stores: a chunking object without `segmenter`.
  const json old_config = {
      {"chunking", {{"profile", "prose"}, {"max_tokens", 24}, {"overlap_tokens", 4}}}};
  const KbConfig stored = core::kb_config_from_json(old_config);
  EXPECT_EQ(stored.chunking.segmenter, "none");
  const std::string revision_before = core::config_revision(stored);

  json explicit_none = old_config;
  explicit_none["chunking"]["segmenter"] = "none";
  engine->create_kb("old", explicit_none.dump());
  KbInfo info = engine->describe_kb("old");
  EXPECT_EQ(info.config.chunking.segmenter, "none");
  EXPECT_EQ(info.chunk_tokenizer, "approx-wordpiece-v1");
  EXPECT_EQ(info.config_revision, revision_before) << "none is the revision it always had";
  const std::string doc = add("old", "zh.md", chinese()).doc_id;
  EXPECT_GT(edges_inside_words("old", doc), 0) << "cut as before: anywhere between characters";
  EXPECT_EQ(engine->reindex("old", {}).documents, 0);  // nothing to do: no embedder, no change

  engine->set_kb("old", {{"chunking.segmenter", "icu"}});
  info = engine->describe_kb("old");
  EXPECT_NE(info.config_revision, revision_before);
  EXPECT_EQ(info.chunk_tokenizer, "approx-wordpiece-v2");
  engine->reindex("old", {});
  EXPECT_EQ(catalog()->documents().find(ref(*catalog(), "old"), doc)->chunking,
            engine->describe_kb("old").config_revision);
  EXPECT_EQ(edges_inside_words("old", doc), 0);

  // null is the default a new KB gets; anything else is refused naming the choices.
  engine->set_kb("old", {{"chunking.segmenter", "none"}});
  EXPECT_EQ(engine->describe_kb("old").config_revision, revision_before);
  engine->set_kb("old", {{"chunking.segmenter", "null"}});
  EXPECT_EQ(engine->describe_kb("old").config.chunking.segmenter, "icu");
  try {
    engine->set_kb("old", {{"chunking.segmenter", "bigram"}});
    FAIL() << "bigram is a keyword segmenter, not a chunking one";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("icu, none"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace quarry::lifecycle::testing_support
