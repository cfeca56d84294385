// quarry-bench pump [--dataset ../shared/datasets/scifact] [--rows 20000] [--batch 1000]
//                   [--embedder hash:256,static:glove-100d] [--repeats 3]
// The embedding pump draining a SQLite app table (SPEC §8; issue 7's benchmark): rows/s and
// chunks/s for --rows rows (SciFact's titles + abstracts, cycled with a copy number so every
// row is distinct), beside two peers on the same texts: the provider alone (chunked and embedded
// in the pump's 128-chunk batches) and "by hand" (the same pending query and statements an app
// would run itself around those calls). RSS is sampled after every run (slices of at most 2,000
// chunks keep it flat).
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "beir.h"
#include "bench.h"
#include "catalog/catalog.h"
#include "chunk/chunker.h"
#include "embed/provider.h"
#include "pump/pump.h"
#include "secrets/secret_store.h"

namespace quarry::bench {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double rss_mb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::strlen(field))) / 1024.0;
  return 0;
}

void make_app(const std::string& path, const std::vector<std::string>& texts) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db,
               "CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);"
               "CREATE TABLE doc_vectors (doc_id INTEGER NOT NULL, seq INTEGER NOT NULL, "
               "embedding TEXT NOT NULL, revision TEXT NOT NULL, PRIMARY KEY (doc_id, seq));"
               "BEGIN",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO docs(id, body) VALUES (?, ?)", -1, &s, nullptr);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    sqlite3_bind_int64(s, 1, static_cast<sqlite3_int64>(i + 1));
    sqlite3_bind_text(s, 2, texts[i].data(), static_cast<int>(texts[i].size()), SQLITE_STATIC);
    sqlite3_step(s);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

json use_case(int batch) {
  return {{"batch_size", batch},
          {"source",
           {{"type", "sql"},
            {"driver", "sqlite"},
            {"path", "app.db"},
            {"pending",
             "SELECT id, body AS content FROM docs d WHERE NOT EXISTS (SELECT 1 FROM doc_vectors "
             "v WHERE v.doc_id = d.id AND v.revision = $2) ORDER BY id LIMIT $1"},
            {"delete_document", "DELETE FROM doc_vectors WHERE doc_id = $1"},
            {"store_chunk", "INSERT INTO doc_vectors VALUES ($1, $2, $3, $5)"}}}};
}

// The provider alone on the same texts: chunked as the pump chunks (`none`: one chunk per
// row) and embedded 128 at a time.
double direct(embed::EmbeddingProvider& p, const std::vector<std::string>& texts) {
  auto tok = chunk::make_approx_tokenizer();
  chunk::ChunkOptions opts;
  opts.profile = "none";
  const double t0 = now_s();
  std::vector<std::string> batch;
  for (const auto& t : texts) {
    for (auto& c : chunk::chunk_markdown(t, opts, *tok)) batch.push_back(std::move(c.text));
    if (batch.size() >= 128) {
      p.embed_documents(batch);
      batch.clear();
    }
  }
  if (!batch.empty()) p.embed_documents(batch);
  return now_s() - t0;
}

// The provider alone using two threads, as the pump does: the texts chunked, then 128-chunk
// calls taken in turn by two threads.
double direct_two_threads(embed::EmbeddingProvider& p, const std::vector<std::string>& texts) {
  auto tok = chunk::make_approx_tokenizer();
  chunk::ChunkOptions opts;
  opts.profile = "none";
  const double t0 = now_s();
  std::vector<std::string> chunks;
  for (const auto& t : texts)
    for (auto& c : chunk::chunk_markdown(t, opts, *tok)) chunks.push_back(std::move(c.text));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t from; (from = next.fetch_add(128)) < chunks.size();)
      p.embed_documents(std::vector<std::string>(
          chunks.begin() + static_cast<std::ptrdiff_t>(from),
          chunks.begin() + static_cast<std::ptrdiff_t>(std::min(chunks.size(), from + 128))));
  };
  std::thread other(work);
  work();
  other.join();
  return now_s() - t0;
}

std::string vector_text(const std::vector<float>& v) {
  std::string out = "[";
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    auto r = std::to_chars(buf, buf + sizeof buf, v[i]);
    out.append(buf, r.ptr);
  }
  return out + "]";
}

