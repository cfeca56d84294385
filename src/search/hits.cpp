#include "search/hits.h"

namespace quarry::search {

Hit make_hit(catalog::KeywordRow& r, double score, double raw_score, const std::string& metric) {
  Hit h;
  h.kb = r.doc.kb;
  h.doc_id = r.doc.id;
  h.filename = r.doc.filename;
  h.title = r.doc.title;
  h.chunk_id = r.chunk.chunk_id;
  h.chunk_index = r.chunk.index;
  h.parent_chunk = r.chunk.parent_chunk;
  h.heading_path = std::move(r.chunk.heading_path);
  h.offset = r.chunk.offset;
  h.length = r.chunk.length;
  h.raw_score = raw_score;
  h.score = score;
  h.metric = metric;
  if (r.doc.subject_key && r.doc.subject_value)
    h.subject = Subject{*r.doc.subject_key, *r.doc.subject_value};
  h.metadata_json = std::move(r.doc.metadata_json);
  return h;
}

}  // namespace quarry::search
