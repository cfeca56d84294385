// MCP's two transports over the one protocol core (McpServer::handle_payload).
//
// stdio: one JSON-RPC message (or batch) per line in, one response per line out, in order. The
// process's stdout carries nothing else (cmd_mcp.cpp sends logs to stderr).
//
// Streamable HTTP (/mcp): each POST carries a message or batch and gets its responses as one
// JSON body (we never stream, so GET, which would open a server-to-client SSE stream, is 405 as
// the specification allows). A successful initialize opens a session (Mcp-Session-Id); a
// request naming a session this server does not know (ended, evicted, or another caller's) is
// 404, which tells the client to initialize again. Requests without a session id are served
// too, so simple clients (curl) can call tools statelessly: authentication, not the session,
// is the security boundary. Origin is checked against DNS rebinding: a browser page from
// another origin must not drive a local server.
#include <algorithm>
#include <cctype>

#include "quarry/util.h"
#include "server/mcp.h"
#include "server/mcp_tools.h"

namespace quarry::server {
using nlohmann::json;

namespace {

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

McpHttpReply error_reply(int status, int rpc_code, Code code, const std::string& message) {
  Error e(code, message);
  json body = {{"jsonrpc", "2.0"},
               {"id", nullptr},
               {"error",
                {{"code", rpc_code},
                 {"message", mcp::text_error(e)},
                 {"data", {{"code", code_name(code)}, {"message", message}}}}}};
  return {status, "application/json", dump(body), {}};
}

// http(s)://localhost, 127.0.0.0/8 or [::1], any port.
bool loopback_origin(const std::string& origin) {
  std::string o = lower(origin);
  std::size_t at;
  if (o.rfind("http://", 0) == 0)
    at = 7;
  else if (o.rfind("https://", 0) == 0)
    at = 8;
  else
    return false;
  std::string host = o.substr(at, o.find('/', at) - at);
  if (host.rfind("[::1]", 0) == 0) return host.size() == 5 || host[5] == ':';
  host = host.substr(0, host.find(':'));
  if (host == "localhost") return true;
  if (host.rfind("127.", 0) != 0) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
}

bool is_initialize(const json& payload) {
  return payload.is_object() && payload.value("method", json()) == "initialize";
}

McpHttpReply end_session(McpServer& server, const std::string& session, const Principal& who) {
  if (session.empty())
    return error_reply(400, -32600, Code::invalid_argument,
                       "DELETE /mcp needs the Mcp-Session-Id header of the session to end");
  if (!server.close_session(session, who.actor))
    return error_reply(404, -32001, Code::not_found, "no such session (already ended?)");
  return {204, "", "", {}};
}

McpHttpReply post(McpServer& server, const std::string& body, const std::string& content_type,
                  const std::string& session, const Principal& who) {
  const std::string media = lower(content_type.substr(0, content_type.find(';')));
  if (!content_type.empty() && media.find("application/json") == std::string::npos)
    return error_reply(415, -32700, Code::invalid_argument,
                       "POST /mcp takes Content-Type: application/json");
  json payload = json_nesting_within(body, 160) ? json::parse(body, nullptr, false)
                                                : json(json::value_t::discarded);
  if (payload.is_discarded())
    return error_reply(400, -32700, Code::invalid_argument, "the request body is not valid JSON");
  const bool init = is_initialize(payload);
  if (!init && !session.empty() && !server.session_known(session, who.actor))
    return error_reply(404, -32001, Code::not_found,
                       "unknown or ended MCP session: initialize again for a new one");
  auto reply = server.handle_payload(payload, who);
  if (!reply) return {202, "", "", {}};  // notifications and responses only
  McpHttpReply r{200, "application/json", dump(*reply), {}};
  if (init && reply->contains("result"))
    r.headers.emplace_back(
        "Mcp-Session-Id",
        server.open_session(who.actor, (*reply)["result"].value("protocolVersion", "")));
  return r;
}

}  // namespace

int run_stdio(McpServer& server, std::istream& in, std::ostream& out, const Principal& who) {
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    json msg = json_nesting_within(line, 160) ? json::parse(line, nullptr, false)
                                              : json(json::value_t::discarded);
    std::optional<json> reply;
    if (msg.is_discarded())
      reply = json{{"jsonrpc", "2.0"},
                   {"id", nullptr},
                   {"error", {{"code", -32700}, {"message", "parse error: a line is not JSON"}}}};
    else
      reply = server.handle_payload(msg, who);
    if (!reply) continue;
    out << dump(*reply) << '\n';
    out.flush();
    if (!out) return 1;
  }
  return 0;
}

McpHttpReply handle_http(McpServer& server, const std::string& method, const std::string& body,
                         const std::function<std::string(const std::string&)>& header,
                         const Principal& who) {
  const std::string origin = header("Origin");
  if (!origin.empty() && !loopback_origin(origin))
    return error_reply(403, -32000, Code::forbidden,
                       "requests from origin " + origin +
                           " are refused: /mcp accepts browser requests from loopback origins "
                           "only");
  const std::string version = header("MCP-Protocol-Version");
  const auto& versions = mcp_protocol_versions();
  if (!version.empty() && std::find(versions.begin(), versions.end(), version) == versions.end())
    return error_reply(400, -32600, Code::invalid_argument,
                       "unsupported MCP-Protocol-Version " + version + " (this server speaks " +
                           versions.front() + " and earlier)");
  const std::string session = header("Mcp-Session-Id");
  if (method == "POST") return post(server, body, header("Content-Type"), session, who);
  if (method == "DELETE") return end_session(server, session, who);
  McpHttpReply r = error_reply(405, -32000, Code::invalid_argument,
                               "/mcp takes POST (JSON-RPC) and DELETE (end a session); this "
                               "server offers no SSE stream");
  r.headers.emplace_back("Allow", "POST, DELETE");
  return r;
}

}  // namespace quarry::server
