// Builds tiny static models (model2vec layout) on disk for the embed tests.
#pragma once

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "embed/static/half.h"
#include "embed/static/safetensors.h"
#include "test_util.h"

namespace quarry::testing {

struct TinyModel {
  // ids follow this order; [PAD] [UNK] [CLS] [SEP] come first by convention.
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "cat",    "dog",  "car",
                                    "truck", "the",   "##s",   "un",    "##able", "cafe", "中"};
  int dims = 4;
  std::string dtype = "F32";   // F32 | F16 | I8
  std::vector<float> weights;  // empty: no weights tensor
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json normalizer = {{"type", "BertNormalizer"},
                               {"clean_text", true},
                               {"handle_chinese_chars", true},
                               {"strip_accents", nullptr},
                               {"lowercase", true}};
  int max_chars = 100;

  // Row i: a distinct, deterministic vector (special tokens zero).
  std::vector<float> row(std::size_t i) const {
    std::vector<float> r(static_cast<std::size_t>(dims), 0.0f);
    if (i < 4) return r;
    for (int d = 0; d < dims; ++d)
      r[static_cast<std::size_t>(d)] = static_cast<float>(
          std::sin(static_cast<double>(i * 7 + static_cast<std::size_t>(d) * 3)));
    return r;
  }

  void write(const std::filesystem::path& dir) const {
    std::filesystem::create_directories(dir);
    using embed::TensorData;
    const std::size_t V = vocab.size(), D = static_cast<std::size_t>(dims);
    TensorData emb{"embeddings", dtype, {static_cast<std::int64_t>(V), dims}, {}};
    std::vector<TensorData> tensors;
    float scale = 1.0f / 127.0f;  // all rows are within [-1, 1]
    for (std::size_t i = 0; i < V; ++i) {
      auto r = row(i);
      for (float x : r) {
        if (dtype == "F32") {
          emb.bytes.append(reinterpret_cast<const char*>(&x), 4);
        } else if (dtype == "F16") {
          std::uint16_t h = embed::float_to_half(x);
          emb.bytes.append(reinterpret_cast<const char*>(&h), 2);
        } else {
          auto q = static_cast<std::int8_t>(std::lround(x / scale));
          emb.bytes.push_back(static_cast<char>(q));
        }
      }
    }
    (void)D;
    tensors.push_back(emb);
    if (dtype == "I8") {
      TensorData s{"scales", "F32", {1}, std::string(reinterpret_cast<const char*>(&scale), 4)};
      tensors.push_back(s);
    }
    if (!weights.empty()) {
      TensorData w{"weights", "F32", {static_cast<std::int64_t>(V)}, {}};
      for (float x : weights) w.bytes.append(reinterpret_cast<const char*>(&x), 4);
      tensors.push_back(w);
    }
    embed::write_safetensors((dir / "model.safetensors").string(), tensors);

    nlohmann::json v = nlohmann::json::object();
    for (std::size_t i = 0; i < V; ++i) v[vocab[i]] = i;
    nlohmann::json added = nlohmann::json::array();
    for (int i = 0; i < 4; ++i)
      added.push_back(
          {{"id", i}, {"content", vocab[static_cast<std::size_t>(i)]}, {"special", true}});
    nlohmann::json tok = {{"version", "1.0"},
                          {"added_tokens", added},
                          {"normalizer", normalizer},
                          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                          {"model",
                           {{"type", "WordPiece"},
                            {"unk_token", "[UNK]"},
                            {"continuing_subword_prefix", "##"},
                            {"max_input_chars_per_word", max_chars},
                            {"vocab", v}}}};
    write_file(dir / "tokenizer.json", tok.dump());
    nlohmann::json cfg = {{"model_type", "model2vec"}, {"hidden_dim", dims}, {"normalize", true}};
    cfg.update(config);
    write_file(dir / "config.json", cfg.dump());
  }
};

inline float dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace quarry::testing
