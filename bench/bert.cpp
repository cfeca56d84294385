// quarry-bench bert [--seq 128] [--batch 32] [--batches 4]
// The bert encoder's throughput (issue 8): tokens/s and sequences/s of a MiniLM-L6-shaped and a
// bge-small-shaped model (random weights of the real shapes, written in the published layout) at
// 1 and 2 threads, beside the arithmetic ceiling measured in the same run: OpenBLAS sgemm
// GFLOP/s on the encoder's own GEMM shapes, divided by the model's FLOPs per token.
//
// quarry-bench bert-text [--dataset ../shared/datasets/scifact] [--docs 300]
// The whole path on real text: a MiniLM-L6-shaped model folder with bert-base-uncased's
// tokenizer.json (written by tests/js/hf_tokenize.mjs, so node and tests/js are needed), the
// dataset's documents chunked under the model's budget (254 tokens) and embedded through the
// bert provider (tokenizer, length buckets, encoder, pooling), beside the encoder alone on
// synthetic ids of the same total, and the chunker's speed with the model's tokenizer beside
// the approximation.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>

#include "bench.h"
#include "chunk/chunker.h"
#include "embed/bert/bert_model.h"
#include "embed/provider.h"
#include "embed/static/safetensors.h"

extern "C" void openblas_set_num_threads(int);

namespace quarry::bench {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary) << s;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct ModelShape {
  const char* name;
  int hidden, layers, heads, intermediate;
};

void write_model(const fs::path& dir, const ModelShape& s) {
  fs::create_directories(dir);
  const int V = 30522, P = 512;
  json cfg = {{"model_type", "bert"},           {"vocab_size", V},
              {"hidden_size", s.hidden},        {"num_hidden_layers", s.layers},
              {"num_attention_heads", s.heads}, {"intermediate_size", s.intermediate},
              {"max_position_embeddings", P},   {"type_vocab_size", 2},
              {"layer_norm_eps", 1e-12},        {"hidden_act", "gelu"}};
  write_text(dir / "config.json", cfg.dump());
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<embed::TensorData> ts;
  auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float mean = 0) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    std::vector<float> v(n);
    for (auto& x : v) x = mean + normal(rng);
    ts.push_back({name, "F32", shape,
                  std::string(reinterpret_cast<const char*>(v.data()), n * sizeof(float))});
  };
  const std::int64_t H = s.hidden, I = s.intermediate;
  add("embeddings.word_embeddings.weight", {V, H});
  add("embeddings.position_embeddings.weight", {P, H});
  add("embeddings.token_type_embeddings.weight", {2, H});
  add("embeddings.LayerNorm.weight", {H}, 1);
  add("embeddings.LayerNorm.bias", {H});
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    for (const char* part : {"query", "key", "value"}) {
      add(p + "attention.self." + part + ".weight", {H, H});
      add(p + "attention.self." + part + ".bias", {H});
    }
    add(p + "attention.output.dense.weight", {H, H});
    add(p + "attention.output.dense.bias", {H});
    add(p + "attention.output.LayerNorm.weight", {H}, 1);
    add(p + "attention.output.LayerNorm.bias", {H});
    add(p + "intermediate.dense.weight", {I, H});
    add(p + "intermediate.dense.bias", {I});
    add(p + "output.dense.weight", {H, I});
    add(p + "output.dense.bias", {H});
    add(p + "output.LayerNorm.weight", {H}, 1);
    add(p + "output.LayerNorm.bias", {H});
  }
  embed::write_safetensors((dir / "model.safetensors").string(), ts);
}

// FLOPs per token at sequence length T: the four GEMMs of a layer plus attention.
double flops_per_token(const ModelShape& s, int T) {
  const double H = s.hidden, I = s.intermediate;
  return s.layers * (2 * H * 3 * H + 2 * H * H + 2 * 2 * H * I + 2 * 2 * T * H);
}