// What an app would write by hand instead of the pump: the same pending query, chunking,
// 128-chunk provider calls and the same statements (delete, then insert each vector as text),
// one transaction per batch, all on one thread.
double direct_with_sql(embed::EmbeddingProvider& p, const std::string& app, int batch) {
  sqlite3* db = nullptr;
  sqlite3_open(app.c_str(), &db);
  const json uc = use_case(batch);
  sqlite3_stmt *pending = nullptr, *del = nullptr, *ins = nullptr;
  sqlite3_prepare_v2(db, uc["source"]["pending"].get<std::string>().c_str(), -1, &pending, nullptr);
  sqlite3_prepare_v2(db, uc["source"]["delete_document"].get<std::string>().c_str(), -1, &del,
                     nullptr);
  sqlite3_prepare_v2(db, "INSERT INTO doc_vectors VALUES ($1, $2, $3, $4)", -1, &ins, nullptr);
  const std::string revision = "by-hand-revision";
  auto tok = chunk::make_approx_tokenizer();
  chunk::ChunkOptions opts;
  opts.profile = "none";
  const double t0 = now_s();
  while (true) {
    sqlite3_bind_int(pending, sqlite3_bind_parameter_index(pending, "$1"), batch);
    sqlite3_bind_text(pending, sqlite3_bind_parameter_index(pending, "$2"), revision.c_str(), -1,
                      SQLITE_TRANSIENT);
    std::vector<std::pair<std::string, std::string>> rows;
    while (sqlite3_step(pending) == SQLITE_ROW)
      rows.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(pending, 0)),
                        reinterpret_cast<const char*>(sqlite3_column_text(pending, 1)));
    sqlite3_reset(pending);
    if (rows.empty()) break;
    std::vector<std::pair<std::string, std::string>> chunks;  // row id, text
    for (const auto& [id, text] : rows)
      for (auto& c : chunk::chunk_markdown(text, opts, *tok)) chunks.emplace_back(id, c.text);
    std::vector<std::vector<float>> vecs;
    for (std::size_t from = 0; from < chunks.size(); from += 128) {
      std::vector<std::string> texts;
      for (std::size_t i = from; i < std::min(chunks.size(), from + 128); ++i)
        texts.push_back(chunks[i].second);
      for (auto& v : p.embed_documents(texts)) vecs.push_back(std::move(v));
    }
    sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    std::string last;
    int seq = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      if (chunks[i].first != last) {
        last = chunks[i].first;
        seq = 0;
        sqlite3_bind_text(del, 1, last.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_step(del);
        sqlite3_reset(del);
      }
      const std::string v = vector_text(vecs[i]);
      sqlite3_bind_text(ins, 1, last.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int(ins, 2, seq++);
      sqlite3_bind_text(ins, 3, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
      sqlite3_bind_text(ins, 4, revision.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_step(ins);
      sqlite3_reset(ins);
    }
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    if (static_cast<int>(rows.size()) < batch) break;
  }
  const double took = now_s() - t0;
  sqlite3_finalize(pending);
  sqlite3_finalize(del);
  sqlite3_finalize(ins);
  sqlite3_close(db);
  return took;
}

}  // namespace

