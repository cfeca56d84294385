// Chunk budgets in the embedding model's own tokens (SPEC §3, issue 8): a KB whose embedder is
// a `bert` model folder cuts its documents with that model's WordPiece tokenizer, within the
// model's input (its max length less [CLS] and [SEP]), so no chunk is ever truncated by the
// model; switching a KB to such a model re-cuts its documents (blue-green).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/kb_config.h"
#include "embed/bert_fixture.h"
#include "embed/provider.h"
#include "engine/engine_fixture.h"
#include "lifecycle/vectors.h"

namespace quarry::lifecycle::testing_support {
namespace {

using embed::testing_bert::make_model;
using embed::testing_bert::Shape;
using nlohmann::json;

// 32 positions: 30 text tokens per chunk.
constexpr int kMaxPositions = 32;
const Shape kShape{32, 4, 1, 64, kMaxPositions, "gelu", "F32", "mean", false};

// About 420 model tokens in short paragraphs: words of the tiny vocabulary, words it splits
// into pieces ("pumps", "unable"), words it does not know ([UNK]) and punctuation.
std::string long_document() {
  std::string md = "# Pumps\n\n";
  for (int p = 0; p < 12; ++p) {
    md += "The pump is unable to open when the pressure rises, and the valves fall. ";
    md += "Water flowing in a pipe of high pressure is low when closed; pumps open. ";
    md += "Zyzzyva quokka " + std::to_string(p) + ".\n\n";
  }
  return md;
}

class ModelChunking : public EngineTest {
 protected:
  fs::path model_dir = dir / "tiny-bert";
  std::unique_ptr<embed::EmbeddingProvider> model;

  void SetUp() override {
    make_model(model_dir, kShape, 7);
    model = embed::ProviderRegistry::builtin().create(
        embed::ProviderSpec::parse("bert:" + model_dir.string()), embed::ProviderContext{});
  }

  std::string spec() const { return "bert:" + model_dir.string(); }

