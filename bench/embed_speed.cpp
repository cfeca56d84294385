// quarry-bench embed-speed [--model-dir DIR] [--threads 1|2] [--texts N] [--dataset DIR]
//
// Throughput of the local embedders (`static` with a model folder, `hash`) on realistic text:
// the SciFact corpus (title + abstract) when present. Tokens are each provider's own count
// (WordPiece for static, words for hash). Each configuration runs 3 times; the median is shown.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "beir.h"
#include "bench.h"
#include "embed/provider.h"

namespace quarry::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> load_texts(const std::string& dataset, std::size_t n) {
  std::vector<std::string> texts;
  if (std::filesystem::exists(dataset + "/corpus.jsonl")) {
    auto ds = load_dataset(dataset);
    for (const auto& d : ds.corpus) {
      if (texts.size() >= n) break;
      texts.push_back(d.title + "\n" + d.text);
    }
  }
  if (texts.empty()) {  // no dataset: a fixed, varied synthetic text so the run still works
    std::fprintf(stderr, "embed-speed: %s/corpus.jsonl not found, using synthetic text\n",
                 dataset.c_str());
    const char* words[] = {"protein",   "cells",    "patients",   "the",     "of",
                           "increased", "risk",     "expression", "study",   "clinical",
                           "analysis",  "were",     "and",        "in",      "mutations",
                           "tumour",    "response", "Café",       "déjà-vu", "(p<0.05)"};
    for (std::size_t i = 0; i < n; ++i) {
      std::string t;
      for (std::size_t k = 0; k < 200; ++k) t += std::string(words[(i * 31 + k * 7) % 20]) + " ";
      texts.push_back(t);
    }
  }
  return texts;
}

struct Result {
  std::string provider;
  int threads = 1;
  std::size_t texts = 0, tokens = 0;
  double seconds = 0;
};

double run_once(embed::EmbeddingProvider& p, const std::vector<std::string>& texts, int threads) {
  auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<std::string> batch;
      for (std::size_t i = static_cast<std::size_t>(t); i < texts.size();
           i += static_cast<std::size_t>(threads)) {
        batch.push_back(texts[i]);
        if (batch.size() == 32) {
          p.embed_documents(batch);
          batch.clear();
        }
      }
      if (!batch.empty()) p.embed_documents(batch);
    });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int run_embed_speed(const Args& args) {
  const auto n = static_cast<std::size_t>(args.num("texts", 2000));
  const std::string dataset = args.get("dataset", "/work/shared/datasets/scifact");
  const std::string model_dir = args.get("model-dir", ".deps/models/glove-100d");
  std::vector<int> thread_counts = {1, 2};
  if (args.kv.count("threads")) thread_counts = {static_cast<int>(args.num("threads", 1))};

  auto texts = load_texts(dataset, n);
  std::size_t bytes = 0;
  for (const auto& t : texts) bytes += t.size();

  std::vector<std::pair<std::string, std::unique_ptr<embed::EmbeddingProvider>>> providers;
  auto& reg = embed::ProviderRegistry::builtin();
  auto stat = reg.create(embed::parse_spec("static:glove-100d", {{"model_dir", model_dir}}), {});
  auto t_load = Clock::now();
  auto av = stat->is_available();  // loads the model: timed separately from embedding
  double load_s = std::chrono::duration<double>(Clock::now() - t_load).count();
  if (av.ok)
    providers.emplace_back("static:glove-100d", std::move(stat));
  else
    std::fprintf(stderr, "embed-speed: skipping static: %s\n", av.reason.c_str());
  providers.emplace_back("hash:256", reg.create(embed::ProviderSpec::parse("hash:256"), {}));

  std::vector<Result> results;
  for (auto& [name, p] : providers) {
    std::size_t tokens = 0;
    for (const auto& t : texts) tokens += p->count_tokens(t);
    run_once(*p,
             std::vector<std::string>(texts.begin(),
                                      texts.begin() + std::min<std::size_t>(50, texts.size())),
             1);
    for (int th : thread_counts) {
      std::vector<double> runs;
      for (int r = 0; r < 3; ++r) runs.push_back(run_once(*p, texts, th));
      results.push_back({name, th, texts.size(), tokens, percentile(runs, 50)});
    }
  }

  std::printf("embed-speed: %zu texts (%.1f MB) from %s; static model load %.2f s\n\n",
              texts.size(), static_cast<double>(bytes) / 1e6, dataset.c_str(), load_s);
  std::printf("| provider | threads | texts | tokens | median s | texts/s | tokens/s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : results) {
    double tps = static_cast<double>(r.tokens) / r.seconds;
    double dps = static_cast<double>(r.texts) / r.seconds;
    std::printf("| %s | %d | %zu | %zu | %.3f | %.0f | %.0f |\n", r.provider.c_str(), r.threads,
                r.texts, r.tokens, r.seconds, dps, tps);
    arr.push_back({{"provider", r.provider},
                   {"threads", r.threads},
                   {"texts", r.texts},
                   {"tokens", r.tokens},
                   {"seconds", r.seconds},
                   {"texts_per_s", dps},
                   {"tokens_per_s", tps}});
  }
  nlohmann::json out = {{"bench", "embed-speed"},
                        {"dataset", dataset},
                        {"bytes", bytes},
                        {"static_load_s", load_s},
                        {"results", arr}};
  std::printf("\n%s\n", out.dump().c_str());
  return 0;
}

}  // namespace quarry::bench
