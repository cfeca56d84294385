#include "catalog/sqlite/read_rows.h"

#include <nlohmann/json.hpp>

namespace quarry::catalog {

const char* const kDocColumns =
    "d.id, k.name, d.filename, d.title, d.source_sha256, d.content_sha256, d.metadata,"
    " d.subject_key, d.subject_value, d.converter, d.raw_ext, d.source_bytes, d.markdown_bytes,"
    " d.body_offset, d.chunk_count, d.created_at, d.updated_at, d.chunking";

DocumentRow read_doc(const Stmt& s, int c) {
  DocumentRow d;
  d.id = s.str(c + 0);
  d.kb = s.str(c + 1);
  d.filename = s.str(c + 2);
  d.title = s.str(c + 3);
  d.source_sha256 = s.str(c + 4);
  d.content_sha256 = s.str(c + 5);
  d.metadata_json = s.str(c + 6);
  d.subject_key = s.opt_str(c + 7);
  d.subject_value = s.opt_str(c + 8);
  d.converter = s.str(c + 9);
  d.raw_ext = s.str(c + 10);
  d.source_bytes = s.i64(c + 11);
  d.markdown_bytes = s.i64(c + 12);
  d.body_offset = s.i64(c + 13);
  d.chunk_count = s.i64(c + 14);
  d.created_at = s.i64(c + 15);
  d.updated_at = s.i64(c + 16);
  d.chunking = s.str(c + 17);
  return d;
}

const char* const kChunkColumns =
    "c.chunk_index, c.chunk_id, c.parent_chunk, c.heading_path, c.offset, c.length,"
    " c.token_count, c.body";

ChunkRow read_chunk(const Stmt& s, int c) {
  ChunkRow r;
  r.index = static_cast<int>(s.i64(c + 0));
  r.chunk_id = s.str(c + 1);
  r.parent_chunk = s.opt_str(c + 2);
  r.heading_path = nlohmann::json::parse(s.str(c + 3)).get<std::vector<std::string>>();
  r.offset = s.i64(c + 4);
  r.length = s.i64(c + 5);
  r.token_count = static_cast<int>(s.i64(c + 6));
  r.text = s.str(c + 7);
  return r;
}

}  // namespace quarry::catalog
