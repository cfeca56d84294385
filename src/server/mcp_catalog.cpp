// What each MCP tool is: its name, the description an agent reads to choose it, the JSON Schema
// of its arguments and of its structured result, and its annotations. The descriptions are
// the agent's only manual, so they say when to use a tool and how the tools chain (search or
// grep -> read_document with the hit's range).
#include "server/mcp_tools.h"
#include "wire/requests.h"

namespace quarry::server::mcp {

namespace {

json prop(const char* type, const char* description) {
  return {{"type", type}, {"description", description}};
}

json int_prop(const char* description, std::int64_t min, std::int64_t max, std::int64_t def) {
  return {{"type", "integer"},
          {"description", description},
          {"minimum", min},
          {"maximum", max},
          {"default", def}};
}

// An input schema; `kb` is added (required unless the server has a --kb default).
json input(const McpOptions& o, json properties, std::vector<std::string> required,
           bool with_kb = true) {
  if (with_kb) {
    json kb = prop("string", "Knowledge base name (list_knowledge_bases names them)");
    if (!o.kb.empty())
      kb["default"] = o.kb;
    else
      required.insert(required.begin(), "kb");
    properties["kb"] = kb;
  }
  json s = {{"type", "object"}, {"properties", properties}, {"additionalProperties", false}};
  if (!required.empty()) s["required"] = required;
  return s;
}

json filter_prop() {
  return prop("object",
              "Metadata filter: equality ({\"lang\": \"en\"}) or operators $eq $ne $gt $gte $lt "
              "$lte $in $nin $exists $and $or ({\"year\": {\"$gte\": 2020}})");
}

json doc_id_prop() {
  return prop("string", "Document id (a ULID, as in hits and listings)");
}

json in_kbs(const McpOptions& o) {
  return input(o, json::object(), {}, false);
}
json in_search(const McpOptions& o) {
  return input(
      o,
      {{"query", prop("string", "What to look for, in natural language or keywords")},
       {"mode",
        {{"type", "string"},
         {"enum", {"auto", "keyword", "vector", "hybrid", "grep"}},
         {"default", mode_name(kDefaultMode)},
         {"description",
          "auto: hybrid where the KB has an embedder, else keyword. keyword: BM25. vector: "
          "semantic. hybrid: both fused. grep: regular expression over chunks"}}},
       {"top_k", int_prop("Number of hits", 1, wire::kTopKMax, wire::kTopKDefault)},
       {"filter", filter_prop()},
       {"min_score", {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}},
       {"fusion", {{"type", "string"}, {"enum", {"interpolation", "rrf"}}}},
       {"semantic_ratio", {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}},
       {"advanced",
        prop("boolean", "Keyword mode: FTS5 syntax (\"phrases\", AND/OR/NOT, prefix*, NEAR)")}},
      {"query"});
}
json in_grep(const McpOptions& o) {
  return input(o,
               {{"pattern", prop("string", "RE2 regular expression (or text with literal=true)")},
                {"literal", prop("boolean", "Match the pattern as plain text")},
                {"ignore_case", prop("boolean", "Case-insensitive")},
                {"word", prop("boolean", "Whole words only (grep -w)")},
                {"invert", prop("boolean", "The lines that do not match (grep -v)")},
                {"context",
                 int_prop("Lines of context before and after each match", 0, wire::kContextMax, 0)},
                {"before_context", int_prop("Lines of context before each match (default: context)",
                                            0, wire::kContextMax, 0)},
                {"after_context", int_prop("Lines of context after each match (default: context)",
                                           0, wire::kContextMax, 0)},
                {"max_matches", int_prop("Stop after this many matching lines", 1,
                                         wire::kMaxMatchesMax, wire::kMaxMatchesDefault)},
                {"filter", filter_prop()}},
               {"pattern"});
}
json in_read(const McpOptions& o) {
  auto at_least = [](int min, const char* description) {
    return json{{"type", "integer"}, {"minimum", min}, {"description", description}};
  };
  return input(
      o,
      {{"doc_id", doc_id_prop()},
       {"start_line", at_least(1, "First line, 1-based, counted in the stored file as grep does")},
       {"end_line", at_least(1, "Last line, inclusive (default: the end)")},
       {"offset", at_least(0, "Byte offset into the stored file, as a search hit's offset")},
       {"length", at_least(0, "Bytes from offset, as a search hit's length (default: the rest)")}},
      {"doc_id"});
}
json in_list_docs(const McpOptions& o) {
  return input(o,
               {{"cursor", prop("string", "next_cursor of the previous page")},
                {"limit", int_prop("Page size", 1, 1000, 50)},
                {"filter", filter_prop()}},
               {});
}
json in_status(const McpOptions& o) {
  return input(o, {{"doc_id", prop("string", "One document's status instead of the KB's")}}, {});
}
json in_add(const McpOptions& o) {
  return input(
      o,
      {{"filename", prop("string",
                         "Name with an extension that picks the converter: .md, .txt, "
                         ".html, .csv, source code...")},
       {"content", prop("string", "The document's text")},
       {"content_base64", prop("string",
                               "The document's bytes in base64, for binary formats (.pdf, "
                               ".docx); instead of content")},
       {"metadata", prop("object", "Metadata stored with the document (filters match on it)")},
       {"replace", prop("boolean",
                        "Update the document of the same filename in place if its content "
                        "changed (else a changed file of the same name is a conflict)")}},
      {"filename"});
}
json in_edit(const McpOptions& o) {
  return input(o,
               {{"doc_id", doc_id_prop()},
                {"content", prop("string", "The new Markdown body (replaces the whole body)")}},
               {"doc_id", "content"});
}
json in_delete(const McpOptions& o) {
  return input(o, {{"doc_id", doc_id_prop()}}, {"doc_id"});
}

json out_kbs() {
  return output_schema({{"knowledge_bases", {{"type", "array"}, {"items", kb_schema()}}}},
                       {"knowledge_bases"});
}
json out_search() {
  return output_schema(search_schema(), {"kb", "mode", "hits", "index_status"});
}
json out_grep() {
  return output_schema(grep_schema(), {"kb", "matches", "truncated"});
}
json out_read() {
  auto i = [] { return json{{"type", "integer"}}; };
  auto s = [] { return json{{"type", "string"}}; };
  return output_schema({{"kb", s()},
                        {"doc_id", s()},
                        {"filename", s()},
                        {"title", s()},
                        {"content", s()},
                        {"start_line", i()},
                        {"end_line", i()},
                        {"total_lines", i()},
                        {"offset", i()},
                        {"length", i()},
                        {"total_bytes", i()}},
                       {"kb", "doc_id", "content", "start_line", "end_line", "total_lines",
                        "offset", "length", "total_bytes"});
}
json out_list_docs() {
  return output_schema({{"kb", {{"type", "string"}}},
                        {"documents", {{"type", "array"}, {"items", document_schema()}}},
                        {"next_cursor", {{"type", json::array({"string", "null"})}}}},
                       {"kb", "documents", "next_cursor"});
}
json out_status() {
  json props = {{"kb", {{"type", "string"}}},
                {"doc_id", {{"type", "string"}}},
                {"filename", {{"type", "string"}}},
                {"index_status", index_status_schema()},
                {"vector_error", {{"type", "object"}}},
                {"documents", {{"type", "integer"}}},
                {"chunks", {{"type", "integer"}}},
                {"revision", {{"type", "string"}}},
                {"vectors", kb_schema()["properties"]["vectors"]}};
  return output_schema(props, {"kb", "index_status"});
}
json out_ingest() {
  return output_schema(ingest_item_schema(), {"kb", "status", "doc_id"});
}
json out_document() {
  json props = document_schema()["properties"];
  return output_schema(props, {"id", "kb", "filename", "index_status"});
}
json out_deleted() {
  return output_schema({{"kb", {{"type", "string"}}},
                        {"doc_id", {{"type", "string"}}},
                        {"deleted", {{"type", "boolean"}}}},
                       {"kb", "doc_id", "deleted"});
}

const char* kListKbs =
    "List the knowledge bases you can reach, with document counts and index status. Start here "
    "to learn which `kb` to pass to the other tools.";
const char* kSearch =
    "Search a knowledge base and get the best-matching chunks (doc_id, filename, heading path, "
    "snippet, score, and the chunk's offset/length in the stored file). Pass a hit's doc_id, "
    "offset and length to read_document to read the whole passage.";
const char* kGrep =
    "Find lines matching a regular expression (RE2) or literal text across a knowledge base's "
    "documents, with line numbers and optional context. Use it for exact names, codes and "
    "identifiers; read_document with start_line/end_line reads around a match.";
const char* kRead =
    "Read a document's Markdown: the whole body, or a range by lines (start_line/end_line, "
    "1-based inclusive, as grep numbers them) or by bytes (offset/length, as search hits give "
    "them).";
const char* kListDocs =
    "List a knowledge base's documents (id, filename, title, metadata, index status), one page "
    "at a time: pass next_cursor back as cursor for the next page.";
const char* kStatus =
    "Index status of a knowledge base (keyword and vector: not_built, ready, stale, failed; "
    "vector progress) or of one document (doc_id). Vectors are built in the background after "
    "writes: poll this before relying on vector or hybrid search.";
const char* kAdd =
    "Add a document from text (content) or bytes (content_base64): it is converted to Markdown "
    "by its filename's extension, chunked and keyword-indexed at once; vectors follow in the "
    "background. The same filename with "
    "changed content needs replace=true.";
const char* kEdit =
    "Replace a document's Markdown body. The document keeps its id; it is re-chunked and "
    "re-indexed.";
const char* kDelete = "Delete a document with its chunks and vectors. This cannot be undone.";

}  // namespace

const std::vector<Tool>& all_tools() {
  static const std::vector<Tool> tools = {
      {"list_knowledge_bases", "List knowledge bases", kListKbs, false, false, true, in_kbs,
       out_kbs, run_list_knowledge_bases},
      {"search", "Search", kSearch, false, false, true, in_search, out_search, run_search},
      {"grep", "Grep", kGrep, false, false, true, in_grep, out_grep, run_grep},
      {"read_document", "Read a document", kRead, false, false, true, in_read, out_read,
       run_read_document},
      {"list_documents", "List documents", kListDocs, false, false, true, in_list_docs,
       out_list_docs, run_list_documents},
      {"index_status", "Index status", kStatus, false, false, true, in_status, out_status,
       run_index_status},
      {"add_document", "Add a document", kAdd, true, false, false, in_add, out_ingest,
       run_add_document},
      {"edit_document", "Edit a document", kEdit, true, true, true, in_edit, out_document,
       run_edit_document},
      {"delete_document", "Delete a document", kDelete, true, true, true, in_delete, out_deleted,
       run_delete_document},
  };
  return tools;
}

json tool_listing(const McpOptions& opts) {
  json out = json::array();
  for (const Tool& t : all_tools()) {
    if (t.writes && opts.read_only) continue;
    out.push_back({{"name", t.name},
                   {"title", t.title},
                   {"description", t.description},
                   {"inputSchema", t.input_schema(opts)},
                   {"outputSchema", t.output_schema()},
                   {"annotations",
                    {{"title", t.title},
                     {"readOnlyHint", !t.writes},
                     {"destructiveHint", t.destructive},
                     {"idempotentHint", t.idempotent},
                     {"openWorldHint", false}}}});
  }
  return out;
}

const Tool* find_tool(const std::string& name, const McpOptions& opts) {
  for (const Tool& t : all_tools())
    if (name == t.name) return (t.writes && opts.read_only) ? nullptr : &t;
  return nullptr;
}

}  // namespace quarry::server::mcp
