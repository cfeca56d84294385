// Reading a tool's arguments: the codec's field rules (wire/fields.h) over the keys of the tool's
// input schema, plus the one MCP-specific argument, `kb`.
#include "server/mcp_tools.h"

namespace quarry::server::mcp {

namespace {

std::vector<std::string> schema_keys(const json& input_schema) {
  std::vector<std::string> keys;
  const json props = input_schema.value("properties", json::object());  // named: items() borrows
  for (const auto& [k, v] : props.items()) keys.push_back(k);
  return keys;
}

}  // namespace

Args::Args(const json& arguments, const json& input_schema)
    : wire::Fields(arguments, schema_keys(input_schema)), args_(arguments) {}

json Args::request() const {
  json j = args_;
  j.erase("kb");
  return j;
}

std::string Args::kb(const McpOptions& opts) const {
  auto given = string("kb");
  if (!opts.kb.empty()) {
    if (given && !given->empty() && *given != opts.kb)
      throw Error(Code::forbidden,
                  "this MCP server serves only knowledge base '" + opts.kb +
                      "' (it was started with --kb); leave out the kb argument",
                  {{"kb", *given}});
    return opts.kb;
  }
  if (!given || given->empty())
    throw Error(Code::invalid_argument,
                "argument 'kb' is required: the knowledge base to use (list_knowledge_bases "
                "names them)",
                {{"field", "kb"}});
  return *given;
}

}  // namespace quarry::server::mcp
