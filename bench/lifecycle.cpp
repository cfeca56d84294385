// quarry-bench lifecycle [--dataset DIR] [--embedder all|static:glove-100d|hash:256]
//                        [--workers N] [--repeats 3] [--batch-chunks 256]
//                        [--work-dir /tmp/quarry-lifecycle] [--duty 0.25] [--only latency]
//                        [--idle-passes 10]
//
// What the index lifecycle (SPEC §7) costs, through the public Engine API only:
//   1. re-embed sweep: the corpus is ingested (keyword index only, vectors pending) and
//      Engine::reindex is timed from an empty embedding cache, per provider and worker count;
//   2. vector query latency while a blue-green build (hash:256 -> hash:192) is swept by the
//      background Indexer (the server's, with its own Engine) on the same data directory,
//      against the same queries with no sweep running (the Indexer paces itself while the
//      queries run: --duty, IndexerOptions::foreground_duty; 1 turns pacing off);
//   3. the cost of an edit: one paragraph of a 100-chunk document changed, then reindex.
// Each data directory is a copy of a template made once per provider, so every timed sweep
// starts from the same pending state and an empty cache. Medians over --repeats are shown.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "beir.h"
#include "bench.h"
#include "quarry/engine.h"
#include "quarry/indexer.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace quarry::bench {
namespace {

const char* kKb = "corpus";

std::unique_ptr<Engine> open_engine(const fs::path& dir) {
  return Engine::open({dir.string(), "bench", "library", 60000});
}

// "static:glove-100d" -> "static-glove-100d", for directory names.
std::string tag_of(std::string s) {
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return s;
}

// A data directory holding the corpus ingested under `provider`, vectors all pending; made once
// per provider and run (the Engine is closed afterwards, so the copy below is consistent).
fs::path corpus_template(const fs::path& work, const Dataset& ds, const std::string& provider,
                         json& out_ingest) {
  fs::path dir = work / ("template-" + tag_of(provider));
  if (out_ingest.contains(provider)) return dir;
  fs::remove_all(dir);
  auto e = open_engine(dir);
  e->create_kb(kKb, json{{"embedder", {{"provider", provider}}}}.dump());
  int failed = 0;
  auto t0 = Clock::now();
  for (const auto& d : ds.corpus) {
    try {
      e->ingest_bytes(kKb, d.id + ".md", "# " + d.title + "\n\n" + d.text + "\n", {});
    } catch (const Error&) {  // an empty document: no_content, as a user would see
      ++failed;
    }
  }
  double s = elapsed_ms(t0) / 1000;
  auto info = e->describe_kb(kKb);
  out_ingest[provider] = {{"documents", info.documents},
                          {"chunks", info.chunks},
                          {"refused", failed},
                          {"ingest_s", s},
                          {"pending", info.vectors.pending}};
  std::fprintf(stderr, "ingested %lld docs (%lld chunks) for %s in %.1f s\n",
               static_cast<long long>(info.documents), static_cast<long long>(info.chunks),
               provider.c_str(), s);
  return dir;
}

// A fresh copy of `tpl` at `dir`, without an embedding cache.
void copy_fresh(const fs::path& tpl, const fs::path& dir) {
  fs::remove_all(dir);
  fs::copy(tpl, dir, fs::copy_options::recursive);
  for (const char* f : {"embeddings.db", "embeddings.db-wal", "embeddings.db-shm"})
    fs::remove(dir / "cache" / f);
}

struct Sweep {
  std::string provider;
  int workers = 1;
  ReindexReport report;  // of the median run
  double seconds = 0;
};

Sweep time_sweep(const fs::path& tpl, const fs::path& dir, const std::string& provider, int workers,
                 int batch_chunks, int repeats) {
  std::vector<Sweep> runs;
  for (int r = 0; r < repeats; ++r) {
    copy_fresh(tpl, dir);
    auto e = open_engine(dir);
    ReindexOptions o;
    o.workers = workers;
    o.batch_chunks = batch_chunks;
    auto t0 = Clock::now();
    auto rep = e->reindex(kKb, o);
    double s = elapsed_ms(t0) / 1000;
    if (!rep.error_code.empty() || rep.pending != 0)
      throw std::runtime_error("sweep of " + provider + " incomplete: " + rep.error_message);
    runs.push_back({provider, workers, rep, s});
  }
  std::sort(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; });
  return runs[runs.size() / 2];
}