// sgemm GFLOP/s on the encoder's shapes (tokens x hidden times the weights, transposed).
double sgemm_gflops(int tokens, const ModelShape& s) {
  const int H = s.hidden, I = s.intermediate;
  std::vector<float> a(static_cast<std::size_t>(tokens) * I, 0.01f),
      w(static_cast<std::size_t>(I) * H * 3, 0.01f), c(static_cast<std::size_t>(tokens) * I * 3);
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, tokens, 3 * H, H, 1, a.data(), H, w.data(),
                H, 0, c.data(), 3 * H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, tokens, I, H, 1, a.data(), H, w.data(), H,
                0, c.data(), I);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, tokens, H, I, 1, a.data(), I, w.data(), I,
                0, c.data(), H);
  };
  run();
  const double flops = 2.0 * tokens * H * (3.0 * H + 2.0 * I);
  std::vector<double> rates;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = now_s();
    run();
    rates.push_back(flops / (now_s() - t0) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int run_bert(const Args& args) {
  const int T = static_cast<int>(args.num("seq", 128));
  const int B = static_cast<int>(args.num("batch", 32));
  const int batches = static_cast<int>(args.num("batches", 4));
  const fs::path root = fs::temp_directory_path() / "quarry-bench-bert";
  const ModelShape shapes[] = {{"MiniLM-L6 shape (384, 6 layers)", 384, 6, 12, 1536},
                               {"bge-small shape (384, 12 layers)", 384, 12, 12, 1536}};
  std::vector<std::string> table = {
      "| model | threads | tokens/s | sequences/s | sgemm GFLOP/s (ceiling) | MFLOP/token | "
      "ceiling tokens/s | of ceiling |",
      "|---|---:|---:|---:|---:|---:|---:|---:|"};
  std::mt19937 rng(2);
  std::uniform_int_distribution<int> id(1000, 30000);
  for (const auto& s : shapes) {
    const fs::path dir = root / std::to_string(s.layers);
    write_model(dir, s);
    auto enc = embed::BertEncoder::load(dir.string());
    std::vector<std::int32_t> ids(static_cast<std::size_t>(B) * T), mask(ids.size(), 1);
    for (auto& x : ids) x = id(rng);
    for (int threads : {1, 2}) {
      openblas_set_num_threads(1);
      enc->set_threads(threads);
      std::vector<float> out;
      enc->forward(ids, mask, B, T, out);  // warm
      std::vector<double> rates;
      for (int r = 0; r < batches; ++r) {
        const double t0 = now_s();
        enc->forward(ids, mask, B, T, out);
        rates.push_back(B * T / (now_s() - t0));
      }
      std::sort(rates.begin(), rates.end());
      const double tps = rates[rates.size() / 2];
      openblas_set_num_threads(threads);  // the ceiling: OpenBLAS's own threading
      const double gflops = sgemm_gflops(B * T, s);
      const double fpt = flops_per_token(s, T);
      const double ceiling = gflops * 1e9 / fpt;
      char row[400];
      std::snprintf(row, sizeof row, "| %s | %d | %.0f | %.1f | %.1f | %.1f | %.0f | %.0f %% |",
                    s.name, threads, tps, tps / T, gflops, fpt / 1e6, ceiling,
                    100.0 * tps / ceiling);
      table.push_back(row);
      std::cout << json{{"bench", "bert"},
                        {"model", s.name},
                        {"threads", threads},
                        {"tokens_per_s", tps},
                        {"sgemm_gflops", gflops},
                        {"ceiling_tokens_per_s", ceiling},
                        {"seq", T},
                        {"batch", B}}
                       .dump()
                << std::endl;
    }
  }
  fs::remove_all(root);
  std::cout << "\nquarry-bench bert, batch " << B << " x " << T << " tokens, medians of " << batches
            << "\n\n";
  for (const auto& r : table) std::cout << r << "\n";
  return 0;
}

int run_bert_text(const Args& args) {
  const fs::path dataset = args.get("dataset", "../shared/datasets/scifact");
  const auto max_docs = static_cast<std::size_t>(args.num("docs", 300));
  const fs::path dir = fs::temp_directory_path() / "quarry-bench-bert-text";
  fs::remove_all(dir);
  const ModelShape shape{"MiniLM-L6 shape (384, 6 layers)", 384, 6, 12, 1536};
  write_model(dir, shape);
  write_text(dir / "sentence_bert_config.json", R"({"max_seq_length": 256})");
  fs::create_directories(dir / "1_Pooling");
  write_text(dir / "1_Pooling" / "config.json", R"({"pooling_mode_mean_tokens": true})");
  write_text(dir / "empty.json", "[]");
  const std::string node = "node " + std::string(QUARRY_SOURCE_DIR) + "/tests/js/hf_tokenize.mjs " +
                           dir.string() + " " + (dir / "empty.json").string() + " > /dev/null";
  if (std::system(node.c_str()) != 0)
    throw std::runtime_error(
        "tests/js/hf_tokenize.mjs failed (node and tests/js come with "
        "scripts/setup)");

  std::vector<std::string> docs;
  std::ifstream corpus(dataset / "corpus.jsonl");
  if (!corpus) throw std::runtime_error("no corpus.jsonl in " + dataset.string());
  std::size_t bytes = 0;
  for (std::string line; docs.size() < max_docs && std::getline(corpus, line);) {
    const json d = json::parse(line);
    docs.push_back("# " + d.value("title", "") + "\n\n" + d.value("text", ""));
    bytes += docs.back().size();
  }

  auto provider = embed::ProviderRegistry::builtin().create(
      embed::ProviderSpec::parse("bert:" + dir.string()), embed::ProviderContext{});
  const auto model = provider->model_tokenizer();
  if (!model.tokenizer) throw std::runtime_error(provider->is_available().reason);
  const auto approx = chunk::make_approx_tokenizer();
  chunk::ChunkOptions opts;
  opts = chunk::within_model_limit(opts, model.max_tokens);

  // The chunker, with each tokenizer (best of 3).
  std::vector<std::string> chunks;
  auto chunk_all = [&](const chunk::Tokenizer& tok, bool keep) {
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
      const double t0 = now_s();
      for (const auto& d : docs)
        for (auto& c : chunk::chunk_markdown(d, opts, tok))
          if (keep && rep == 0) chunks.push_back(std::move(c.text));
      best = std::min(best, now_s() - t0);
    }
    return bytes / best / 1e6;
  };
  const double mb_model = chunk_all(*model.tokenizer, true);
  const double mb_approx = chunk_all(*approx, false);

  // Tokenizing alone, as the provider does it (ids with [CLS]/[SEP], truncated).
  std::size_t tokens = 0;
  double t0 = now_s();
  for (const auto& c : chunks) tokens += embed::bert_token_ids(*provider, c, false).size();
  const double tokenize_s = now_s() - t0;

  // The provider: pages of 64 chunks, as the indexer hands them over.
  provider->embed_documents({chunks.front()});  // warm
  t0 = now_s();
  for (std::size_t from = 0; from < chunks.size(); from += 64) {
    std::vector<std::string> page(
        chunks.begin() + static_cast<std::ptrdiff_t>(from),
        chunks.begin() + static_cast<std::ptrdiff_t>(std::min(chunks.size(), from + 64)));
    provider->embed_documents(page);
  }
  const double provider_s = now_s() - t0;

  // The encoder alone on synthetic ids, 32 x 128 (quarry-bench bert's shape), same threads.
  auto enc = embed::BertEncoder::load(dir.string());
  openblas_set_num_threads(1);
  const int B = 32, T = 128;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(B) * T, 2000), mask(ids.size(), 1);
  std::vector<float> out;
  enc->forward(ids, mask, B, T, out);
  std::vector<double> rates;
  for (int r = 0; r < 3; ++r) {
    const double s0 = now_s();
    enc->forward(ids, mask, B, T, out);
    rates.push_back(B * T / (now_s() - s0));
  }
  std::sort(rates.begin(), rates.end());
  const double encoder_tps = rates[1];

  const double provider_tps = static_cast<double>(tokens) / provider_s;
  std::cout << json{{"bench", "bert-text"},
                    {"documents", docs.size()},
                    {"chunks", chunks.size()},
                    {"tokens", tokens},
                    {"chunk_mb_per_s_model_tokenizer", mb_model},
                    {"chunk_mb_per_s_approx", mb_approx},
                    {"tokenize_s", tokenize_s},
                    {"provider_s", provider_s},
                    {"provider_tokens_per_s", provider_tps},
                    {"provider_chunks_per_s", static_cast<double>(chunks.size()) / provider_s},
                    {"encoder_tokens_per_s_32x128", encoder_tps}}
                   .dump()
            << std::endl;
  std::printf(
      "\nquarry-bench bert-text: %zu documents of %s, %zu chunks (budget %d tokens), %zu tokens\n\n"
      "| step | figure |\n|---|---:|\n"
      "| chunking, model tokenizer | %.1f MB/s |\n"
      "| chunking, approximation | %.1f MB/s |\n"
      "| tokenizing the chunks (ids) | %.0f chunks/s, %.1f %% of the provider's time |\n"
      "| bert provider (tokenize, bucket, encode, pool) | %.1f chunks/s, %.0f tokens/s |\n"
      "| encoder alone, 32 x 128 synthetic | %.0f tokens/s |\n"
      "| provider / encoder | %.0f %% |\n",
      docs.size(), dataset.filename().c_str(), chunks.size(), opts.max_tokens, tokens, mb_model,
      mb_approx, static_cast<double>(chunks.size()) / tokenize_s, 100.0 * tokenize_s / provider_s,
      static_cast<double>(chunks.size()) / provider_s, provider_tps, encoder_tps,
      100.0 * provider_tps / encoder_tps);
  fs::remove_all(dir);
  return 0;
}

}  // namespace quarry::bench
