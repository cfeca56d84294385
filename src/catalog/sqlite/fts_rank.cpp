// quarry_bm25(fts, k1, b, w_title, w_headings, w_body, want_max): a BM25F ranking function for
// the per-KB FTS5 tables (columns title, headings, body).
//
// Why not FTS5's bm25(): it fixes k1 = 1.2 and b = 0.75 and normalises every column by the
// length of the whole row. BM25F normalises each field by its own average length before
// weighting, then saturates once (Robertson & Zaragoza 2009), which lets a short title count
// double without being swamped by the body's length. IDF is Lucene's always-positive form,
// ln(1 + (N - n + 0.5) / (n + 0.5)), so very common terms score little but never negatively.
//
// With want_max = 1 it returns the query's theoretical maximum, sum(idf) * (k1 + 1), the limit
// of the score as every term frequency grows; score / max is the [0, 1] score of SPEC §4.
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "catalog/sqlite/schema.h"

namespace quarry::catalog {
namespace {

constexpr int kColumns = 3;

struct QueryStats {
  int phrases = 0;
  double rows = 0;
  double avg_len[kColumns] = {1, 1, 1};
  std::vector<double> idf;
  double idf_sum = 0;
};

int count_row(const Fts5ExtensionApi*, Fts5Context*, void* user) {
  ++*static_cast<sqlite3_int64*>(user);
  return SQLITE_OK;
}

void free_stats(void* p) {
  delete static_cast<QueryStats*>(p);
}

// Computed once per query and cached on the FTS5 cursor.
QueryStats* query_stats(const Fts5ExtensionApi* api, Fts5Context* ctx, bool robertson, int* rc) {
  auto* s = static_cast<QueryStats*>(api->xGetAuxdata(ctx, 0));
  if (s) return s;
  auto stats = std::make_unique<QueryStats>();
  sqlite3_int64 rows = 0;
  *rc = api->xRowCount(ctx, &rows);
  if (*rc != SQLITE_OK) return nullptr;
  stats->rows = static_cast<double>(rows);
  for (int c = 0; c < kColumns; ++c) {
    sqlite3_int64 total = 0;
    *rc = api->xColumnTotalSize(ctx, c, &total);
    if (*rc != SQLITE_OK) return nullptr;
    stats->avg_len[c] = rows > 0 ? std::max(1.0, static_cast<double>(total) / rows) : 1.0;
  }
  stats->phrases = api->xPhraseCount(ctx);
  stats->idf.resize(static_cast<std::size_t>(stats->phrases));
  for (int p = 0; p < stats->phrases; ++p) {
    sqlite3_int64 hits = 0;
    *rc = api->xQueryPhrase(ctx, p, &hits, count_row);
    if (*rc != SQLITE_OK) return nullptr;
    double n = static_cast<double>(hits);
    // Robertson-Sparck Jones IDF (floored: a term in over half the rows adds almost nothing)
    // or Lucene's always-positive variant.
    stats->idf[static_cast<std::size_t>(p)] =
        robertson ? std::max(1e-6, std::log((stats->rows - n + 0.5) / (n + 0.5)))
                  : std::log(1.0 + (stats->rows - n + 0.5) / (n + 0.5));
    stats->idf_sum += stats->idf[static_cast<std::size_t>(p)];
  }
  s = stats.release();
  *rc = api->xSetAuxdata(ctx, s, free_stats);
  return *rc == SQLITE_OK ? s : nullptr;
}

void bm25f(const Fts5ExtensionApi* api, Fts5Context* ctx, sqlite3_context* out, int argc,
           sqlite3_value** argv) {
  double k1 = argc > 0 ? sqlite3_value_double(argv[0]) : 1.2;
  double b = argc > 1 ? sqlite3_value_double(argv[1]) : 0.75;
  double w[kColumns] = {2.0, 1.0, 1.0};
  for (int c = 0; c < kColumns; ++c)
    if (argc > 2 + c) w[c] = sqlite3_value_double(argv[2 + c]);
  bool want_max = argc > 5 && sqlite3_value_int(argv[5]) != 0;
  bool robertson = argc > 6 && sqlite3_value_int(argv[6]) != 0;

  int rc = SQLITE_OK;
  QueryStats* s = query_stats(api, ctx, robertson, &rc);
  if (!s) {
    sqlite3_result_error_code(out, rc);
    return;
  }
  if (want_max) {
    sqlite3_result_double(out, s->idf_sum * (k1 + 1));
    return;
  }

  // Per-field length normalisation factors for this row.
  double norm[kColumns];
  for (int c = 0; c < kColumns; ++c) {
    int len = 0;
    if ((rc = api->xColumnSize(ctx, c, &len)) != SQLITE_OK) {
      sqlite3_result_error_code(out, rc);
      return;
    }
    norm[c] = w[c] / (1.0 - b + b * len / s->avg_len[c]);
  }
  // Weighted, normalised term frequency per phrase.
  thread_local std::vector<double> tf;
  tf.assign(static_cast<std::size_t>(s->phrases), 0.0);
  int inst = 0;
  if ((rc = api->xInstCount(ctx, &inst)) != SQLITE_OK) {
    sqlite3_result_error_code(out, rc);
    return;
  }
  for (int i = 0; i < inst; ++i) {
    int phrase = 0, col = 0, off = 0;
    if (api->xInst(ctx, i, &phrase, &col, &off) != SQLITE_OK) continue;
    if (phrase >= 0 && phrase < s->phrases && col >= 0 && col < kColumns)
      tf[static_cast<std::size_t>(phrase)] += norm[col];
  }
  double score = 0;
  for (int p = 0; p < s->phrases; ++p) {
    double t = tf[static_cast<std::size_t>(p)];
    if (t > 0) score += s->idf[static_cast<std::size_t>(p)] * t * (k1 + 1) / (t + k1);
  }
  sqlite3_result_double(out, score);
}

}  // namespace

fts5_api* fts5_api_of(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, nullptr) != SQLITE_OK) return nullptr;
  sqlite3_bind_pointer(st, 1, &api, "fts5_api_ptr", nullptr);
  sqlite3_step(st);
  sqlite3_finalize(st);
  return api;
}

void register_rank_function(fts5_api* api) {
  if (api) api->xCreateFunction(api, "quarry_bm25", nullptr, bm25f, nullptr);
}

}  // namespace quarry::catalog
