// quarry-bench eval --loco DATASETS_DIR: hybrid fusion chosen by leave-one-collection-out (issue
// 27). For every collection it ranks each judged query's keyword candidates and vector
// candidates once, as a hybrid query of --top-k does (search/fusion.h: fusion_depth,
// vector_fusion_depth), then replays the product's fusion (search::fuse) under each candidate
// setting of a grid: fixed ratios, and adaptive weighting under several ceilings. For each
// collection the setting is chosen on all the others (mean gain over keyword, each loss counted
// three times), never on the one reported. The shipped default (adaptive, 0.2) is reported
// beside it, replayed and end to end through Engine::search, and the share of queries on which
// replay and engine agree is printed as a check on the replay.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "beir.h"
#include "bench.h"
#include "catalog/catalog.h"
#include "core/layout.h"
#include "embed/provider.h"
#include "quarry/engine.h"
#include "search/fusion.h"
#include "search/keyword.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace quarry::bench {
namespace {

using Ranked = std::map<std::string, std::vector<std::string>>;

struct Setting {
  std::string weighting;  // fixed | adaptive
  double ratio = 0;
  std::string label() const {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s %.2f", weighting.c_str(), ratio);
    return buf;
  }
};

// From conservative to bold: a tie goes to the first.
std::vector<Setting> grid() {
  std::vector<Setting> g;
  for (double a : {0.0, 0.02, 0.05, 0.1, 0.15, 0.2}) g.push_back({"fixed", a});
  for (double a : {0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5}) g.push_back({"adaptive", a});
  return g;
}

struct QueryLists {
  std::string qid;
  std::vector<Hit> keyword, vector;
  std::optional<double> coverage;
  std::vector<std::string> engine;  // Engine::search's hybrid answer under the KB's defaults
};

struct Collection {
  Dataset ds;
  std::vector<QueryLists> queries;
  std::map<std::string, std::string> filename;  // doc_id -> corpus id
  double keyword = 0;                           // nDCG@10 of the keyword list alone
  std::vector<double> hybrid;                   // per grid setting
  double engine = 0;                            // the shipped default, end to end
  double agreement = 0;                         // share of queries replay == engine (top 10)
};

std::vector<std::string> documents_of(const std::vector<Hit>& hits,
                                      const std::map<std::string, std::string>& filename,
                                      std::size_t limit) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& h : hits) {
    auto it = filename.find(h.doc_id);
    const std::string id = it != filename.end() ? it->second : h.doc_id;
    if (seen.insert(id).second) out.push_back(id);
    if (out.size() == limit) break;
  }
  return out;
}

std::vector<std::string> fused(const QueryLists& q, const Setting& s, int top_k,
                               const std::map<std::string, std::string>& filename) {
  search::FusionOptions fo;
  fo.weighting = s.weighting;
  fo.semantic_ratio = s.ratio;
  fo.query_coverage = q.coverage;
  return documents_of(search::fuse(q.keyword, q.vector, fo, top_k * 2 + 10, 0), filename,
                      static_cast<std::size_t>(top_k));
}

std::string tag_of(std::string s) {
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return s;
}