  // Every chunk of `doc` fits the model: its token ids (with [CLS]/[SEP]) are within the
  // model's length, so the model never cuts one short. Returns the number of chunks.
  std::size_t expect_chunks_fit(const std::string& kb, const std::string& doc) {
    const auto tokens = model->model_tokenizer();
    auto chunks = catalog()->documents().chunks_of(ref(*catalog(), kb), doc);
    for (const auto& c : chunks) {
      EXPECT_LE(tokens.tokenizer->count(c.text), tokens.max_tokens) << c.text;
      EXPECT_LT(embed::bert_token_ids(*model, c.text, false).size(),
                static_cast<std::size_t>(kMaxPositions) + 1)
          << c.text;
    }
    return chunks.size();
  }
};

TEST_F(ModelChunking, ChunksAreCutInTheModelsTokensWithinItsInput) {
  const auto tokens = model->model_tokenizer();
  ASSERT_TRUE(tokens.tokenizer);
  EXPECT_EQ(tokens.max_tokens, kMaxPositions - 2);
  const std::string md = long_document();
  const int total = tokens.tokenizer->count(md);
  ASSERT_GT(total, 400);

  engine->create_kb("b", json{{"embedder", spec()}, {"chunking", {{"max_tokens", 512}}}}.dump());
  const std::string doc = add("b", "pumps.md", md).doc_id;
  const std::size_t n = expect_chunks_fit("b", doc);
  // 512 approximate tokens would have held it whole; 30 model tokens need at least this many.
  EXPECT_GE(n, static_cast<std::size_t>(total / tokens.max_tokens));
  // The chunking revision names the tokenizer: it is not the approximation's.
  const KbInfo info = engine->describe_kb("b");
  EXPECT_NE(info.config_revision, core::config_revision(info.config));
  EXPECT_EQ(catalog()->documents().find(ref(*catalog(), "b"), doc)->chunking, info.config_revision);
  // So does the vector revision: vectors of chunks cut another way are another revision.
  EXPECT_EQ(info.revision, core::revision(info.config, model->identity(),
                                          embed::chunking_key(model->model_tokenizer())));
  EXPECT_NE(info.revision, core::revision(info.config, model->identity()));
  // describe says what chunking uses: the model's tokenizer and its capped budget.
  EXPECT_EQ(info.chunk_tokenizer, tokens.tokenizer->id());
  EXPECT_EQ(info.chunk_max_tokens, kMaxPositions - 2);
  EXPECT_EQ(info.chunk_overlap_tokens, (kMaxPositions - 2) / 2);  // 64, capped at half

  auto sweep = engine->reindex("b", {});
  EXPECT_EQ(sweep.documents, 1);
  EXPECT_EQ(sweep.failed, 0);
  EXPECT_EQ(engine->describe_kb("b").index_status.vector, "ready");
  // An edit is cut the same way.
  engine->edit_document("b", doc, md + md);
  const std::size_t edited = expect_chunks_fit("b", doc);
  EXPECT_GE(edited, 2 * n - 1);
  EXPECT_EQ(engine->reindex("b", {}).documents, 1);
  // A setting outside the revision changes nothing: no re-cut, nothing to embed.
  engine->set_kb("b", {{"limits.max_upload_bytes", "1000000"}});
  EXPECT_EQ(engine->reindex("b", {}).documents, 0);
  EXPECT_EQ(catalog()->documents().chunks_of(ref(*catalog(), "b"), doc).size(), edited);
  EXPECT_EQ(catalog()->documents().find(ref(*catalog(), "b"), doc)->chunking,
            engine->describe_kb("b").config_revision);
  EXPECT_EQ(engine->get_document("b", doc).index_status.vector, "ready");
}

TEST_F(ModelChunking, SwitchingToTheModelRecutsTheDocuments) {
  engine->create_kb("k", json{{"embedder", "hash:64"}, {"chunking", {{"max_tokens", 512}}}}.dump());
  const std::string doc = add("k", "pumps.md", long_document()).doc_id;
  ASSERT_EQ(catalog()->documents().chunks_of(ref(*catalog(), "k"), doc).size(),
            1u);  // approximate tokens: it fits whole
  EXPECT_EQ(engine->describe_kb("k").chunk_tokenizer, "approx-wordpiece-v2");
  EXPECT_EQ(engine->describe_kb("k").chunk_max_tokens, 512);
  EXPECT_EQ(engine->reindex("k", {}).documents, 1);

  engine->set_kb("k", {{"embedder.provider", spec()}});
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "stale");  // blue-green: hash serves
  EXPECT_EQ(catalog()->documents().chunks_of(ref(*catalog(), "k"), doc).size(), 1u);
  auto sweep = engine->reindex("k", {});
  EXPECT_TRUE(sweep.cut_over);
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "ready");
  EXPECT_GT(expect_chunks_fit("k", doc), 10u);
  EXPECT_EQ(engine->describe_kb("k").chunk_max_tokens, kMaxPositions - 2);
  EXPECT_EQ(catalog()->documents().find(ref(*catalog(), "k"), doc)->chunking,
            engine->describe_kb("k").config_revision);
}

// A serving snapshot and the current config that differ in chunking only use one provider (one
// copy of a local model's weights); another embedder setting gets its own.
TEST(VectorsProviders, ConfigsThatDifferOnlyInChunkingShareOneProvider) {
  quarry::testing::TempDir d;
  auto cat = catalog::Catalog::open((d / "catalog.db").string());
  Vectors vectors(d.path().string(), *cat, [](const std::string&) { return std::string(); });
  KbConfig a;
  a.embedder.provider = "hash:64";
  KbConfig b = a;
  b.chunking.max_tokens = 128;
  KbConfig c = a;
  c.embedder.provider = "hash:32";
  EXPECT_NE(&vectors.for_kb("k", a), &vectors.for_kb("k", b));
  EXPECT_EQ(vectors.for_kb("k", a).provider.get(), vectors.for_kb("k", b).provider.get());
  EXPECT_NE(vectors.for_kb("k", a).provider.get(), vectors.for_kb("k", c).provider.get());
}

}  // namespace
}  // namespace quarry::lifecycle::testing_support