struct Latency {
  std::vector<double> idle, during;  // pooled over the repeats
  std::vector<double> staged;        // after `kb set`, before the sweep starts (no sweep)
  double sweep_s = 0;                // of the last repeat
  int errors = 0;
  ReindexReport report;  // of the last repeat
};

// Vector top-10 latency over the queries, idle, then while the Indexer sweeps a blue-green
// build (workers 1: the machine has 2 cores, one for the sweep and one for the queries).
void sweep_latency(const fs::path& dir, const std::vector<Query>& qs, double duty, int idle_passes,
                   Latency& L) {
  auto a = open_engine(dir);
  SearchRequest req;
  req.kb = kKb;
  req.mode = Mode::vector;
  req.top_k = 10;
  auto ask = [&](const Query& q) {
    req.query = q.text;
    try {
      auto resp = a->search(req);
      if (resp.hits.empty() || !resp.degraded.empty()) ++L.errors;
    } catch (const Error&) {
      ++L.errors;
    }
  };
  // Pass 0 warms up. The idle p99 is the ratio's denominator: it needs a sample of the same
  // order as the sweep's (a few hundred queries made the ratio swing by 0.3 between runs).
  for (int pass = 0; pass <= idle_passes; ++pass)
    for (const auto& q : qs) {
      auto t0 = Clock::now();
      ask(q);
      if (pass) L.idle.push_back(elapsed_ms(t0));
    }

  a->set_kb(kKb, {{"embedder.provider", "hash:192"}});  // serving stays hash:256 until cut-over
  // The same queries with the build planned but no sweep running: what the KB's state alone
  // costs, apart from the sweep's work.
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& q : qs) {
      auto t0 = Clock::now();
      ask(q);
      L.staged.push_back(elapsed_ms(t0));
    }
  // The sweep runs as the server runs it: quarry::Indexer, its own Engine and thread (at its
  // default niceness), which reconciles the KB as it starts, so the build begins at once.
  IndexerOptions io;
  io.engine = {dir.string(), "bench", "library", 60000};
  io.workers = 1;
  io.foreground_duty = duty;
  const auto t0 = Clock::now();
  auto indexer = Indexer::start(io);
  for (std::size_t i = 0; !indexer->wait_idle(std::chrono::milliseconds(0)); ++i) {
    auto q0 = Clock::now();
    ask(qs[i % qs.size()]);
    L.during.push_back(elapsed_ms(q0));  // issued while the sweep ran
  }
  L.sweep_s = elapsed_ms(t0) / 1000;
  auto state = indexer->state();
  indexer->stop();
  if (!state.count(kKb) || !state.at(kKb).last) throw std::runtime_error("sweep: no report");
  L.report = *state.at(kKb).last;
  if (!L.report.error_code.empty()) throw std::runtime_error("sweep: " + L.report.error_message);
}

// One document of 100 sections, each a paragraph of ~50 words: one chunk each. `edits` > 0
// revises the paragraphs of sections 10, 30, 50, ...: one more paragraph per edit.
std::string hundred_sections(int edits) {
  static const char* words[] = {"protein", "cells",    "patients", "increased",  "risk",
                                "study",   "clinical", "analysis", "expression", "mutations",
                                "tumour",  "response", "genes",    "levels",     "treatment",
                                "mice",    "binding",  "receptor", "signalling", "pathway"};
  std::string md = "# A document of one hundred sections\n\n";
  for (int s = 0; s < 100; ++s) {
    md += "## Section " + std::to_string(s) + "\n\n";
    if (s % 20 == 10 && s / 20 < edits) md += "Revised in edit " + std::to_string(s / 20) + ": ";
    for (int w = 0; w < 50; ++w) md += std::string(words[(s * 7 + w * 3 + w / 5) % 20]) + " ";
    md += "end of section " + std::to_string(s) + ".\n\n";
  }
  return md;
}

