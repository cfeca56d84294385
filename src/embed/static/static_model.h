// A loaded static embedding model in the model2vec layout: model.safetensors (a 2-D
// "embeddings" tensor, F32/F16/BF16/I8, optional 1-D "weights" per token, optional "scales" for
// I8), tokenizer.json (WordPiece) and config.json. Immutable after load, so one instance serves
// any number of threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/static/safetensors.h"
#include "embed/static/wordpiece.h"

namespace quarry::embed {

struct StaticModelInfo {
  std::string dir;
  int dims = 0;
  std::size_t rows = 0;        // rows of the embedding matrix
  std::size_t vocab_size = 0;  // tokenizer ids
  std::string dtype;           // of the embedding tensor
  bool has_weights = false;    // a per-token "weights" tensor exists
  bool apply_sif = false;      // ... and is used (config "apply_sif", default true when present)
  int max_input_tokens = 8192;
  std::string content_hash;  // hex; config.json bytes + vocab size + dims + sif (dtype-free)
  std::map<std::string, std::uint64_t> file_sizes;
};

// The embedding matrix of a model file: the tensor named "embeddings", else the only 2-D tensor;
// null when there is none or the choice is ambiguous.
const TensorView* find_embedding_tensor(const SafetensorsFile& st);

class StaticModel {
 public:
  // Throws Error(not_found) when a file is missing, Error(corrupt_input) when one is malformed or
  // the files disagree (vocabulary larger than the matrix, dims unlike config.json, ...).
  static std::unique_ptr<StaticModel> load(const std::string& dir);

  // Mean (SIF-weighted when apply_sif) of the token vectors, skipping [UNK] and special tokens,
  // L2-normalised. A text with no known token gives the zero vector: there is nothing to say
  // about it, and a zero vector scores 0 against everything instead of pointing somewhere.
  std::vector<float> embed(std::string_view text) const;
  // The share of the text's tokens that are in the vocabulary (not [UNK]); 0 for no tokens.
  double coverage(std::string_view text) const;

  const WordPieceTokenizer& tokenizer() const { return tok_; }
  const StaticModelInfo& info() const { return info_; }
  int dims() const { return info_.dims; }

 private:
  StaticModel() = default;
  std::unique_ptr<SafetensorsFile> st_;
  const TensorView* emb_ = nullptr;
  const TensorView* weights_ = nullptr;  // null unless apply_sif
  std::vector<float> scales_;            // I8 only: one per row, or a single one
  WordPieceTokenizer tok_;
  StaticModelInfo info_;
};

}  // namespace quarry::embed
