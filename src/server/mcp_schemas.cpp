// JSON Schemas of what the MCP tools answer: the REST shapes of wire/wire.cpp. Clients (the
// official SDK among them) validate structuredContent against a tool's outputSchema and reject
// a result that does not match, so these follow wire.cpp field by field; the MCP tests call
// every tool through the SDK, which checks them. Properties are listed, not closed
// (additionalProperties stays open), so adding a field to a wire shape breaks no client.
#include "server/mcp_tools.h"

namespace quarry::server::mcp {

namespace {

json type(const char* t) {
  return {{"type", t}};
}
json nullable(const char* t) {
  return {{"type", json::array({t, "null"})}};
}
json array_of(json item) {
  return {{"type", "array"}, {"items", std::move(item)}};
}

json object(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}};
}

json subject_schema() {
  return {{"type", json::array({"object", "null"})},
          {"properties", {{"key", type("string")}, {"value", type("string")}}}};
}

json code_message() {
  return object({{"code", type("string")}, {"message", type("string")}}, {"code", "message"});
}

json vectors_schema() {
  json failure = object({{"doc_id", type("string")},
                         {"code", type("string")},
                         {"message", type("string")},
                         {"at", type("string")}},
                        {"doc_id", "code"});
  return object(
      {{"serving_revision", nullable("string")},
       {"building_revision", nullable("string")},
       {"previous_revision", nullable("string")},
       {"documents", type("integer")},
       {"ready", type("integer")},
       {"stale", type("integer")},
       {"pending", type("integer")},
       {"failed", type("integer")},
       {"stored_vectors", type("integer")},
       {"failures", array_of(failure)},
       {"unavailable",
        {{"type", json::array({"object", "null"})}, {"properties", code_message()["properties"]}}}},
      {"documents", "ready", "pending", "failed"});
}

json grep_match_schema() {
  json line = object({{"line", type("integer")}, {"text", type("string")}}, {"line", "text"});
  return object({{"kb", type("string")},
                 {"doc_id", type("string")},
                 {"filename", type("string")},
                 {"line", type("integer")},
                 {"text", type("string")},
                 {"ranges", array_of(array_of(type("integer")))},
                 {"highlights", array_of(array_of(type("integer")))},
                 {"before", array_of(line)},
                 {"after", array_of(line)},
                 {"subject", subject_schema()}},
                {"kb", "doc_id", "filename", "line", "text"});
}

}  // namespace

json error_schema() {
  return object({{"code", type("string")},
                 {"message", type("string")},
                 {"details", {{"type", "object"}, {"additionalProperties", type("string")}}}},
                {"code", "message"});
}

json index_status_schema() {
  json status = {{"type", "string"},
                 {"enum", {"not_built", "building", "ready", "stale", "failed"}}};
  return object({{"keyword", status}, {"vector", status}}, {"keyword", "vector"});
}

json kb_schema() {
  return object({{"name", type("string")},
                 {"description", type("string")},
                 {"config", type("object")},
                 {"documents", type("integer")},
                 {"chunks", type("integer")},
                 {"markdown_bytes", type("integer")},
                 {"source_bytes", type("integer")},
                 {"created_at", type("string")},
                 {"updated_at", type("string")},
                 {"index_status", index_status_schema()},
                 {"revision", type("string")},
                 {"config_revision", type("string")},
                 {"vectors", vectors_schema()}},
                {"name", "documents", "chunks", "index_status"});
}

json document_schema() {
  return object({{"id", type("string")},
                 {"kb", type("string")},
                 {"filename", type("string")},
                 {"title", type("string")},
                 {"source_sha256", type("string")},
                 {"content_sha256", type("string")},
                 {"metadata", type("object")},
                 {"subject", subject_schema()},
                 {"converter", type("string")},
                 {"source_bytes", type("integer")},
                 {"markdown_bytes", type("integer")},
                 {"chunk_count", type("integer")},
                 {"created_at", type("string")},
                 {"updated_at", type("string")},
                 {"index_status", index_status_schema()},
                 {"vector_error", code_message()}},
                {"id", "kb", "filename", "index_status"});
}

json hit_schema() {
  return object({{"kb", type("string")},
                 {"doc_id", type("string")},
                 {"filename", type("string")},
                 {"title", type("string")},
                 {"chunk_id", type("string")},
                 {"chunk_index", type("integer")},
                 {"parent_chunk", nullable("string")},
                 {"heading_path", array_of(type("string"))},
                 {"offset", type("integer")},
                 {"length", type("integer")},
                 {"snippet", type("string")},
                 {"snippet_text", type("string")},
                 {"highlights", array_of(array_of(type("integer")))},
                 {"score", type("number")},
                 {"raw_score", type("number")},
                 {"metric", type("string")},
                 {"subject", subject_schema()},
                 {"metadata", type("object")}},
                {"kb", "doc_id", "filename", "offset", "length", "score"});
}

json search_schema() {
  json hits = array_of(hit_schema());
  return {{"kb", type("string")},
          {"mode", type("string")},
          {"hits", hits},
          {"degraded", array_of(type("string"))},
          {"hint", type("string")},
          {"per_mode", {{"type", "object"}, {"additionalProperties", hits}}},
          {"index_status", index_status_schema()},
          {"took_ms", type("number")}};
}

json grep_schema() {
  return {{"kb", type("string")},
          {"matches", array_of(grep_match_schema())},
          {"truncated", type("boolean")},
          {"files_searched", type("integer")},
          {"files_matched", type("integer")},
          {"took_ms", type("number")}};
}

json ingest_item_schema() {
  return {{"kb", type("string")},
          {"path", type("string")},
          {"status", {{"type", "string"}, {"enum", {"added", "updated", "unchanged"}}}},
          {"doc_id", type("string")},
          {"chunks", type("integer")},
          {"warnings", array_of(type("string"))},
          {"vector_status", type("string")},
          {"vector_error", code_message()}};
}

json output_schema(json properties, const std::vector<std::string>& required) {
  properties["error"] = error_schema();
  return {
      {"type", "object"},
      {"properties", std::move(properties)},
      {"anyOf", json::array({{{"required", required}}, {{"required", json::array({"error"})}}})}};
}

}  // namespace quarry::server::mcp