Collection load_collection(const std::string& dir, const std::string& embedder, int top_k,
                           const std::vector<Setting>& settings) {
  Collection c;
  c.ds = load_dataset(dir);
  const std::string data_dir = "/tmp/quarry-bench-" + c.ds.name;
  auto engine = Engine::open({data_dir, "bench", "library", 60000});
  // The KB `quarry-bench eval --mode hybrid --embedder E` makes, with every default.
  const std::string kb = "eval-prose-" + tag_of(embedder);
  const json cfg = {{"chunking", {{"profile", "prose"}, {"segmenter", "icu"}}},
                    {"keyword", {{"segmenter", "icu"}, {"diacritics", "fold"}}},
                    {"embedder", {{"provider", embedder}}}};
  const double ingest_s = ensure_corpus_kb(*engine, c.ds, kb, cfg.dump(), {});
  // The end-to-end column is the shipped default, whatever ratio the KB was made with.
  engine->set_kb(kb, {{"hybrid.semantic_ratio", "null"}, {"hybrid.weighting", "null"}});
  std::fprintf(stderr, "%s: %zu queries%s\n", c.ds.name.c_str(), c.ds.queries.size(),
               ingest_s > 0 ? (" (ingested in " + std::to_string(ingest_s) + " s)").c_str() : "");
  auto cat = catalog::Catalog::open(core::Layout{data_dir}.catalog_path());
  const catalog::KbRef ref = cat->kbs().get(kb).ref();
  for (const auto& d : cat->documents().refs(ref))
    c.filename[d.id] = d.filename.substr(0, d.filename.size() - 3);
  embed::ProviderContext ctx;
  ctx.data_dir = data_dir;
  if (const char* m = std::getenv("QUARRY_MODELS_DIR")) ctx.models_dir = m;
  auto provider =
      embed::select_provider(embed::ProviderRegistry::builtin(), embedder, json::object(), "", ctx)
          .provider;
  if (!provider) throw std::runtime_error("no embedder " + embedder);

  Ranked keyword, engine_ranked;
  std::vector<Ranked> per_setting(settings.size());
  int same = 0;
  for (const auto& q : c.ds.queries) {
    QueryLists l;
    l.qid = q.id;
    l.keyword =
        search::keyword_candidates(*cat, ref, q.text, {}, search::fusion_depth(top_k), false);
    SearchRequest r;
    r.kb = kb;
    r.query = q.text;
    r.mode = Mode::vector;
    r.top_k = search::vector_fusion_depth(top_k);
    l.vector = engine->search(r).hits;
    l.coverage = provider->query_coverage(q.text);
    r.mode = Mode::hybrid;
    r.top_k = top_k;
    auto resp = engine->search(r);
    if (!resp.degraded.empty()) throw std::runtime_error("degraded: " + resp.degraded.front());
    l.engine = documents_of(resp.hits, c.filename, static_cast<std::size_t>(top_k));
    keyword[q.id] = documents_of(l.keyword, c.filename, static_cast<std::size_t>(top_k));
    engine_ranked[q.id] = l.engine;
    for (std::size_t i = 0; i < settings.size(); ++i)
      per_setting[i][q.id] = fused(l, settings[i], top_k, c.filename);
    // The first 10 are what nDCG@10 reads: replay and engine agree when those are the same.
    auto head = [](std::vector<std::string> v) {
      if (v.size() > 10) v.resize(10);
      return v;
    };
    same += head(fused(l, {"adaptive", HybridConfig{}.semantic_ratio}, top_k, c.filename)) ==
            head(l.engine);
    c.queries.push_back(std::move(l));
  }
  c.keyword = evaluate(c.ds, keyword).ndcg10;
  c.engine = evaluate(c.ds, engine_ranked).ndcg10;
  for (const auto& ranked : per_setting) c.hybrid.push_back(evaluate(c.ds, ranked).ndcg10);
  c.agreement = c.ds.queries.empty() ? 0 : static_cast<double>(same) / c.ds.queries.size();
  return c;
}

// Mean gain over keyword on `names`, each loss counted three times.
double objective(const std::map<std::string, Collection>& cs, const std::vector<std::string>& names,
                 std::size_t setting) {
  double sum = 0;
  for (const auto& n : names) {
    const double d = cs.at(n).hybrid[setting] - cs.at(n).keyword;
    sum += d >= 0 ? d : 3 * d;
  }
  return names.empty() ? 0 : sum / static_cast<double>(names.size());
}

}  // namespace

