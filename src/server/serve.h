// The server room's one entry header, for the CLI (`quarry serve`, `quarry mcp`): everything
// else in src/server/ is the server's own business.
//
// `quarry serve`: the REST API under /api/v1 and MCP over streamable HTTP at /mcp (SPEC §9,
// §10), with the background Indexer and the pump's scheduler running in-process (SPEC §7, §8).
//
// Secure by default: it binds 127.0.0.1; a caller without a token is the local admin only on
// loopback and only without --require-token; binding any other address needs tokens (at least
// one must exist, and every request must carry one). An event loop owns the connections, so a
// slow or idle client costs memory, not a thread; a bounded pool of worker threads answers
// complete requests, each with its own leased Engine.
#pragma once

#include <cstddef>
#include <istream>
#include <memory>
#include <ostream>
#include <string>

#include "quarry/engine.h"

namespace quarry::server {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 7720;             // 0: any free port (see port())
  bool require_token = false;  // also on loopback
  int threads = 0;             // worker threads (0: 4 per core, at least 8)
  std::size_t max_body_bytes = 64u << 20;
  // Connections (docs/reliability.md): one event loop reads and writes them; workers see only
  // complete requests.
  int header_timeout_s = 10;        // a request's head must arrive within this of its first byte
  int read_timeout_s = 30;          // the whole request (head and body) within this
  int write_timeout_s = 30;         // the client must take the answer within this
  int idle_timeout_s = 60;          // a keep-alive connection with no request is closed after this
  std::size_t max_connections = 0;  // 0: from the open-files limit (at most 10,000)
  std::size_t max_incomplete = 1024;  // connections mid-request, over all clients
  // Request deadlines (quarry/deadline.h): the work of a request is stopped with `timeout` past
  // them. Reads (searches, grep, listings: routes of read scope) get `deadline_ms`; writes
  // (uploads, edits, reindex, KB changes) and MCP calls get `write_deadline_ms`. 0: already
  // passed (for tests).
  int deadline_ms = 10'000;
  int write_deadline_ms = 600'000;
  bool indexer = true;  // embed pending vectors in the background
  // The share of the time the indexer works while requests are answered (docs/lifecycle.md).
  double index_duty = 0.25;
  bool pump = true;  // run the pump's triggered use cases (events, cron, re-pokes)
  bool mcp = true;   // serve /mcp
  bool ui = true;    // serve the web UI at / and /ui/ (web/, compiled in)
  bool mcp_read_only = false;
};

class HttpServer {
 public:
  // Validates the options (a non-loopback host without tokens is refused) and binds.
  static std::unique_ptr<HttpServer> bind(const EngineOptions& engine, const ServeOptions& opts);
  virtual ~HttpServer() = default;
  virtual int port() const = 0;
  // Serves until stop() (from another thread or a signal handler's thread).
  virtual void run() = 0;
  virtual void stop() = 0;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

// `quarry mcp`: MCP over stdio for an agent that starts Quarry as a subprocess (docs/mcp.md).
// Every message is handled as the local user with admin scope (stdio has no authentication),
// limited to `kb` when one is given.
struct McpStdioOptions {
  std::string kb;          // when set: the only KB the tools see (their kb argument defaults to it)
  bool read_only = false;  // no add/edit/delete tools
  bool indexer = true;     // build the vectors of what the agent writes in this process
};

class McpStdio {
 public:
  // Opens the data directory and checks `kb` now, so a wrong path or name fails at start with
  // its error, before the caller hands stdout over to the protocol.
  static std::unique_ptr<McpStdio> open(const EngineOptions& engine, const McpStdioOptions& opts);
  virtual ~McpStdio() = default;
  // Starts the indexer and serves newline-delimited JSON-RPC from `in` to `out` until `in` ends
  // (0) or `out` cannot be written (1: the client went away); then stops the indexer.
  virtual int run(std::istream& in, std::ostream& out) = 0;
};

}  // namespace quarry::server