int run_pump(const Args& args) {
  const int rows = static_cast<int>(args.num("rows", 20000));
  const int batch = static_cast<int>(args.num("batch", 1000));
  const int repeats = static_cast<int>(args.num("repeats", 3));
  auto ds = load_dataset(args.get("dataset", "../shared/datasets/scifact"));
  std::vector<std::string> texts;
  for (int i = 0; static_cast<int>(texts.size()) < rows; ++i) {
    const auto& d = ds.corpus[static_cast<std::size_t>(i) % ds.corpus.size()];
    texts.push_back(d.title + "\n\n" + d.text + " (copy " +
                    std::to_string(i / static_cast<int>(ds.corpus.size())) + ")");
  }
  std::stringstream specs(args.get("embedder", "hash:256,static:glove-100d"));
  std::vector<std::string> table = {
      "| embedder | rows | chunks | pump s (runs) | rows/s | chunks/s | provider alone s | "
      "overhead | provider alone, 2 threads s | overhead | by hand (same SQL) s | vs by hand | "
      "RSS MB after each run | peak MB |",
      "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"};
  for (std::string spec; std::getline(specs, spec, ',');) {
    std::vector<double> pump_s, direct_s, direct2_s, by_hand_s;
    std::string rss_line;
    double peak = 0;
    int chunks = 0, runs_last = 0;
    for (int rep = 0; rep < repeats; ++rep) {
      const fs::path work =
          fs::temp_directory_path() / ("quarry-bench-pump-" + std::to_string(::getpid()));
      fs::remove_all(work);
      fs::create_directories(work / "apps");
      make_app((work / "apps" / "app.db").string(), texts);
      std::ofstream(work / "apps" / "docs.json") << use_case(batch).dump(2);
      auto cat = catalog::Catalog::open((work / "catalog.db").string());
      pump::Pump pump(work.string(), *cat, secrets::secret_lookup(work.string()));
      pump.deploy((work / "apps").string(), spec, catalog::AuditEntry{});
      pump.list();  // loads the provider, as a server holds it loaded
      const double t0 = now_s();
      int processed = 0, runs = 0;
      chunks = 0;
      rss_line.clear();
      while (true) {
        auto r = pump.run("docs");
        ++runs;
        processed += r.processed;
        chunks += r.chunks;
        if (rep == repeats - 1) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%s%.0f", rss_line.empty() ? "" : " / ", rss_mb("VmRSS:"));
          rss_line += buf;
        }
        if (r.drained) break;
      }
      pump_s.push_back(now_s() - t0);
      runs_last = runs;
      peak = std::max(peak, rss_mb("VmHWM:"));
      if (processed != rows) {
        std::cerr << "pump processed " << processed << " of " << rows << " rows\n";
        return 1;
      }
      // Direct, same process, same texts, a fresh provider.
      embed::ProviderContext ctx;
      ctx.data_dir = work.string();
      auto p = embed::ProviderRegistry::builtin().create(embed::ProviderSpec::parse(spec), ctx);
      direct_s.push_back(direct(*p, texts));
      direct2_s.push_back(direct_two_threads(*p, texts));
      // By hand: a fresh app, the same statements.
      fs::remove(work / "apps" / "app.db");
      make_app((work / "apps" / "app.db").string(), texts);
      by_hand_s.push_back(direct_with_sql(*p, (work / "apps" / "app.db").string(), batch));
      fs::remove_all(work);
    }
    std::sort(pump_s.begin(), pump_s.end());
    std::sort(direct_s.begin(), direct_s.end());
    std::sort(by_hand_s.begin(), by_hand_s.end());
    std::sort(direct2_s.begin(), direct2_s.end());
    const double pm = pump_s[pump_s.size() / 2], dm = direct_s[direct_s.size() / 2],
                 d2 = direct2_s[direct2_s.size() / 2], hm = by_hand_s[by_hand_s.size() / 2];
    std::string runs_s;
    for (double s : pump_s)
      runs_s += (runs_s.empty() ? "" : " / ") + std::to_string(s).substr(0, 5);
    char row[512];
    std::snprintf(
        row, sizeof row,
        "| %s | %d | %d | %s (%d runs) | %.0f | %.0f | %.2f | %+.0f %% | %.2f | %+.0f %% | "
        "%.2f | %+.0f %% | %s | %.0f |",
        spec.c_str(), rows, chunks, runs_s.c_str(), runs_last, rows / pm, chunks / pm, dm,
        (pm / dm - 1) * 100, d2, (pm / d2 - 1) * 100, hm, (pm / hm - 1) * 100, rss_line.c_str(),
        peak);
    table.push_back(row);
    std::cout << json{{"bench", "pump"},
                      {"embedder", spec},
                      {"rows", rows},
                      {"chunks", chunks},
                      {"pump_s", pump_s},
                      {"direct_s", direct_s},
                      {"direct_two_threads_s", direct2_s},
                      {"overhead_vs_two_threads", pm / d2 - 1},
                      {"by_hand_s", by_hand_s},
                      {"overhead_vs_by_hand", pm / hm - 1},
                      {"rows_per_s", rows / pm},
                      {"chunks_per_s", chunks / pm},
                      {"overhead", pm / dm - 1},
                      {"peak_mb", peak}}
                     .dump()
              << std::endl;
  }
  std::cout << "\nquarry-bench pump, " << rows << " rows, batch_size " << batch << ", medians of "
            << repeats << "\n\n";
  for (const auto& r : table) std::cout << r << "\n";
  return 0;
}

}  // namespace quarry::bench
