// The MCP protocol core: JSON-RPC 2.0 framing, the lifecycle (initialize, version
// negotiation), tools/list and tools/call, resources and HTTP session bookkeeping. Tools live
// in mcp_tools_*.cpp; transports in mcp_transport.cpp.
//
// Two kinds of failure, as MCP separates them: a malformed request (unknown method or tool,
// params of the wrong shape) is a JSON-RPC error; anything the tool itself refuses (bad
// argument values, not_found, forbidden, busy...) is a tool result with isError: true, text
// "error[code]: message" and structuredContent {"error": {code, message, details}}, so the
// model sees it and can correct its call.
#include "server/mcp.h"
#include "quarry/util.h"

#include <algorithm>

#include "server/mcp_tools.h"
#include "wire/wire.h"

namespace quarry::server {
using nlohmann::json;

namespace {

constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kServerError = -32000;
constexpr int kResourceNotFound = -32002;  // MCP's code for resources/read of a missing URI

constexpr int kResourcePage = 100;
const std::string kScheme = "quarry://";

// A protocol-level failure raised while dispatching a request.
struct RpcError {
  int code;
  std::string message;
  json data = nullptr;
};

json rpc_error(const json& id, int code, const std::string& message, const json& data = nullptr) {
  json err = {{"code", code}, {"message", message}};
  if (!data.is_null()) err["data"] = data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", err}};
}

// Engine errors outside tools (resources/*) keep their stable code in error.data.
RpcError rpc_from(const Error& e) {
  int code = kServerError;
  if (e.code() == Code::invalid_argument) code = kInvalidParams;
  if (e.code() == Code::not_found) code = kResourceNotFound;
  if (e.code() == Code::internal) code = kInternalError;
  return {code, mcp::text_error(e), wire::error_json(e)["error"]};
}

std::string instructions(const McpOptions& o) {
  std::string s =
      "Quarry searches knowledge bases of documents. list_knowledge_bases names the knowledge "
      "bases (the `kb` argument of the other tools). To answer a question: search (mode auto, "
      "optionally with a metadata filter) or grep for exact strings, then read_document with a "
      "hit's doc_id and offset/length (search) or start_line/end_line (grep) to read the "
      "context; cite doc_id and filename. list_documents pages through a knowledge base; "
      "index_status tells whether vectors are ready for vector/hybrid search.";
  if (!o.read_only)
    s += " add_document, edit_document and delete_document change a knowledge base.";
  if (!o.kb.empty()) s += " This server serves only knowledge base '" + o.kb + "': omit `kb`.";
  s += " Tool errors come back as results whose text starts with error[code].";
  return s;
}

json tool_result(mcp::ToolOutput out) {
  return {{"content", json::array({{{"type", "text"}, {"text", std::move(out.text)}}})},
          {"structuredContent", std::move(out.structured)},
          {"isError", false}};
}

json tool_error(const Error& e) {
  return {{"content", json::array({{{"type", "text"}, {"text", mcp::text_error(e)}}})},
          {"structuredContent", wire::error_json(e)},
          {"isError", true}};
}

std::string random_id() {
  return random_hex(16);  // 128 bits
}

// "quarry://<kb>/<doc-id>" -> {kb, doc-id}.
std::pair<std::string, std::string> parse_uri(const std::string& uri) {
  const auto slash = uri.find('/', kScheme.size());
  if (uri.rfind(kScheme, 0) != 0 || slash == std::string::npos || slash == kScheme.size() ||
      slash + 1 == uri.size() || uri.find('/', slash + 1) != std::string::npos)
    throw RpcError{
        kInvalidParams, "document URIs look like quarry://<kb>/<doc-id>", {{"uri", uri}}};
  return {uri.substr(kScheme.size(), slash - kScheme.size()), uri.substr(slash + 1)};
}

}  // namespace

const std::vector<std::string>& mcp_protocol_versions() {
  static const std::vector<std::string> v = {"2025-11-25", "2025-06-18", "2025-03-26",
                                             "2024-11-05"};
  return v;
}

McpServer::McpServer(EnginePool& engines, McpOptions opts)
    : engines_(engines), opts_(std::move(opts)), tools_(mcp::tool_listing(opts_)) {}

std::optional<json> McpServer::handle_payload(const json& payload, const Principal& who) {
  if (!payload.is_array()) return handle(payload, who);
  if (payload.empty()) return rpc_error(nullptr, kInvalidRequest, "an empty batch");
  json out = json::array();
  for (const auto& m : payload)
    if (auto r = handle(m, who)) out.push_back(std::move(*r));
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<json> McpServer::handle(const json& message, const Principal& who) {
  if (!message.is_object())
    return rpc_error(nullptr, kInvalidRequest, "a JSON-RPC message must be an object");
  const bool has_id = message.contains("id");
  const json id = has_id ? message["id"] : json(nullptr);
  if (has_id && !id.is_string() && !id.is_number_integer())
    return rpc_error(nullptr, kInvalidRequest, "id must be a string or an integer");
  if (!message.contains("method")) {
    // A response to a request of ours; we send none, so there is nothing to do.
    if (has_id && (message.contains("result") || message.contains("error"))) return std::nullopt;
    return rpc_error(id, kInvalidRequest, "a JSON-RPC request needs a method");
  }
  if (message.find("jsonrpc") == message.end() || message["jsonrpc"] != "2.0" ||
      !message["method"].is_string())
    return has_id ? std::optional<json>(rpc_error(id, kInvalidRequest,
                                                  "jsonrpc must be \"2.0\" and method a string"))
                  : std::nullopt;
  if (!has_id) return std::nullopt;  // notifications (initialized, cancelled...) need no answer
  const json params = message.value("params", json::object());
  if (!params.is_object()) return rpc_error(id, kInvalidParams, "params must be an object");
  try {
    return json{{"jsonrpc", "2.0"},
                {"id", id},
                {"result", dispatch(message["method"].get<std::string>(), params, who)}};
  } catch (const RpcError& e) {
    return rpc_error(id, e.code, e.message, e.data);
  } catch (const Error& e) {
    RpcError r = rpc_from(wire::redacted(e, engines_.data_dir()));
    return rpc_error(id, r.code, r.message, r.data);
  } catch (const std::exception& e) {
    return rpc_error(id, kInternalError, std::string("internal error: ") + e.what());
  }
}

json McpServer::dispatch(const std::string& method, const json& params, const Principal& who) {
  if (method == "initialize") {
    const auto& versions = mcp_protocol_versions();
    const json asked = params.value("protocolVersion", json());
    const bool known =
        asked.is_string() && std::find(versions.begin(), versions.end(), asked) != versions.end();
    return {{"protocolVersion", known ? asked : json(versions.front())},
            {"capabilities",
             {{"tools", {{"listChanged", false}}},
              {"resources", {{"listChanged", false}, {"subscribe", false}}}}},
            {"serverInfo", {{"name", "quarry"}, {"title", "Quarry"}, {"version", "0.1.0"}}},
            {"instructions", instructions(opts_)}};
  }
  if (method == "ping") return json::object();
  if (method == "tools/list") return {{"tools", tools_}};
  if (method == "tools/call") return call_tool(params, who);
  if (method == "resources/list") return list_resources(params, who);
  if (method == "resources/read") return read_resource(params, who);
  if (method == "resources/templates/list")
    return {{"resourceTemplates", json::array({{{"uriTemplate", kScheme + "{kb}/{doc_id}"},
                                                {"name", "document"},
                                                {"title", "Quarry document"},
                                                {"description", "A document's Markdown body"},
                                                {"mimeType", "text/markdown"}}})}};
  throw RpcError{kMethodNotFound, "method not found: " + method, {{"method", method}}};
}

json McpServer::call_tool(const json& params, const Principal& who) {
  if (!params.contains("name") || !params["name"].is_string())
    throw RpcError{kInvalidParams, "tools/call needs params.name, the tool's name"};
  const std::string name = params["name"].get<std::string>();
  const mcp::Tool* tool = mcp::find_tool(name, opts_);
  if (!tool)
    throw RpcError{kInvalidParams,
                   "unknown tool: " + name + " (tools/list names the tools)",
                   {{"tool", name}}};
  json args = params.value("arguments", json::object());
  if (args.is_null()) args = json::object();
  if (!args.is_object()) throw RpcError{kInvalidParams, "tools/call arguments must be an object"};
  try {
    mcp::Args a(args, tool->input_schema(opts_));
    return tool_result(tool->run({engines_, opts_, who, a}));
  } catch (const Error& e) {
    return tool_error(wire::redacted(e, engines_.data_dir()));
  } catch (const std::exception& e) {
    return tool_error(Error(Code::internal, std::string("internal error: ") + e.what()));
  }
}

json McpServer::list_resources(const json& params, const Principal& who) {
  require(who, Scope::read);
  const json& c = params.value("cursor", json(""));
  const std::string cursor = c.is_string() ? c.get<std::string>() : "";
  auto engine = engines_.acquire(who.actor, "mcp");
  std::vector<std::string> kbs;
  for (const auto& k : engine->list_kbs())
    if (may_reach(who, k.name) && (opts_.kb.empty() || k.name == opts_.kb)) kbs.push_back(k.name);

  // The cursor is "<kb>:<document cursor>" (KB names have no ':').
  std::size_t i = 0;
  std::string doc_cursor;
  if (!cursor.empty()) {
    const auto colon = cursor.find(':');
    auto it = std::find(kbs.begin(), kbs.end(), cursor.substr(0, colon));
    if (colon == std::string::npos || it == kbs.end())
      throw RpcError{kInvalidParams, "invalid cursor: pass nextCursor back unchanged"};
    i = static_cast<std::size_t>(it - kbs.begin());
    doc_cursor = cursor.substr(colon + 1);
  }
  json resources = json::array(), result = json::object();
  for (; i < kbs.size(); ++i, doc_cursor.clear()) {
    const int room = kResourcePage - static_cast<int>(resources.size());
    if (room == 0) {
      result["nextCursor"] = kbs[i] + ":";
      break;
    }
    DocumentPage page = engine->list_documents(kbs[i], doc_cursor, room);
    for (const auto& d : page.documents)
      resources.push_back({{"uri", kScheme + kbs[i] + "/" + d.id},
                           {"name", d.filename},
                           {"title", d.title.empty() ? d.filename : d.title},
                           {"description", "Document " + d.id + " of knowledge base " + kbs[i]},
                           {"mimeType", "text/markdown"}});
    if (!page.next_cursor.empty()) {
      result["nextCursor"] = kbs[i] + ":" + page.next_cursor;
      break;
    }
  }
  result["resources"] = resources;
  return result;
}

json McpServer::read_resource(const json& params, const Principal& who) {
  if (!params.contains("uri") || !params["uri"].is_string())
    throw RpcError{kInvalidParams, "resources/read needs params.uri (quarry://<kb>/<doc-id>)"};
  const std::string uri = params["uri"].get<std::string>();
  auto [kb, id] = parse_uri(uri);
  if (!opts_.kb.empty() && kb != opts_.kb)
    throw Error(Code::forbidden, "this MCP server serves only knowledge base '" + opts_.kb + "'",
                {{"kb", kb}});
  require(who, Scope::read, kb);
  std::string text = engines_.acquire(who.actor, "mcp")->read_markdown(kb, id);
  return {
      {"contents", json::array({{{"uri", uri}, {"mimeType", "text/markdown"}, {"text", text}}})}};
}

std::string McpServer::open_session(const std::string& actor, const std::string& version) {
  std::lock_guard lk(sessions_mu_);
  if (sessions_.size() >= opts_.max_sessions && !sessions_.empty()) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
      if (it->second.seq < oldest->second.seq) oldest = it;
    sessions_.erase(oldest);
  }
  std::string id = random_id();
  sessions_[id] = Session{actor, version, ++session_seq_};
  return id;
}

bool McpServer::session_known(const std::string& id, const std::string& actor) {
  std::lock_guard lk(sessions_mu_);
  auto it = sessions_.find(id);
  return it != sessions_.end() && it->second.actor == actor;
}

bool McpServer::close_session(const std::string& id, const std::string& actor) {
  std::lock_guard lk(sessions_mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.actor != actor) return false;
  sessions_.erase(it);
  return true;
}

}  // namespace quarry::server
