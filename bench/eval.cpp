// quarry-bench eval: retrieval quality of Quarry's keyword mode on a BEIR-layout dataset,
// side by side with the plain SQLite FTS5 a user would write by hand (porter + unicode61,
// title weighted 2x, the query's words OR-ed, ordered by bm25()).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "beir.h"
#include "bench.h"
#include "catalog/catalog.h"
#include "core/filter.h"
#include "core/layout.h"
#include "fts5_peer.h"
#include "quarry/engine.h"
#include "search/keyword.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace quarry::bench {
namespace {

std::map<std::string, std::vector<std::string>> run_plain_fts5(
    const Dataset& ds, Fts5Peer::Tokenizer tokenizer = Fts5Peer::Tokenizer::porter_unicode61) {
  Fts5Peer peer(ds.corpus, tokenizer);
  std::map<std::string, std::vector<std::string>> ranked;
  for (const auto& q : ds.queries) ranked[q.id] = peer.search(q.text, 100, false);
  return ranked;
}

std::string markdown_of(const CorpusDoc& d) {
  return d.title.empty() ? d.text + "\n" : "# " + d.title + "\n\n" + d.text + "\n";
}

}  // namespace

// Creates (or reuses) a KB holding the dataset's corpus; returns ingest seconds (0 if reused).
double ensure_corpus_kb(Engine& engine, const Dataset& ds, const std::string& kb,
                        const std::string& config, const std::function<void()>& after_create) {
  // Reuse a KB only if a previous run finished ingesting it under this config (the marker,
  // written below, holds the config).
  const fs::path marker = fs::path(engine.data_dir()) / (kb + ".complete");
  if (fs::exists(marker)) {
    std::ifstream in(marker);
    std::stringstream was;
    was << in.rdbuf();
    if (was.str() == config + "\n")
      for (const auto& k : engine.list_kbs())
        if (k.name == kb) return 0;
  }
  for (const auto& k : engine.list_kbs())
    if (k.name == kb) engine.delete_kb(kb);
  engine.create_kb(kb, config);
  if (after_create) after_create();
  auto t0 = std::chrono::steady_clock::now();
  IngestOptions o;
  int failed = 0;
  for (const auto& d : ds.corpus) {
    try {
      engine.ingest_bytes(kb, d.id + ".md", markdown_of(d), o);
    } catch (const Error& e) {  // e.g. an empty document: no_content, as a user would see
      ++failed;
    }
  }
  if (failed) std::fprintf(stderr, "%d corpus documents refused (e.g. empty)\n", failed);
  auto sweep = engine.reindex(kb, {});  // vectors, for KBs with an embedder (SPEC §7)
  if (!sweep.error_code.empty())
    throw std::runtime_error("embedding the corpus failed: " + sweep.error_message);
  std::ofstream(marker) << config << "\n";
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

using Ranked = std::map<std::string, std::vector<std::string>>;

void add_ranked(Ranked& ranked, const std::string& qid, const std::vector<Hit>& hits) {
  auto& list = ranked[qid];
  std::set<std::string> seen;
  for (const auto& h : hits) {
    std::string id = h.filename.substr(0, h.filename.size() - 3);
    if (seen.insert(id).second) list.push_back(id);
  }
}

std::vector<double> parse_list(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty()) out.push_back(std::stod(x));
  return out;
}

}  // namespace

