// Internal to the MCP server (src/server/mcp*.cpp): the tool table, argument reading, the
// output schemas and the text fallbacks. Split so that each file has one job: what a tool is
// (mcp_catalog.cpp), what it answers (mcp_schemas.cpp), how it reads its arguments
// (mcp_args.cpp), what it does (mcp_tools_read.cpp, mcp_tools_write.cpp) and how its answer
// reads as text for clients that ignore structured content (mcp_text.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/mcp.h"
#include "wire/fields.h"

namespace quarry::server::mcp {
using nlohmann::json;

// Typed access to a tool's `arguments`, by the codec's rules (wire/fields.h): every failure is
// Error(invalid_argument) naming the field, which the agent sees as a tool error it can correct
// (MCP 2025-11-25 asks for input validation errors as tool results, not protocol errors);
// `null` counts as absent, since some clients send every optional argument.
class Args : public wire::Fields {
 public:
  // Refuses keys the tool's input schema does not name (a typo would otherwise be ignored).
  Args(const json& arguments, const json& input_schema);

  // The knowledge base: the `kb` argument, or the server's --kb when it has one (another
  // name is then refused with `forbidden`).
  std::string kb(const McpOptions& opts) const;
  // The arguments without `kb`, for the codec's request decoders (wire/requests.h).
  json request() const;

 private:
  const json& args_;
};

// Everything a tool handler needs for one call.
struct ToolCall {
  EnginePool& engines;
  const McpOptions& opts;
  const Principal& who;
  const Args& args;
};

struct ToolOutput {
  json structured;   // structuredContent: matches the tool's outputSchema
  std::string text;  // the text content block, for clients that read text only
};

struct Tool {
  const char* name;
  const char* title;
  const char* description;
  bool writes;       // hidden with --read-only; needs Scope::write
  bool destructive;  // MCP annotation destructiveHint
  bool idempotent;   // MCP annotation idempotentHint
  json (*input_schema)(const McpOptions&);
  json (*output_schema)();
  ToolOutput (*run)(const ToolCall&);
};

// mcp_catalog.cpp
const std::vector<Tool>& all_tools();
// The tools a server with these options offers, as tools/list entries.
json tool_listing(const McpOptions& opts);
// The tool of that name this server offers, or nullptr (unknown, or a write tool when
// read-only: a hidden tool does not exist for the caller).
const Tool* find_tool(const std::string& name, const McpOptions& opts);

// mcp_schemas.cpp: JSON Schemas of the wire shapes (wire/wire.h) the tools answer with.
json error_schema();
json index_status_schema();
json kb_schema();
json document_schema();
json hit_schema();
json search_schema();
json grep_schema();
json ingest_item_schema();
// An outputSchema: an object with these properties where `required` must be present, or an
// {"error": ...} object instead (the SDK validates structured content even on tool errors).
json output_schema(json properties, const std::vector<std::string>& required);

// mcp_tools_read.cpp / mcp_tools_write.cpp
ToolOutput run_list_knowledge_bases(const ToolCall& call);
ToolOutput run_search(const ToolCall& call);
ToolOutput run_grep(const ToolCall& call);
ToolOutput run_read_document(const ToolCall& call);
ToolOutput run_list_documents(const ToolCall& call);
ToolOutput run_index_status(const ToolCall& call);
ToolOutput run_add_document(const ToolCall& call);
ToolOutput run_edit_document(const ToolCall& call);
ToolOutput run_delete_document(const ToolCall& call);

// The REST shape of a document without its absolute server paths (markdown_path, raw_path):
// an agent cannot open them and they reveal the server's layout.
json document_json(const Document& d);

// mcp_text.cpp: the text fallbacks.
std::string text_kbs(const std::vector<KbInfo>& kbs);
std::string text_search(const SearchResponse& r);
std::string text_grep(const GrepResponse& r);
std::string text_documents(const std::string& kb, const DocumentPage& page);
std::string text_kb_status(const KbInfo& k);
std::string text_doc_status(const Document& d);
std::string text_ingest(const std::string& kb, const IngestItem& item);
std::string text_error(const Error& e);

}  // namespace quarry::server::mcp
