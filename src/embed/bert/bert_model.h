// A BERT-family encoder (SPEC §5 `bert`: MiniLM, bge, e5, gte) loaded from a model folder in the
// published layout (config.json + model.safetensors, f32 or f16) and run on the CPU: batched
// GEMMs through OpenBLAS, fused loops for softmax, GELU and layer norm, one workspace per call,
// every step split across the machine's cores.
//
// The math is BERT's post-norm encoder: embeddings (word + position + token type) and a layer
// norm; per layer multi-head self-attention with the padding mask, a residual and a layer norm,
// then the feed-forward block (GELU) with a residual and a layer norm.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace quarry::embed {

struct BertConfig {
  int vocab_size = 0;
  int hidden = 0;
  int layers = 0;
  int heads = 0;
  int intermediate = 0;
  int max_positions = 0;
  int type_vocab = 2;
  float eps = 1e-12f;
  std::string activation = "gelu";  // gelu (erf) | gelu_new / gelu_pytorch_tanh (tanh) | relu

  // Reads `<dir>/config.json`. Error(not_found) when it is missing, Error(unsupported_format)
  // for an architecture that is not BERT-style, Error(corrupt_input) for missing or bad fields;
  // each names the file and the field.
  static BertConfig load(const std::string& dir);
};

class BertEncoder {
 public:
  // Loads config.json and model.safetensors (weights named with or without a `bert.` prefix;
  // `LayerNorm.gamma/beta` accepted for weight/bias). A missing tensor or one of the wrong shape
  // is Error(corrupt_input) naming the file, the tensor and the expected shape.
  static std::unique_ptr<BertEncoder> load(const std::string& dir);
  ~BertEncoder();

  const BertConfig& config() const { return cfg_; }
  // Threads a forward pass uses (0, the default: one per core).
  void set_threads(int n) { threads_ = n; }

  // The last hidden states of a padded batch: `ids` and `mask` are batch x seq (row-major; mask
  // 1 for a real token, 0 for padding). `out` gets batch x seq x hidden floats.
  void forward(const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& mask,
               int batch, int seq, std::vector<float>& out) const;

 private:
  struct Weights;
  explicit BertEncoder(BertConfig cfg);
  BertConfig cfg_;
  std::unique_ptr<Weights> w_;
  int threads_ = 0;
};

}  // namespace quarry::embed
