// The `bert` provider (SPEC §5, issue 8): tiny BERT models with random weights, written by the
// test in the published layout (config.json, model.safetensors in F32/F16/BF16, tokenizer.json,
// 1_Pooling/config.json), checked against a deliberately naive double-precision implementation
// of the same encoder written here, on padded batches; and the errors a broken folder gives.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

#include "e2e/cli_runner.h"
#include "embed/bert/bert_model.h"
#include "embed/bert_fixture.h"
#include "embed/provider.h"
#include "embed/static/half.h"
#include "embed/static/safetensors.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::embed {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

using testing_bert::kVocab;
using testing_bert::make_model;
using testing_bert::Shape;
using testing_bert::Tiny;

// --- the naive reference: one sequence, no padding, doubles, loops --------------------------

using Mat = std::vector<std::vector<double>>;

void layer_norm(std::vector<double>& x, const std::vector<double>& g,
                const std::vector<double>& b) {
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = (x[i] - mean) / std::sqrt(var + 1e-12) * g[i] + b[i];
}

// y = W x + b, W stored [out][in] row-major.
std::vector<double> dense(const std::vector<double>& W, const std::vector<double>& b,
                          const std::vector<double>& x) {
  std::vector<double> y(b.size());
  for (std::size_t o = 0; o < b.size(); ++o) {
    double acc = b[o];
    for (std::size_t i = 0; i < x.size(); ++i) acc += W[o * x.size() + i] * x[i];
    y[o] = acc;
  }
  return y;
}

std::vector<double> reference(const Tiny& m, const std::vector<std::int32_t>& ids) {
  const auto& s = m.s;
  const std::size_t H = static_cast<std::size_t>(s.hidden), T = ids.size();
  const std::size_t d = H / static_cast<std::size_t>(s.heads);
  auto W = [&](const std::string& n) -> const std::vector<double>& { return m.w.at(n); };
  Mat x(T, std::vector<double>(H));
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < H; ++i)
      x[t][i] = W("embeddings.word_embeddings.weight")[static_cast<std::size_t>(ids[t]) * H + i] +
                W("embeddings.position_embeddings.weight")[t * H + i] +
                W("embeddings.token_type_embeddings.weight")[i];
    layer_norm(x[t], W("embeddings.LayerNorm.weight"), W("embeddings.LayerNorm.bias"));
  }
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    Mat q(T), k(T), v(T);
    for (std::size_t t = 0; t < T; ++t) {
      q[t] = dense(W(p + "attention.self.query.weight"), W(p + "attention.self.query.bias"), x[t]);
      k[t] = dense(W(p + "attention.self.key.weight"), W(p + "attention.self.key.bias"), x[t]);
      v[t] = dense(W(p + "attention.self.value.weight"), W(p + "attention.self.value.bias"), x[t]);
    }
    Mat ctx(T, std::vector<double>(H, 0.0));
    for (std::size_t h = 0; h < static_cast<std::size_t>(s.heads); ++h)
      for (std::size_t i = 0; i < T; ++i) {
        std::vector<double> e(T);
        double mx = -1e300, sum = 0;
        for (std::size_t j = 0; j < T; ++j) {
          double dot = 0;
          for (std::size_t c = 0; c < d; ++c) dot += q[i][h * d + c] * k[j][h * d + c];
          e[j] = dot / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, e[j]);
        }
        for (double& z : e) sum += (z = std::exp(z - mx));
        for (std::size_t j = 0; j < T; ++j)
          for (std::size_t c = 0; c < d; ++c) ctx[i][h * d + c] += e[j] / sum * v[j][h * d + c];
      }
    for (std::size_t t = 0; t < T; ++t) {
      auto a = dense(W(p + "attention.output.dense.weight"), W(p + "attention.output.dense.bias"),
                     ctx[t]);
      for (std::size_t i = 0; i < H; ++i) x[t][i] += a[i];
      layer_norm(x[t], W(p + "attention.output.LayerNorm.weight"),
                 W(p + "attention.output.LayerNorm.bias"));
      auto in = dense(W(p + "intermediate.dense.weight"), W(p + "intermediate.dense.bias"), x[t]);
      for (double& z : in) {
        if (s.act == "relu")
          z = std::max(0.0, z);
        else if (s.act == "gelu_new")
          z = 0.5 * z * (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
        else
          z = 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
      }
      auto o = dense(W(p + "output.dense.weight"), W(p + "output.dense.bias"), in);
      for (std::size_t i = 0; i < H; ++i) x[t][i] += o[i];
      layer_norm(x[t], W(p + "output.LayerNorm.weight"), W(p + "output.LayerNorm.bias"));
    }
  }
  std::vector<double> pooled(H, 0.0);
  if (s.pooling == "cls") {
    pooled = x[0];
  } else {
    for (const auto& row : x)
      for (std::size_t i = 0; i < H; ++i) pooled[i] += row[i] / static_cast<double>(T);
  }
  double norm = 0;
  for (double z : pooled) norm += z * z;
  for (double& z : pooled) z /= std::sqrt(norm);
  return pooled;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, ref = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    ref += want[i] * want[i];
  }
  return std::sqrt(diff / ref);
}

