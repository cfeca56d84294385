// Keyword search over one KB's FTS5 table, in two phases: rank every matching chunk with
// quarry_bm25() keeping only rowids (cheap), then read chunk, document and snippet for the top
// rows alone (snippet() is the expensive part and only k rows need it).
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "catalog/sqlite/filter_sql.h"
#include "catalog/sqlite/fts_tokenizer.h"
#include "catalog/sqlite/memory_index.h"
#include "catalog/sqlite/read_rows.h"
#include "catalog/sqlite/schema.h"
#include "catalog/sqlite/snippet.h"
#include "catalog/sqlite/tables.h"
#include "quarry/error.h"

namespace quarry::catalog {
std::vector<KeywordRow> SqliteKeywordIndex::search(const KbRef& kb, const KeywordQuery& q) const {
  const std::string fts = fts_table(kb.id);
  SqlFilter f = compile_filter(q.filter, "d");
  const bool filtered = !q.filter.empty();
  std::string rank = "quarry_bm25(" + fts + ", ?, ?, ?, ?, ?, ";
  const std::string idf = q.params.robertson_idf ? ", 1)" : ", 0)";
  std::string sql =
      "SELECT " + fts + ".rowid, " + rank + "0" + idf + " AS s, " + rank + "1" + idf + " FROM " +
      fts +
      (filtered ? " JOIN chunks c ON c.id = " + fts + ".rowid JOIN documents d ON d.id = c.doc_id"
                : "") +
      " WHERE " + fts + " MATCH ?" + (filtered ? " AND " + f.sql : "") + " ORDER BY s DESC LIMIT ?";
  std::vector<KeywordRow> rows;
  Stmt s(db_, sql);  // per-KB table: not kept
  int i = 1;
  for (int rep = 0; rep < 2; ++rep)
    for (double p :
         {q.params.k1, q.params.b, q.params.w_title, q.params.w_headings, q.params.w_body})
      s.bind(i++, p);
  s.bind(i++, q.match);
  if (filtered) i = bind_filter(s, f, i);
  s.bind(i, q.limit);
  try {
    while (s.step()) {
      KeywordRow r;
      r.rowid = s.i64(0);
      r.raw_score = s.f64(1);
      r.max_score = s.f64(2);
      rows.push_back(std::move(r));
    }
  } catch (const Error& e) {
    // The SQL is fixed and the filter cannot fail, so a plain error here is FTS5 refusing the
    // query: only an advanced query reaches it unquoted (a simple query is always valid).
    if (e.code() != Code::internal || !q.advanced) throw;
    throw Error(Code::invalid_argument,
                "invalid advanced query '" + q.match + "': FTS5 says \"" +
                    std::string(sqlite3_errmsg(db_)) +
                    "\"; write FTS5 syntax (words, \"quoted phrases\", prefix*, AND, OR, NOT, "
                    "NEAR(...), column:word) or search without advanced",
                {{"field", "query"}});
  }
  return rows;
}

namespace {

// The in-memory keyword copies of this process, shared by every Catalog (a server holds one
// Engine per worker thread: each building its own copy would cost memory and seconds per
// thread). Keyed by (database file, KB id); a copy answers only for the KB it was built from
// (SQLite reuses a deleted KB's id, so the creation time is checked too) and for the
// generation it was built from. While one thread builds a copy, the others answer from FTS5
// (same ranking).
class SharedKeywordIndexes {
 public:
  static SharedKeywordIndexes& get() {
    static SharedKeywordIndexes instance;
    return instance;
  }

  template <class Build>
  std::shared_ptr<const MemoryIndex> find_or_build(const std::string& db, std::int64_t kb_id,
                                                   std::int64_t created_at, std::int64_t generation,
                                                   bool may_build, Build build) {
    const auto key = std::make_pair(db, kb_id);
    {
      std::lock_guard lk(mu_);
      Entry& e = entries_[key];
      if (e.created_at != created_at) {  // another KB under a reused id: drop the old copy
        e.index.reset();
        e.created_at = created_at;
      }
      if (e.index && e.index->generation() == generation) return e.index;
      if (e.building || !may_build) return nullptr;
      e.building = true;
    }
    std::shared_ptr<const MemoryIndex> built;
    try {
      built = build();
    } catch (...) {
      std::lock_guard lk(mu_);
      entries_[key].building = false;
      throw;
    }
    std::lock_guard lk(mu_);
    Entry& e = entries_[key];
    e.building = false;
    if (e.created_at == created_at && (!e.index || e.index->generation() < generation))
      e.index = built;
    return built;
  }