int run_eval(const Args& args) {
  if (args.kv.count("loco")) return run_loco(args);
  const std::string dir = args.get("dataset");
  Dataset ds = load_dataset(dir, args.get("split", ""));
  const std::string data_dir = args.get("data-dir", "/tmp/quarry-bench-" + ds.name);
  const std::string profile = args.get("profile", "prose");
  const std::string mode = args.get("mode", "keyword");
  const std::string embedder = args.get("embedder", "");
  auto engine = Engine::open({data_dir, "bench", "library", 60000});
  std::string kb = "eval-" + profile;
  json cfg = {{"chunking", {{"profile", profile}}}};
  // The keyword index's settings (docs/configuration.md); "legacy" builds the index every KB
  // had before them (spaces-only splitting), for comparisons on one corpus.
  const std::string segmenter = args.get("segmenter", "icu");
  const std::string diacritics = args.get("diacritics", "fold");
  if (segmenter != "legacy") {
    cfg["keyword"] = {{"segmenter", segmenter}, {"diacritics", diacritics}};
    if (segmenter != "icu" || diacritics != "fold") kb += "-" + segmenter + "-" + diacritics;
  } else {
    kb += "-legacy";
  }
  // chunking.segmenter (windows of unspaced text end between ICU's words): icu as a new KB has
  // it, none under --segmenter legacy (a KB as made before both settings).
  const std::string chunk_default = segmenter == "legacy" ? "none" : "icu";
  const std::string chunk_segmenter = args.get("chunk-segmenter", chunk_default);
  cfg["chunking"]["segmenter"] = chunk_segmenter;
  if (chunk_segmenter != chunk_default) kb += "-chunk-" + chunk_segmenter;
  if (!embedder.empty()) {
    std::string tag = embedder;
    for (auto& c : tag)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
    kb += "-" + tag;
    cfg["embedder"] = {{"provider", embedder}};
  } else if (mode != "keyword") {
    throw std::runtime_error("--mode " + mode + " needs --embedder (e.g. static:glove-100d)");
  }
  // "legacy": a KB as made before the keyword settings, whose stored config has no `keyword`
  // section (its index is rebuilt with the old tokenizer before anything is ingested).
  auto make_legacy = [&] {
    auto c = catalog::Catalog::open(core::Layout{data_dir}.catalog_path());
    const catalog::KbRow row = c->kbs().get(kb);
    json stored = json::parse(row.config_json);
    stored.erase("keyword");
    c->kbs().update_config(row.ref(), stored.dump(), {"bench", "library", "kb.update", kb, kb});
  };
  const double ingest_s = ensure_corpus_kb(
      *engine, ds, kb, cfg.dump(), segmenter == "legacy" ? make_legacy : std::function<void()>{});

  search::KeywordParams params;
  // Quality only by default; --snippets 1 times what a user's query costs (with --top-k 10).
  params.snippets = args.num("snippets", 0) != 0;
  params.bm25.k1 = args.num("k1", params.bm25.k1);
  params.bm25.b = args.num("b", params.bm25.b);
  params.bm25.w_title = args.num("w-title", params.bm25.w_title);
  params.bm25.w_headings = args.num("w-headings", params.bm25.w_headings);
  params.bm25.w_body = args.num("w-body", params.bm25.w_body);
  params.drop_stopwords = args.num("stopwords", 1) != 0;
  params.bm25.robertson_idf = args.num("robertson", params.bm25.robertson_idf ? 1 : 0) != 0;

  // One row per configuration: keyword alone, or vector alone, or hybrid at each ratio.
  struct Row {
    std::string label;
    Ranked ranked;
    std::vector<double> lat;
  };
  std::vector<Row> rows;
  // Ranked depth per query: 300 for quality (recall@100 after collapsing chunks to documents);
  // --top-k 10 measures the latency a user sees.
  const int depth = static_cast<int>(args.num("top-k", 300));
  auto cat = catalog::Catalog::open(core::Layout{data_dir}.catalog_path());
  if (mode == "keyword") {
    Row row{"quarry keyword", {}, {}};
    const catalog::KbRef ref = cat->kbs().get(kb).ref();
    for (const auto& q : ds.queries) {
      auto t0 = std::chrono::steady_clock::now();
      auto hits = search::keyword_search(*cat, ref, q.text, {}, depth, 0, false, params);
      row.lat.push_back(elapsed_ms(t0));
      add_ranked(row.ranked, q.id, hits);
    }
    rows.push_back(std::move(row));
  } else {
    std::vector<double> ratios =
        mode == "hybrid" ? parse_list(args.get("alphas", "")) : std::vector<double>{1.0};
    // No --alphas: the KB's own hybrid settings (adaptive weighting); each ratio listed is
    // asked for per query, which makes it fixed.
    const bool kb_ratio = ratios.empty();
    if (kb_ratio) ratios.push_back(-1);
    const std::string fusion = args.get("fusion", "interpolation");
    // --dump FILE (hybrid): each query's own keyword and vector lists, one JSON line per query
    // ({"qid","query","keyword":[[corpus id, chunk, raw_score]...],"vector":[[..., score]...]}),
    // for studying fusion offline; written for the first ratio only.
    std::ofstream dump;
    if (args.kv.count("dump") && mode == "hybrid") dump.open(args.get("dump"));
    for (double alpha : ratios) {
      Row row;
      row.label = mode == "vector" ? "quarry vector (" + embedder + ")"
                                   : "quarry hybrid " + fusion +
                                         (fusion == "rrf" ? ""
                                          : kb_ratio      ? " (KB default)"
                                                          : " α " + json(alpha).dump()) +
                                         " (" + embedder + ")";
      for (const auto& q : ds.queries) {
        SearchRequest r;
        r.kb = kb;
        r.query = q.text;
        r.mode = mode_from_name(mode);
        r.top_k = depth;
        r.fusion = fusion;
        if (!kb_ratio) r.semantic_ratio = alpha;
        auto t0 = std::chrono::steady_clock::now();
        auto resp = engine->search(r);
        row.lat.push_back(elapsed_ms(t0));
        if (!resp.degraded.empty())
          throw std::runtime_error("search degraded: " + resp.degraded.front());
        add_ranked(row.ranked, q.id, resp.hits);
        if (dump.is_open()) {
          json line = {{"qid", q.id}, {"query", q.text}};
          for (const auto& [name, list] : resp.per_mode) {
            json l = json::array();
            for (const auto& h : list)
              l.push_back({h.filename.substr(0, h.filename.size() - 3), h.chunk_id,
                           name == "keyword" ? h.raw_score : h.score});
            line[name] = std::move(l);
          }
          dump << line.dump() << '\n';
        }
      }
      if (dump.is_open()) dump.close();
      rows.push_back(std::move(row));
    }
  }
  const bool peers = !args.kv.count("no-peer");
  Metrics peer = peers ? evaluate(ds, run_plain_fts5(ds)) : Metrics{};
  Metrics trigram =
      peers ? evaluate(ds, run_plain_fts5(ds, Fts5Peer::Tokenizer::trigram)) : Metrics{};

  std::printf("dataset %s (%zu docs, %zu queries), profile %s, k1 %.2f b %.2f w_title %.2f\n",
              ds.name.c_str(), ds.corpus.size(), ds.queries.size(), profile.c_str(), params.bm25.k1,
              params.bm25.b, params.bm25.w_title);
  std::printf(
      "| system | nDCG@10 | recall@100 | MRR@10 | p50 ms (top %d) | p99 ms "
      "|\n|---|---|---|---|---|---|\n",
      depth);
  for (const auto& row : rows) {
    Metrics m = evaluate(ds, row.ranked);
    std::printf("| %s | %.4f | %.4f | %.4f | %.2f | %.2f |\n", row.label.c_str(), m.ndcg10,
                m.recall100, m.mrr10, percentile(row.lat, 50), percentile(row.lat, 99));
  }
  std::printf("| plain FTS5 (porter unicode61, title 2x) | %.4f | %.4f | %.4f | | |\n", peer.ndcg10,
              peer.recall100, peer.mrr10);
  std::printf("| plain FTS5 (trigram, title 2x) | %.4f | %.4f | %.4f | | |\n", trigram.ndcg10,
              trigram.recall100, trigram.mrr10);
  for (const auto& row : rows) {
    Metrics m = evaluate(ds, row.ranked);
    json line = {{"bench", "eval"},
                 {"dataset", ds.name},
                 {"system", row.label},
                 {"mode", mode},
                 {"embedder", embedder},
                 {"profile", profile},
                 {"k1", params.bm25.k1},
                 {"b", params.bm25.b},
                 {"ndcg10", m.ndcg10},
                 {"recall100", m.recall100},
                 {"mrr10", m.mrr10},
                 {"fts5_ndcg10", peer.ndcg10},
                 {"fts5_recall100", peer.recall100},
                 {"fts5_mrr10", peer.mrr10},
                 {"fts5_trigram_ndcg10", trigram.ndcg10},
                 {"segmenter", segmenter},
                 {"chunk_segmenter", chunk_segmenter},
                 {"diacritics", diacritics},
                 {"p50_ms", percentile(row.lat, 50)},
                 {"p99_ms", percentile(row.lat, 99)},
                 {"ingest_s", ingest_s}};
    std::cout << line.dump() << "\n";
  }
  return 0;
}

}  // namespace quarry::bench