std::unique_ptr<EmbeddingProvider> bert(const fs::path& dir, json settings = json::object()) {
  return ProviderRegistry::builtin().create(parse_spec("bert:" + dir.string(), settings),
                                            ProviderContext{});
}

class BertNumerics : public ::testing::TestWithParam<Shape> {
 protected:
  quarry::testing::TempDir tmp;
};

TEST_P(BertNumerics, PaddedBatchesMatchTheDoubleReference) {
  const Shape s = GetParam();
  Tiny m = make_model(tmp / "model", s, 20261201u + static_cast<unsigned>(s.hidden));
  auto p = bert(m.dir);
  ASSERT_TRUE(p->is_available().ok) << p->is_available().reason;
  EXPECT_EQ(p->dimensions(), s.hidden);
  const std::vector<std::string> texts = {
      "the pump",
      "The water pressure rises when the valve is open, and falls when it is closed.",
      "pumps",
      "flow of water in a pipe",
      "unable",
      "",
      "the pump the pump the pump the pump the pump the pump the pump the pump the pump the pump "
      "the pump the pump the pump the pump the pump the pump the pump the pump the pump the pump"};
  auto got = p->embed_documents(texts);  // one padded batch, lengths 2..max
  ASSERT_EQ(got.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto ids = bert_token_ids(*p, texts[i]);
    ASSERT_GE(ids.size(), 2u);
    EXPECT_LE(ids.size(), static_cast<std::size_t>(s.max_positions)) << "truncated";
    EXPECT_EQ(ids.front(), 2);  // [CLS]
    EXPECT_EQ(ids.back(), 3);   // [SEP]
    const double err = relative_error(got[i], reference(m, ids));
    EXPECT_LT(err, 1e-4) << "text " << i << " (" << ids.size() << " tokens)";
    // Alone (no padding) it is the same vector.
    auto alone = p->embed_documents({texts[i]});
    EXPECT_LT(relative_error(alone[0], reference(m, ids)), 1e-4) << "text " << i;
  }
  EXPECT_EQ(bert_token_ids(*p, "pumps"), (std::vector<std::int32_t>{2, 6, 10, 3}));
  EXPECT_EQ(p->count_tokens("pumps"), 4u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BertNumerics,
                         ::testing::Values(Shape{32, 4, 2, 64, 64, "gelu", "F32", "mean", false},
                                           Shape{48, 3, 3, 96, 16, "gelu_new", "F16", "cls", true},
                                           Shape{64, 8, 1, 128, 40, "relu", "BF16", "mean", true}),
                         [](const ::testing::TestParamInfo<Shape>& i) {
                           return std::to_string(i.param.hidden) + "_" + i.param.dtype + "_" +
                                  i.param.pooling;
                         });

TEST(BertProvider, PrefixesAreAddedPerSideAndChangeTheIdentity) {
  quarry::testing::TempDir tmp;
  make_model(tmp / "e5-tiny", {32, 4, 1, 64, 64, "gelu", "F32", "mean", false}, 7);
  auto e5 = bert(tmp / "e5-tiny");
  // e5 models get "query: " / "passage: ": the two sides differ for the same text.
  EXPECT_NE(e5->embed_query("the pump"), e5->embed_documents({"the pump"})[0]);
  auto plain = bert(tmp / "e5-tiny", {{"query_prefix", ""}, {"document_prefix", ""}});
  EXPECT_EQ(plain->embed_query("the pump"), plain->embed_documents({"the pump"})[0]);
  EXPECT_NE(plain->identity(), e5->identity());
  EXPECT_THROW(bert(tmp / "e5-tiny", {{"pooling", "cls"}}), Error);
}

Code load_error(const fs::path& dir, std::string* message = nullptr) {
  try {
    BertEncoder::load(dir.string());
  } catch (const Error& e) {
    if (message) *message = e.message();
    return e.code();
  }
  return Code::ok;
}

TEST(BertProvider, BrokenFoldersAreClearErrorsNotCrashes) {
  quarry::testing::TempDir tmp;
  const Shape s{32, 4, 1, 64, 64, "gelu", "F32", "mean", false};
  std::string msg;

  EXPECT_EQ(load_error(tmp / "nothing", &msg), Code::not_found);
  EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;

  auto m = make_model(tmp / "xlmr", s, 1);
  auto cfg = json::parse(quarry::testing::read_file(m.dir / "config.json"));
  cfg["model_type"] = "xlm-roberta";
  quarry::testing::write_file(m.dir / "config.json", cfg.dump());
  EXPECT_EQ(load_error(m.dir, &msg), Code::unsupported_format);
  EXPECT_NE(msg.find("xlm-roberta"), std::string::npos) << msg;

  auto wrong = make_model(tmp / "wrong", s, 2);
  cfg = json::parse(quarry::testing::read_file(wrong.dir / "config.json"));
  cfg["intermediate_size"] = 80;  // the file's tensors are 64 wide
  quarry::testing::write_file(wrong.dir / "config.json", cfg.dump());
  EXPECT_EQ(load_error(wrong.dir, &msg), Code::corrupt_input);
  EXPECT_NE(msg.find("intermediate.dense.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[80, 32]"), std::string::npos) << msg;

  auto layers = make_model(tmp / "layers", s, 3);
  cfg = json::parse(quarry::testing::read_file(layers.dir / "config.json"));
  cfg["num_hidden_layers"] = 2;  // the file has one
  quarry::testing::write_file(layers.dir / "config.json", cfg.dump());
  EXPECT_EQ(load_error(layers.dir, &msg), Code::corrupt_input);
  EXPECT_NE(msg.find("encoder.layer.1"), std::string::npos) << msg;

  auto heads = make_model(tmp / "heads", s, 4);
  cfg = json::parse(quarry::testing::read_file(heads.dir / "config.json"));
  cfg["num_attention_heads"] = 5;
  quarry::testing::write_file(heads.dir / "config.json", cfg.dump());
  EXPECT_EQ(load_error(heads.dir, &msg), Code::corrupt_input);

  auto trunc = make_model(tmp / "truncated", s, 5);
  auto bytes = quarry::testing::read_file(trunc.dir / "model.safetensors");
  quarry::testing::write_file(trunc.dir / "model.safetensors", bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(load_error(trunc.dir), Code::corrupt_input);

  // Through the provider: built, unavailable with the reason, embedding refused.
  auto notok = make_model(tmp / "notok", s, 6);
  fs::remove(notok.dir / "tokenizer.json");
  auto p = bert(notok.dir);
  EXPECT_FALSE(p->is_available().ok);
  EXPECT_NE(p->is_available().reason.find("tokenizer.json"), std::string::npos);
  try {
    p->embed_documents({"x"});
    ADD_FAILURE() << "embedded without a tokenizer";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::engine_unavailable);
  }
  EXPECT_THROW(ProviderRegistry::builtin().create(ProviderSpec::parse("bert"), {}), Error);
}

TEST(EmbedCommand, PrintsVectorsAndTheTokenIdsTheModelSaw) {
  quarry::testing::TempDir tmp;
  auto m = make_model(tmp / "bge-tiny", {32, 4, 2, 64, 64, "gelu", "F32", "cls", false}, 9);
  e2e::Cli cli(tmp);
  auto r =
      cli.json({"embed", "--embedder", "bert:" + m.dir.string(), "--query", "the pump", "pumps"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto p = bert(m.dir);
  EXPECT_EQ(r.json["identity"], p->identity());
  EXPECT_EQ(r.json["dimensions"], 32);
  ASSERT_EQ(r.json["items"].size(), 2u);
  // bge: the query carries its instruction, and the ids say so.
  EXPECT_EQ(r.json["items"][1]["token_ids"], json(bert_token_ids(*p, "pumps", true)));
  EXPECT_GT(r.json["items"][1]["token_ids"].size(), 4u);
  const auto want = p->embed_query("pumps");
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(r.json["items"][1]["vector"][i].get<float>(), want[i], 1e-6f);
  auto doc = cli.json({"embed", "--embedder", "bert:" + m.dir.string(), "pumps"});
  EXPECT_EQ(doc.json["items"][0]["token_ids"], json({2, 6, 10, 3}));

  auto hash = cli.json({"embed", "--embedder", "hash:16", "pumps"});
  ASSERT_EQ(hash.status, 0) << hash.err;
  EXPECT_EQ(hash.json["items"][0]["vector"].size(), 16u);
  EXPECT_FALSE(hash.json["items"][0].contains("token_ids"));

  auto missing = cli.json({"embed", "--embedder", "bert:" + (tmp / "nope").string(), "x"});
  EXPECT_EQ(missing.status, exit_status(Code::engine_unavailable));
  EXPECT_NE(missing.json["error"]["message"].get<std::string>().find("config.json"),
            std::string::npos)
      << missing.out;
}

}  // namespace
}  // namespace quarry::embed