 private:
  struct Entry {
    std::shared_ptr<const MemoryIndex> index;
    std::int64_t created_at = 0;
    bool building = false;
  };
  std::mutex mu_;
  std::map<std::pair<std::string, std::int64_t>, Entry> entries_;
};

}  // namespace

std::optional<std::vector<KeywordRow>> SqliteKeywordIndex::search_cached(
    const KbRef& kb, const std::vector<std::string>& words, int limit, const Bm25Params& p) const {
  if (!d_.memory_index_enabled) return std::nullopt;
  Stmt s(*stmts_, "SELECT generation, created_at, keyword_tokenizer FROM kbs WHERE id = ?");
  s.bind(1, kb.id);
  if (!s.step()) throw_kb_not_found(kb.name);
  const std::int64_t kb_id = kb.id, generation = s.i64(0), created_at = s.i64(1);
  const FtsTokenizer& tokenizer = d_.tokenizer_for(s.str(2));
  if (!tokenizer.ok()) return std::nullopt;

  std::vector<std::string> terms;
  for (const auto& w : words) {
    int n = 0;
    tokenizer.tokenize(w, FTS5_TOKENIZE_QUERY, [&](std::string_view tok, int, int) {
      if (++n == 1) terms.emplace_back(tok);
    });
    if (n != 1) return std::nullopt;  // a phrase: FTS5 matches token adjacency
  }
  // One-shot processes (a CLI search) are served by FTS5 alone; the copy pays off from a
  // KB's second query on.
  const bool repeat = ++d_.keyword_queries[kb_id] >= 2;
  auto index = SharedKeywordIndexes::get().find_or_build(
      d_.path, kb_id, created_at, generation, repeat,
      [&] { return std::make_shared<const MemoryIndex>(db_, tokenizer, kb_id, generation); });
  if (!index) return std::nullopt;
  return index->search(terms, limit, p);
}

void SqliteKeywordIndex::load_rows(KeywordRow* begin, KeywordRow* end) const {
  Stmt detail(*stmts_, std::string("SELECT ") + kChunkColumns + ", " + kDocColumns +
                           " FROM chunks c JOIN documents d ON d.id = c.doc_id"
                           " JOIN kbs k ON k.id = d.kb_id WHERE c.id = ?");
  for (KeywordRow* r = begin; r != end; ++r) {
    if (r->loaded) continue;
    detail.reset();
    detail.bind(1, r->rowid);
    if (!detail.step()) continue;
    r->loaded = true;
    r->chunk = read_chunk(detail);
    r->doc = read_doc(detail, kChunkColumnCount);
  }
}

void SqliteKeywordIndex::load_keys(KeywordRow* begin, KeywordRow* end) const {
  Stmt key(*stmts_, "SELECT doc_id, chunk_index, chunk_id, parent_chunk FROM chunks WHERE id = ?");
  for (KeywordRow* r = begin; r != end; ++r) {
    if (r->loaded || r->keyed) continue;
    key.reset();
    key.bind(1, r->rowid);
    if (!key.step()) continue;
    r->keyed = true;
    r->doc.id = key.str(0);
    r->chunk.index = static_cast<int>(key.i64(1));
    r->chunk.chunk_id = key.str(2);
    r->chunk.parent_chunk = key.opt_str(3);
  }
}

std::vector<KeywordRow> SqliteKeywordIndex::load_chunks(const KbRef& kb,
                                                        const std::vector<ChunkKey>& keys) const {
  Stmt detail(*stmts_, std::string("SELECT c.id, ") + kChunkColumns + ", " + kDocColumns +
                           " FROM chunks c JOIN documents d ON d.id = c.doc_id"
                           " JOIN kbs k ON k.id = d.kb_id"
                           " WHERE c.kb_id = ? AND c.doc_id = ? AND c.chunk_index = ?");
  std::vector<KeywordRow> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    detail.reset();
    detail.bind(1, kb.id);
    detail.bind(2, keys[i].doc_id);
    detail.bind(3, keys[i].chunk_index);
    if (!detail.step()) continue;
    out[i].rowid = detail.i64(0);
    out[i].loaded = true;
    out[i].chunk = read_chunk(detail, 1);
    out[i].doc = read_doc(detail, 1 + kChunkColumnCount);
  }
  return out;
}

core::KeywordAnalysis SqliteKeywordIndex::analysis(const KbRef& kb) const {
  return fts_analysis(d_.keyword_tokenize(kb.id, kb.name));
}

std::vector<Snippet> SqliteKeywordIndex::snippets(
    const KbRef& kb, const std::string& query, const std::vector<const std::string*>& texts) const {
  const std::string tokenize = d_.keyword_tokenize(kb.id, kb.name);
  Snippeter s(d_.tokenizer_for(tokenize), query, fts_analysis(tokenize).segmented);
  std::vector<Snippet> out;
  out.reserve(texts.size());
  for (const auto* t : texts) out.push_back(s.make(*t));
  return out;
}

}  // namespace quarry::catalog