struct EditCost {
  std::string provider;
  std::int64_t chunks = 0, provider_calls = 0, embedded = 0, cached = 0;
  double ms = 0;  // median
};

EditCost edit_cost(const fs::path& dir, const std::string& provider, int edits) {
  fs::remove_all(dir);
  auto e = open_engine(dir);
  e->create_kb("edit", json{{"embedder", {{"provider", provider}}},
                            {"chunking", {{"max_tokens", 256}, {"overlap_tokens", 0}}}}
                           .dump());
  auto item = e->ingest_bytes("edit", "hundred.md", hundred_sections(0), {});
  e->reindex("edit", {});
  EditCost c{provider, item.chunks};
  std::vector<double> ms;
  for (int k = 0; k < edits; ++k) {
    e->edit_document("edit", item.doc_id, hundred_sections(k + 1));
    auto t0 = Clock::now();
    auto rep = e->reindex("edit", {});
    ms.push_back(elapsed_ms(t0));
    // The worst of the edits (they should all be alike).
    c.provider_calls = std::max(c.provider_calls, rep.provider_calls);
    c.embedded = std::max(c.embedded, rep.chunks_embedded);
    c.cached = k == 0 ? rep.chunks_cached : std::min(c.cached, rep.chunks_cached);
  }
  c.ms = percentile(ms, 50);
  return c;
}

}  // namespace

