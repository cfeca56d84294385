// BEIR-layout datasets (corpus.jsonl, queries.jsonl, qrels.tsv) and the IR metrics the
// project reports: nDCG@10 (linear gain, as trec_eval), recall@100, MRR@10.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace quarry {
class Engine;
}

namespace quarry::bench {

struct CorpusDoc {
  std::string id, title, text;
};
struct Query {
  std::string id, text;
};

struct Dataset {
  std::string name;
  std::vector<CorpusDoc> corpus;
  std::vector<Query> queries;                               // judged queries only
  std::map<std::string, std::map<std::string, int>> qrels;  // query -> doc -> grade (> 0)
};

// Creates (or reuses, when a finished ingest of the same config is there) a KB holding the
// dataset's corpus, its vectors built when the config names an embedder; returns the ingest's
// seconds (0 when reused). `after_create` runs between creation and ingest (eval.cpp).
double ensure_corpus_kb(Engine& engine, const Dataset& ds, const std::string& kb,
                        const std::string& config, const std::function<void()>& after_create);

// `split` "" reads queries.jsonl/qrels.tsv; "train" reads queries_train.jsonl/qrels_train.tsv.
Dataset load_dataset(const std::string& dir, const std::string& split = "");

struct Metrics {
  double ndcg10 = 0, recall100 = 0, mrr10 = 0;
  int queries = 0;
};

// `ranked`: per query id, document ids best first (duplicates already removed).
Metrics evaluate(const Dataset& ds, const std::map<std::string, std::vector<std::string>>& ranked);

}  // namespace quarry::bench
