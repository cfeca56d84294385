// The read tools: list_knowledge_bases, search, grep, read_document, list_documents,
// index_status. Each checks the caller's scope and KB before it leases an Engine (a caller
// without access learns nothing about what exists), then answers with the REST shape.
#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "server/mcp_tools.h"
#include "wire/requests.h"
#include "wire/wire.h"

namespace quarry::server::mcp {

namespace {

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int32_t>::max();

EnginePool::Lease lease(const ToolCall& c) {
  return c.engines.acquire(c.who.actor, "mcp");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(Code::not_found,
                "the document's Markdown file is missing; run `quarry docs "
                "reconvert` on it or ingest it again");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The stored file (front matter + body) and where its body starts. Ranges are addressed in the
// file because grep's line numbers and search hits' offsets are (docs/search.md). The body
// comes from the Engine, which knows where the front matter ends; a write between the two reads
// makes them disagree, so read again.
struct StoredFile {
  std::string text;
  std::size_t body = 0;
};

StoredFile stored_file(Engine& e, const std::string& kb, const Document& d) {
  for (int attempt = 0;; ++attempt) {
    StoredFile f{read_file(d.markdown_path), 0};
    std::string body = e.read_markdown(kb, d.id);
    if (f.text.size() >= body.size() &&
        f.text.compare(f.text.size() - body.size(), body.size(), body) == 0) {
      f.body = f.text.size() - body.size();
      return f;
    }
    if (attempt == 2)
      throw Error(Code::busy, "the document is being rewritten; try again", {{"doc_id", d.id}});
  }
}

// 1-based line number of the line containing byte `pos`.
std::int64_t line_of(const std::string& text, std::size_t pos) {
  pos = std::min(pos, text.size());
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n');
}

// Lines in the file: a final '\n' ends the last line rather than starting an empty one.
std::int64_t count_lines(const std::string& text) {
  if (text.empty()) return 0;
  return line_of(text, text.size()) - (text.back() == '\n' ? 1 : 0);
}

// Byte offset where line `n` (1-based) starts; text.size() past the end.
std::size_t line_start(const std::string& text, std::int64_t n) {
  std::size_t pos = 0;
  for (std::int64_t i = 1; i < n; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return text.size();
    ++pos;
  }
  return pos;
}

std::size_t line_end(const std::string& text, std::size_t start) {
  std::size_t e = text.find('\n', start);
  return e == std::string::npos ? text.size() : e;
}

bool continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

struct Range {
  std::size_t begin = 0, end = 0;
};

Range line_range(const std::string& text, const Args& a) {
  const std::int64_t total = count_lines(text);
  const std::int64_t first = a.integer("start_line", 1, kMaxInt).value_or(1);
  const std::int64_t last = std::min(a.integer("end_line", 1, kMaxInt).value_or(total), total);
  if (first > total)
    throw Error(Code::invalid_argument,
                "start_line " + std::to_string(first) + " is past the end: the document has " +
                    std::to_string(total) + " lines",
                {{"field", "start_line"}, {"total_lines", std::to_string(total)}});
  if (last < first)
    throw Error(Code::invalid_argument, "end_line must not be before start_line",
                {{"field", "end_line"}});
  const std::size_t b = line_start(text, first);
  return {b, line_end(text, line_start(text, last))};
}

// A byte range, widened to whole UTF-8 characters so the content stays valid text.
Range byte_range(const std::string& text, const Args& a) {
  const auto off = static_cast<std::size_t>(
      a.integer("offset", 0, std::numeric_limits<std::int64_t>::max()).value_or(0));
  if (off > text.size())
    throw Error(Code::invalid_argument,
                "offset " + std::to_string(off) + " is past the end: the document has " +
                    std::to_string(text.size()) + " bytes",
                {{"field", "offset"}, {"total_bytes", std::to_string(text.size())}});
  const auto len = a.integer("length", 0, std::numeric_limits<std::int64_t>::max());
  Range r{off, len ? std::min(text.size(), off + static_cast<std::size_t>(*len)) : text.size()};
  while (r.begin > 0 && continuation_byte(text[r.begin])) --r.begin;
  while (r.end < text.size() && continuation_byte(text[r.end])) ++r.end;
  return r;
}

json kb_status_json(const KbInfo& k) {
  return {{"kb", k.name},
          {"index_status", wire::to_json(k.index_status)},
          {"documents", k.documents},
          {"chunks", k.chunks},
          {"revision", k.revision},
          {"vectors", wire::to_json(k.vectors)}};
}

json doc_status_json(const Document& d) {
  json j = {{"kb", d.kb},
            {"doc_id", d.id},
            {"filename", d.filename},
            {"index_status", wire::to_json(d.index_status)}};
  if (d.vector_failure)
    j["vector_error"] = {{"code", d.vector_failure->code}, {"message", d.vector_failure->message}};
  return j;
}

}  // namespace

json document_json(const Document& d) {
  return wire::remote_document_json(d);
}

ToolOutput run_list_knowledge_bases(const ToolCall& c) {
  require(c.who, Scope::read);
  std::vector<KbInfo> visible;
  for (auto& k : lease(c)->list_kbs())
    if (may_reach(c.who, k.name) && (c.opts.kb.empty() || k.name == c.opts.kb))
      visible.push_back(std::move(k));
  json arr = json::array();
  for (const auto& k : visible) arr.push_back(wire::to_json(k));
  return {{{"knowledge_bases", arr}}, text_kbs(visible)};
}

// search and grep decode their arguments with the codec, as REST and the CLI do: the same
// defaults (mode auto, max_matches 1000) and bounds on every surface.
ToolOutput run_search(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  require(c.who, Scope::read, kb);
  const SearchRequest r = wire::decode_search(c.args.request(), kb);
  SearchResponse resp = lease(c)->search(r);
  return {wire::to_json(resp), text_search(resp)};
}

ToolOutput run_grep(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  require(c.who, Scope::read, kb);
  const GrepRequest r = wire::decode_grep(c.args.request(), kb);
  GrepResponse resp = lease(c)->grep(r);
  return {wire::to_json(resp), text_grep(resp)};
}

ToolOutput run_read_document(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  require(c.who, Scope::read, kb);
  const std::string id = c.args.required_string("doc_id");
  const bool by_lines = c.args.has("start_line") || c.args.has("end_line");
  const bool by_bytes = c.args.has("offset") || c.args.has("length");
  if (by_lines && by_bytes)
    throw Error(Code::invalid_argument,
                "give a line range (start_line/end_line) or a byte range (offset/length), not both",
                {{"field", "offset"}});
  auto e = lease(c);
  const Document d = e->get_document(kb, id);
  const StoredFile f = stored_file(*e, kb, d);
  Range r{f.body, f.text.size()};
  if (by_lines) r = line_range(f.text, c.args);
  if (by_bytes) r = byte_range(f.text, c.args);

  const std::string content = f.text.substr(r.begin, r.end - r.begin);
  const std::int64_t first = line_of(f.text, r.begin);
  const std::int64_t last = r.end > r.begin ? line_of(f.text, r.end - 1) : first;
  const std::int64_t total = count_lines(f.text);
  json out = {{"kb", kb},
              {"doc_id", d.id},
              {"filename", d.filename},
              {"title", d.title},
              {"content", content},
              {"start_line", first},
              {"end_line", last},
              {"total_lines", total},
              {"offset", r.begin},
              {"length", r.end - r.begin},
              {"total_bytes", f.text.size()}};
  if (!by_lines && !by_bytes) return {out, content};
  std::string head = "[" + d.filename + " (" + d.id + "), lines " + std::to_string(first) + "-" +
                     std::to_string(last) + " of " + std::to_string(total) + "]\n";
  return {out, head + content};
}

ToolOutput run_list_documents(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  require(c.who, Scope::read, kb);
  const std::string cursor = c.args.string("cursor").value_or("");
  const int limit = static_cast<int>(c.args.integer("limit", 1, 1000).value_or(50));
  const std::string filter = c.args.object_text("filter");
  DocumentPage page = lease(c)->list_documents(kb, cursor, limit, filter);
  json docs = json::array();
  for (const auto& d : page.documents) docs.push_back(document_json(d));
  json next = page.next_cursor.empty() ? json(nullptr) : json(page.next_cursor);
  return {{{"kb", kb}, {"documents", docs}, {"next_cursor", next}}, text_documents(kb, page)};
}

ToolOutput run_index_status(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  require(c.who, Scope::read, kb);
  auto doc_id = c.args.string("doc_id");
  auto e = lease(c);
  if (doc_id && !doc_id->empty()) {
    Document d = e->get_document(kb, *doc_id);
    return {doc_status_json(d), text_doc_status(d)};
  }
  KbInfo k = e->describe_kb(kb);
  return {kb_status_json(k), text_kb_status(k)};
}

}  // namespace quarry::server::mcp
