// quarry-bench bert [--seq 128] [--batch 32] [--batches 4]
// The bert encoder's throughput (issue 8): tokens/s and sequences/s of a MiniLM-L6-shaped and a
// bge-small-shaped model (random weights of the real shapes, written in the published layout) at
// 1 and 2 threads, beside the arithmetic ceiling measured in the same run: OpenBLAS sgemm
// GFLOP/s on the encoder's own GEMM shapes, divided by the model's FLOPs per token.
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
#include "embed/bert/bert_model.h"
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

}  // namespace quarry::bench
