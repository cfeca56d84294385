// The text content of tool results. Many MCP clients hand only the text blocks to the model,
// so the text carries what an agent needs to act (ids, offsets, line numbers, scores, the next
// cursor) in a compact readable form rather than the full JSON, which stays in
// structuredContent.
#include <cstdio>
#include <map>
#include <sstream>

#include "server/mcp_tools.h"

namespace quarry::server::mcp {

namespace {

std::string score(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::string status_line(const IndexStatus& s) {
  return "keyword " + s.keyword + ", vector " + s.vector;
}

std::string breadcrumbs(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& h : path) out += (out.empty() ? "" : " > ") + h;
  return out;
}

}  // namespace

std::string text_kbs(const std::vector<KbInfo>& kbs) {
  if (kbs.empty()) return "no knowledge bases (create one with `quarry kb create NAME`)";
  std::ostringstream o;
  for (const auto& k : kbs) {
    o << k.name << ": " << k.documents << " documents, " << k.chunks << " chunks; "
      << status_line(k.index_status);
    if (!k.config.description.empty()) o << " - " << k.config.description;
    o << "\n";
  }
  return o.str();
}

std::string text_search(const SearchResponse& r) {
  std::ostringstream o;
  o << r.hits.size() << " hit" << (r.hits.size() == 1 ? "" : "s") << " in '" << r.kb << "' ("
    << mode_name(r.mode) << "; index " << status_line(r.index_status) << ")\n";
  for (const auto& d : r.degraded) o << "degraded: " << d << "\n";
  if (!r.hint.empty()) o << "hint: " << r.hint << "\n";
  int n = 0;
  for (const auto& h : r.hits) {
    o << "\n" << ++n << ". " << h.filename;
    if (!h.heading_path.empty()) o << " > " << breadcrumbs(h.heading_path);
    o << "  [doc_id " << h.doc_id << ", offset " << h.offset << ", length " << h.length
      << ", score " << score(h.score) << "]\n";
    if (h.subject) o << "   subject " << h.subject->key << "=" << h.subject->value << "\n";
    o << "   " << h.snippet << "\n";
  }
  return o.str();
}

std::string text_grep(const GrepResponse& r) {
  std::ostringstream o;
  o << r.matches.size() << " matching line" << (r.matches.size() == 1 ? "" : "s") << " in "
    << r.files_matched << " of " << r.files_searched << " documents of '" << r.kb << "'"
    << (r.truncated ? " (truncated: raise max_matches or narrow the pattern)" : "") << "\n";
  // As grep prints them, per document: "N: match", "N- context", "--" between groups, each
  // line once (context lines of neighbouring matches overlap).
  std::vector<std::map<int, std::pair<std::string, bool>>> docs;
  std::vector<const GrepHit*> heads;
  for (const auto& m : r.matches) {
    if (heads.empty() || heads.back()->doc_id != m.doc_id) {
      heads.push_back(&m);
      docs.emplace_back();
    }
    auto& lines = docs.back();
    for (const auto& l : m.before) lines.emplace(l.line, std::pair{l.text, false});
    for (const auto& l : m.after) lines.emplace(l.line, std::pair{l.text, false});
    lines[m.line] = {m.text, true};
  }
  for (std::size_t i = 0; i < heads.size(); ++i) {
    o << "\n" << heads[i]->filename << " [doc_id " << heads[i]->doc_id << "]\n";
    int prev = 0;
    for (const auto& [n, line] : docs[i]) {
      if (prev > 0 && n > prev + 1) o << "--\n";
      o << n << (line.second ? ": " : "- ") << line.first << "\n";
      prev = n;
    }
  }
  return o.str();
}

std::string text_documents(const std::string& kb, const DocumentPage& page) {
  std::ostringstream o;
  o << page.documents.size() << " document" << (page.documents.size() == 1 ? "" : "s") << " of '"
    << kb << "'\n";
  for (const auto& d : page.documents) {
    o << d.id << "  " << d.filename;
    if (!d.title.empty() && d.title != d.filename) o << "  \"" << d.title << "\"";
    o << "  (" << d.chunk_count << " chunks; " << status_line(d.index_status) << ")\n";
  }
  if (!page.next_cursor.empty())
    o << "more: call again with cursor \"" << page.next_cursor << "\"\n";
  return o.str();
}

std::string text_kb_status(const KbInfo& k) {
  std::ostringstream o;
  o << k.name << ": " << k.documents << " documents, " << k.chunks << " chunks; "
    << status_line(k.index_status) << "\n";
  const auto& v = k.vectors;
  if (v.documents > 0 || !v.serving_revision.empty() || !v.building_revision.empty())
    o << "vectors: " << v.ready << "/" << v.documents << " documents ready, " << v.pending
      << " pending, " << v.failed << " failed"
      << (v.building_revision.empty() ? "" : "; building a new revision") << "\n";
  if (!v.unavailable_code.empty())
    o << "embedder unavailable [" << v.unavailable_code << "]: " << v.unavailable << "\n";
  return o.str();
}

std::string text_doc_status(const Document& d) {
  std::string s = d.id + " (" + d.filename + "): " + status_line(d.index_status);
  if (d.vector_failure)
    s += "; vector failed [" + d.vector_failure->code + "]: " + d.vector_failure->message;
  return s;
}

std::string text_ingest(const std::string& kb, const IngestItem& item) {
  std::string s = item.status + " " + item.path + " as " + item.doc_id + " in '" + kb + "' (" +
                  std::to_string(item.chunks) + " chunks";
  if (!item.vector_status.empty()) s += "; vector " + item.vector_status;
  if (!item.vector_code.empty()) s += " [" + item.vector_code + "]: " + item.vector_message;
  s += ")";
  for (const auto& w : item.warnings) s += "\nwarning: " + w;
  return s;
}

std::string text_error(const Error& e) {
  return std::string("error[") + code_name(e.code()) + "]: " + e.message();
}

}  // namespace quarry::server::mcp
