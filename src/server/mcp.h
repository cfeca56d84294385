// The MCP (Model Context Protocol) server: Quarry's tools for agents (SPEC §9). One protocol
// core (`McpServer::handle`, a JSON-RPC 2.0 message in, its response out) behind two
// transports: newline-delimited JSON over stdio (`quarry mcp`) and streamable HTTP at `/mcp`
// on the REST server. The core is stateless per message, so both transports share it and the
// HTTP server may call it from many threads at once; the only shared state is the table of
// HTTP sessions, guarded by a mutex.
//
// Tools are thin shells over the Engine, like the CLI and REST: their structured results are
// the REST shapes (wire/wire.h), so a client that knows one surface knows the other, and
// their errors carry the same stable codes. Permissions are decided from the principal and
// the KB name before any lookup (server/auth.h), so names cannot be enumerated here either.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "server/auth.h"
#include "server/engine_pool.h"

namespace quarry::server {

struct McpOptions {
  std::string kb;  // when set: the only KB the tools see (tools' kb argument optional/defaulted)
  bool read_only = false;  // no add/edit/delete tools
  std::function<void(const std::string& kb)>
      on_write;  // called after a successful write (the server pokes its Indexer)
  std::size_t max_sessions = 10000;  // HTTP sessions remembered; the oldest is forgotten first
};

// Protocol versions this server speaks, newest first. A client asking for one of them gets
// it; any other request is answered with the newest (the client then decides).
const std::vector<std::string>& mcp_protocol_versions();

class McpServer {
 public:
  McpServer(EnginePool& engines, McpOptions opts);
  // One JSON-RPC 2.0 message; returns the response, or nullopt for notifications/responses.
  std::optional<nlohmann::json> handle(const nlohmann::json& message, const Principal& who);
  // A message or a batch (array of messages, JSON-RPC 2.0 §6): the response or array of
  // responses, or nullopt when nothing needs answering.
  std::optional<nlohmann::json> handle_payload(const nlohmann::json& payload, const Principal& who);

  // HTTP sessions (streamable HTTP, Mcp-Session-Id). A session is bound to the actor that
  // opened it: another caller presenting its id is treated as not knowing it.
  std::string open_session(const std::string& actor, const std::string& protocol_version);
  bool session_known(const std::string& id, const std::string& actor);
  bool close_session(const std::string& id, const std::string& actor);

  const McpOptions& options() const { return opts_; }

 private:
  nlohmann::json dispatch(const std::string& method, const nlohmann::json& params,
                          const Principal& who);
  nlohmann::json call_tool(const nlohmann::json& params, const Principal& who);
  nlohmann::json list_resources(const nlohmann::json& params, const Principal& who);
  nlohmann::json read_resource(const nlohmann::json& params, const Principal& who);

  EnginePool& engines_;
  McpOptions opts_;
  nlohmann::json tools_;  // tools/list entries, built once from the options

  struct Session {
    std::string actor;
    std::string protocol_version;
    std::uint64_t seq = 0;  // opening order, for eviction
  };
  std::mutex sessions_mu_;
  std::map<std::string, Session> sessions_;
  std::uint64_t session_seq_ = 0;
};

// Newline-delimited JSON-RPC over streams (stdio transport). Returns when input ends (0), or 1
// when the output cannot be written (the client went away). Every message is handled as `who`
// (stdio has no authentication: the user who started the process).
int run_stdio(McpServer& server, std::istream& in, std::ostream& out,
              const Principal& who = Principal{"local", Scope::admin, {}});

struct McpHttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Streamable HTTP transport for one request to /mcp (POST: a JSON-RPC message or batch -> JSON
// reply, 202 for notifications-only; GET: 405 since we offer no SSE stream; DELETE: end
// session). `header(name)` returns a request header or "". Validate Origin if present (must be
// a loopback origin or absent) and MCP-Protocol-Version if present.
McpHttpReply handle_http(McpServer& server, const std::string& method, const std::string& body,
                         const std::function<std::string(const std::string&)>& header,
                         const Principal& who);

}  // namespace quarry::server
