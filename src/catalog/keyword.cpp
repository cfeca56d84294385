// Keyword search over one KB's FTS5 table, in two phases: rank every matching chunk with
// quarry_bm25() keeping only rowids (cheap), then read chunk, document and snippet for the top
// rows alone (snippet() is the expensive part and only k rows need it).
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "catalog/filter_sql.h"
#include "catalog/schema.h"
#include "catalog/snippet.h"
#include "catalog/sqlite.h"
#include "quarry/error.h"

namespace quarry::catalog {
namespace {

bool is_query_syntax_error(const Error& e) {
  const std::string& m = e.message();
  return m.find("fts5") != std::string::npos || m.find("syntax error") != std::string::npos ||
         m.find("no such column") != std::string::npos ||
         m.find("unterminated string") != std::string::npos;
}

}  // namespace

std::vector<KeywordRow> Catalog::keyword_search(const std::string& kb,
                                                const KeywordQuery& q) const {
  KbRow k = get_kb(kb);
  const std::string fts = fts_table(k.id);
  SqlFilter f = compile_filter(q.filter, "d.metadata");
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
  try {
    Stmt s(db_, sql);
    int i = 1;
    for (int rep = 0; rep < 2; ++rep)
      for (double p :
           {q.params.k1, q.params.b, q.params.w_title, q.params.w_headings, q.params.w_body})
        s.bind(i++, p);
    s.bind(i++, q.match);
    if (filtered) i = bind_filter(s, f, i);
    s.bind(i, q.limit);
    while (s.step()) {
      KeywordRow r;
      r.rowid = s.i64(0);
      r.raw_score = s.f64(1);
      r.max_score = s.f64(2);
      rows.push_back(std::move(r));
    }
  } catch (const Error& e) {
    if (e.code() == Code::internal && is_query_syntax_error(e))
      throw Error(Code::invalid_argument, "invalid advanced query: " + e.message(),
                  {{"field", "query"}});
    throw;
  }
  return rows;
}

void Catalog::load_keyword_rows(KeywordRow* begin, KeywordRow* end) const {
  Stmt detail(
      db_,
      "SELECT c.chunk_index, c.chunk_id, c.parent_chunk, c.heading_path, c.offset, c.length,"
      " c.token_count, c.body, d.id, k.name, d.filename, d.title, d.source_sha256,"
      " d.content_sha256, d.metadata, d.subject_key, d.subject_value, d.converter, d.raw_ext,"
      " d.source_bytes, d.markdown_bytes, d.body_offset, d.chunk_count, d.created_at,"
      " d.updated_at FROM chunks c JOIN documents d ON d.id = c.doc_id"
      " JOIN kbs k ON k.id = d.kb_id WHERE c.id = ?");
  for (KeywordRow* r = begin; r != end; ++r) {
    if (r->loaded) continue;
    detail.reset();
    detail.bind(1, r->rowid);
    if (!detail.step()) continue;
    r->loaded = true;
    r->chunk.index = static_cast<int>(detail.i64(0));
    r->chunk.chunk_id = detail.str(1);
    r->chunk.parent_chunk = detail.opt_str(2);
    r->chunk.heading_path = nlohmann::json::parse(detail.str(3)).get<std::vector<std::string>>();
    r->chunk.offset = detail.i64(4);
    r->chunk.length = detail.i64(5);
    r->chunk.token_count = static_cast<int>(detail.i64(6));
    r->chunk.text = detail.str(7);
    DocumentRow& d = r->doc;
    d.id = detail.str(8);
    d.kb = detail.str(9);
    d.filename = detail.str(10);
    d.title = detail.str(11);
    d.source_sha256 = detail.str(12);
    d.content_sha256 = detail.str(13);
    d.metadata_json = detail.str(14);
    d.subject_key = detail.opt_str(15);
    d.subject_value = detail.opt_str(16);
    d.converter = detail.str(17);
    d.raw_ext = detail.str(18);
    d.source_bytes = detail.i64(19);
    d.markdown_bytes = detail.i64(20);
    d.body_offset = detail.i64(21);
    d.chunk_count = detail.i64(22);
    d.created_at = detail.i64(23);
    d.updated_at = detail.i64(24);
  }
}

std::vector<std::string> Catalog::snippets(const std::string& query,
                                           const std::vector<const std::string*>& texts) const {
  Snippeter s(db_, query);
  std::vector<std::string> out;
  out.reserve(texts.size());
  for (const auto* t : texts) out.push_back(s.make(*t));
  return out;
}

}  // namespace quarry::catalog