int run_loco(const Args& args) {
  const std::string root = args.get("loco");
  const std::string embedder = args.get("embedder", "static:glove-100d");
  const int top_k = static_cast<int>(args.num("top-k", 10));
  const std::set<std::string> english = {"scifact", "cranfield", "cisi", "adi"};
  std::vector<std::string> names;
  std::stringstream ss(args.get("sets", "scifact,cranfield,cisi,adi,jaquad-ja,cmrc2018-zh"));
  for (std::string n; std::getline(ss, n, ',');)
    if (!n.empty() && fs::exists(fs::path(root) / n / "qrels.tsv")) names.push_back(n);
  if (names.size() < 2)
    throw std::runtime_error("--loco needs at least two collections in " + root);
  const auto settings = grid();
  std::size_t shipped = 0;
  for (std::size_t i = 0; i < settings.size(); ++i)
    if (settings[i].weighting == "adaptive" && settings[i].ratio == HybridConfig{}.semantic_ratio)
      shipped = i;

  std::map<std::string, Collection> cs;
  for (const auto& n : names)
    cs.emplace(n, load_collection((fs::path(root) / n).string(), embedder, top_k, settings));

  std::printf("leave one collection out, hybrid (%s) vs keyword, nDCG@10, top %d\n",
              embedder.c_str(), top_k);
  std::printf(
      "| collection | chosen on the others | keyword | hybrid (chosen) | delta | shipped "
      "(adaptive %.2f) | delta | end to end | replay = engine "
      "|\n|---|---|---|---|---|---|---|---|---|\n",
      HybridConfig{}.semantic_ratio);
  double en_chosen = 0, en_shipped = 0, worst_chosen = 1, worst_shipped = 1;
  int en = 0;
  for (const auto& held : names) {
    std::vector<std::string> others;
    for (const auto& n : names)
      if (n != held) others.push_back(n);
    std::size_t best = 0;
    for (std::size_t i = 1; i < settings.size(); ++i)
      if (objective(cs, others, i) > objective(cs, others, best) + 1e-12) best = i;
    const Collection& c = cs.at(held);
    const double d = c.hybrid[best] - c.keyword;
    const double ds = c.hybrid[shipped] - c.keyword;
    std::printf("| %s | %s | %.4f | %.4f | %+.4f | %.4f | %+.4f | %.4f | %.1f%% |\n", held.c_str(),
                settings[best].label().c_str(), c.keyword, c.hybrid[best], d, c.hybrid[shipped], ds,
                c.engine, 100 * c.agreement);
    if (english.count(held)) {
      en_chosen += d;
      en_shipped += ds;
      ++en;
    }
    worst_chosen = std::min(worst_chosen, d);
    worst_shipped = std::min(worst_shipped, ds);
    json line = {{"bench", "eval-loco"},
                 {"dataset", held},
                 {"embedder", embedder},
                 {"top_k", top_k},
                 {"chosen", settings[best].label()},
                 {"keyword_ndcg10", c.keyword},
                 {"chosen_ndcg10", c.hybrid[best]},
                 {"shipped_ndcg10", c.hybrid[shipped]},
                 {"engine_ndcg10", c.engine},
                 {"replay_agreement", c.agreement}};
    std::cerr << line.dump() << "\n";
  }
  if (en > 0)
    std::printf(
        "mean delta over the English collections: chosen %+.4f, shipped %+.4f; worst "
        "delta: chosen %+.4f, shipped %+.4f\n",
        en_chosen / en, en_shipped / en, worst_chosen, worst_shipped);
  // Every setting on every collection (replayed), as a delta over keyword.
  std::printf("\n| setting |");
  for (const auto& n : names) std::printf(" %s |", n.c_str());
  std::printf(" objective (all) |\n|---|");
  for (std::size_t i = 0; i <= names.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (std::size_t i = 0; i < settings.size(); ++i) {
    std::printf("| %s |", settings[i].label().c_str());
    for (const auto& n : names) std::printf(" %+.4f |", cs.at(n).hybrid[i] - cs.at(n).keyword);
    std::printf(" %+.4f |\n", objective(cs, names, i));
  }
  return 0;
}

}  // namespace quarry::bench