int run_lifecycle(const Args& args) {
  Dataset ds = load_dataset(args.get("dataset", "/work/shared/datasets/scifact"));
  const fs::path work = args.get("work-dir", "/tmp/quarry-lifecycle");
  const std::string which = args.get("embedder", "all");
  const int repeats = static_cast<int>(args.num("repeats", 3));
  const int batch_chunks =
      static_cast<int>(args.num("batch-chunks", ReindexOptions{}.batch_chunks));
  std::vector<std::string> providers = {"static:glove-100d", "hash:256"};
  if (which != "all") providers = {which};
  const double duty = args.num("duty", IndexerOptions{}.foreground_duty);
  const bool latency_only = args.get("only", "") == "latency";
  const int idle_passes = std::max(1, static_cast<int>(args.num("idle-passes", 10)));
  std::vector<int> workers = {1, 2};
  if (args.kv.count("workers")) workers = {static_cast<int>(args.num("workers", 1))};
  fs::create_directories(work);
  json ingest = json::object();

  // 1. Re-embed sweep throughput, empty cache each run.
  std::vector<Sweep> sweeps;
  for (const auto& p : latency_only ? std::vector<std::string>{} : providers) {
    fs::path tpl = corpus_template(work, ds, p, ingest);
    for (int w : workers)
      sweeps.push_back(time_sweep(tpl, work / "sweep", p, w, batch_chunks, repeats));
  }

  // 2. Vector latency during a blue-green sweep (always hash:256 serving -> hash:192 building).
  // Each repeat starts from a copy of a KB whose hash:256 vectors are complete.
  copy_fresh(corpus_template(work, ds, "hash:256", ingest), work / "latency-base");
  open_engine(work / "latency-base")->reindex(kKb, {});
  Latency lat;
  for (int r = 0; r < repeats; ++r) {
    copy_fresh(work / "latency-base", work / "latency");
    sweep_latency(work / "latency", ds.queries, duty, idle_passes, lat);
  }

  // 3. Cost of editing one paragraph of a 100-chunk document.
  std::vector<EditCost> edits;
  if (!latency_only)
    for (const auto& p : providers) edits.push_back(edit_cost(work / "edit", p, 5));

  std::printf(
      "lifecycle: %s (%zu docs, %zu queries); median of %d sweeps, empty cache each, "
      "batch_chunks %d\n\n",
      ds.name.c_str(), ds.corpus.size(), ds.queries.size(), repeats, batch_chunks);
  std::printf(
      "| provider | workers | docs | chunks | provider calls | sweep s | docs/s | chunks/s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  json jsweeps = json::array();
  for (const auto& s : sweeps) {
    const auto& r = s.report;
    double dps = static_cast<double>(r.documents) / s.seconds;
    double cps = static_cast<double>(r.chunks) / s.seconds;
    std::printf("| %s | %d | %lld | %lld | %lld | %.2f | %.0f | %.0f |\n", s.provider.c_str(),
                s.workers, static_cast<long long>(r.documents), static_cast<long long>(r.chunks),
                static_cast<long long>(r.provider_calls), s.seconds, dps, cps);
    jsweeps.push_back({{"provider", s.provider},
                       {"workers", s.workers},
                       {"documents", r.documents},
                       {"chunks", r.chunks},
                       {"chunks_embedded", r.chunks_embedded},
                       {"provider_calls", r.provider_calls},
                       {"seconds", s.seconds},
                       {"docs_per_s", dps},
                       {"chunks_per_s", cps}});
  }

  const double i50 = percentile(lat.idle, 50), i99 = percentile(lat.idle, 99);
  const double d50 = percentile(lat.during, 50), d99 = percentile(lat.during, 99);
  std::printf(
      "\nvector top-10 (hash:256 serving) while the background Indexer (nice 10) sweeps the "
      "blue-green build to "
      "hash:192 with workers 1 (2-core machine), duty %.2f; %d rounds pooled, last sweep %.2f s "
      "(rested %.2f s), %lld docs, cut over: %s\n\n",
      duty, repeats, lat.sweep_s, lat.report.rested_ms / 1000,
      static_cast<long long>(lat.report.documents), lat.report.cut_over ? "yes" : "no");
  std::printf("| | queries | p50 ms | p99 ms |\n|---|---:|---:|---:|\n");
  std::printf("| idle | %zu | %.3f | %.3f |\n", lat.idle.size(), i50, i99);
  std::printf("| build planned, no sweep yet | %zu | %.3f | %.3f |\n", lat.staged.size(),
              percentile(lat.staged, 50), percentile(lat.staged, 99));
  std::printf("| during sweep | %zu | %.3f | %.3f |\n", lat.during.size(), d50, d99);
  std::printf("| ratio (target <= 1.5) | | %.2f | %.2f |\n", d50 / i50, d99 / i99);
  if (lat.errors)
    std::printf("(%d queries failed, were degraded or returned no hits)\n", lat.errors);

  std::printf("\nedit one paragraph of a 100-chunk document, then reindex (median of 5 edits)\n\n");
  std::printf("| provider | chunks | provider calls | chunks embedded | chunks cached | ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  json jedits = json::array();
  for (const auto& c : edits) {
    std::printf("| %s | %lld | %lld | %lld | %lld | %.2f |\n", c.provider.c_str(),
                static_cast<long long>(c.chunks), static_cast<long long>(c.provider_calls),
                static_cast<long long>(c.embedded), static_cast<long long>(c.cached), c.ms);
    jedits.push_back({{"provider", c.provider},
                      {"chunks", c.chunks},
                      {"provider_calls", c.provider_calls},
                      {"chunks_embedded", c.embedded},
                      {"chunks_cached", c.cached},
                      {"reindex_ms", c.ms}});
  }

  json out = {{"bench", "lifecycle"},
              {"dataset", ds.name},
              {"repeats", repeats},
              {"batch_chunks", batch_chunks},
              {"ingest", ingest},
              {"sweeps", jsweeps},
              {"latency",
               {{"serving", "hash:256"},
                {"building", "hash:192"},
                {"sweep_workers", 1},
                {"sweep_s", lat.sweep_s},
                {"cut_over", lat.report.cut_over},
                {"idle_queries", lat.idle.size()},
                {"during_queries", lat.during.size()},
                {"errors", lat.errors},
                {"idle_p50_ms", i50},
                {"idle_p99_ms", i99},
                {"during_p50_ms", d50},
                {"during_p99_ms", d99},
                {"ratio_p50", d50 / i50},
                {"ratio_p99", d99 / i99},
                {"duty", duty},
                {"sweep_s", lat.sweep_s},
                {"rested_s", lat.report.rested_ms / 1000}}},
              {"edits", jedits}};
  std::cout << "\n" << out.dump() << "\n";
  return 0;
}

}  // namespace quarry::bench
