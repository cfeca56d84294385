// A tiny BERT model folder in the published layout (config.json, model.safetensors in
// F32/F16/BF16, tokenizer.json, 1_Pooling/config.json) with random weights, for the bert
// provider's tests (tests/embed/bert_test.cpp) and for chunking with a model's tokenizer
// (tests/lifecycle). The weights are handed back decoded, for the double reference.
#pragma once

#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/static/half.h"
#include "embed/static/safetensors.h"
#include "test_util.h"

namespace quarry::embed::testing_bert {
using nlohmann::json;
namespace fs = std::filesystem;

inline const std::vector<std::string> kVocab = {
    "[PAD]",    "[UNK]", "[CLS]",  "[SEP]", "[MASK]", "the",    "pump",   "water", "valve",
    "pressure", "##s",   "a",      "flow",  "of",     "is",     "high",   "low",   ".",
    ",",        "##ing", "rises",  "falls", "when",   "open",   "closed", "and",   "in",
    "pipe",     "un",    "##able", "query", ":",      "passage"};

struct Shape {
  int hidden, heads, layers, intermediate, max_positions;
  std::string act, dtype, pooling;  // pooling: mean | cls
  bool prefixed;                    // tensor names under "bert."
};

// A model folder and the weights it holds (as the file stores them, decoded to double).
struct Tiny {
  Shape s;
  fs::path dir;
  std::map<std::string, std::vector<double>> w;
};

inline Tiny make_model(const fs::path& dir, const Shape& s, unsigned seed) {
  Tiny m{s, dir, {}};
  fs::create_directories(dir / "1_Pooling");
  const int V = static_cast<int>(kVocab.size()) + 2;  // config's vocab may be larger
  json cfg = {{"model_type", "bert"},
              {"architectures", {"BertModel"}},
              {"vocab_size", V},
              {"hidden_size", s.hidden},
              {"num_hidden_layers", s.layers},
              {"num_attention_heads", s.heads},
              {"intermediate_size", s.intermediate},
              {"max_position_embeddings", s.max_positions},
              {"type_vocab_size", 2},
              {"layer_norm_eps", 1e-12},
              {"hidden_act", s.act}};
  quarry::testing::write_file(dir / "config.json", cfg.dump(2));
  json vocab = json::object();
  for (std::size_t i = 0; i < kVocab.size(); ++i) vocab[kVocab[i]] = i;
  json tok = {{"version", "1.0"},
              {"normalizer",
               {{"type", "BertNormalizer"},
                {"clean_text", true},
                {"handle_chinese_chars", true},
                {"strip_accents", nullptr},
                {"lowercase", true}}},
              {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
              {"model",
               {{"type", "WordPiece"},
                {"unk_token", "[UNK]"},
                {"continuing_subword_prefix", "##"},
                {"max_input_chars_per_word", 100},
                {"vocab", vocab}}}};
  quarry::testing::write_file(dir / "tokenizer.json", tok.dump());
  quarry::testing::write_file(dir / "1_Pooling" / "config.json",
                              json{{"word_embedding_dimension", s.hidden},
                                   {"pooling_mode_cls_token", s.pooling == "cls"},
                                   {"pooling_mode_mean_tokens", s.pooling == "mean"}}
                                  .dump());

  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<TensorData> tensors;
  auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float mean = 0.0f) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    TensorData t{(s.prefixed ? "bert." : "") + name, s.dtype, shape, {}};
    std::vector<double> stored(n);
    for (std::size_t i = 0; i < n; ++i) {
      const float v = mean + normal(rng);
      if (s.dtype == "F32") {
        t.bytes.append(reinterpret_cast<const char*>(&v), 4);
        stored[i] = v;
      } else if (s.dtype == "F16") {
        const std::uint16_t h = float_to_half(v);
        t.bytes.append(reinterpret_cast<const char*>(&h), 2);
        stored[i] = half_to_float(h);
      } else {  // BF16: the top half of the float, rounded to nearest even
        std::uint32_t bits;
        std::memcpy(&bits, &v, 4);
        bits += 0x7fff + ((bits >> 16) & 1);
        const std::uint16_t b = static_cast<std::uint16_t>(bits >> 16);
        t.bytes.append(reinterpret_cast<const char*>(&b), 2);
        const std::uint32_t back = static_cast<std::uint32_t>(b) << 16;
        float f;
        std::memcpy(&f, &back, 4);
        stored[i] = f;
      }
    }
    m.w[name] = std::move(stored);
    tensors.push_back(std::move(t));
  };
  const std::int64_t H = s.hidden, I = s.intermediate;
  add("embeddings.word_embeddings.weight", {V, H});
  add("embeddings.position_embeddings.weight", {s.max_positions, H});
  add("embeddings.token_type_embeddings.weight", {2, H});
  add("embeddings.LayerNorm.weight", {H}, 1.0f);
  add("embeddings.LayerNorm.bias", {H});
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    for (const char* part : {"query", "key", "value"}) {
      add(p + "attention.self." + part + ".weight", {H, H});
      add(p + "attention.self." + part + ".bias", {H});
    }
    add(p + "attention.output.dense.weight", {H, H});
    add(p + "attention.output.dense.bias", {H});
    add(p + "attention.output.LayerNorm.weight", {H}, 1.0f);
    add(p + "attention.output.LayerNorm.bias", {H});
    add(p + "intermediate.dense.weight", {I, H});
    add(p + "intermediate.dense.bias", {I});
    add(p + "output.dense.weight", {H, I});
    add(p + "output.dense.bias", {H});
    add(p + "output.LayerNorm.weight", {H}, 1.0f);
    add(p + "output.LayerNorm.bias", {H});
  }
  add("pooler.dense.weight", {H, H});  // present in published files, unused for embeddings
  write_safetensors((dir / "model.safetensors").string(), tensors);
  return m;
}

}  // namespace quarry::embed::testing_bert
