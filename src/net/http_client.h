// Outbound HTTP: the port (HttpClient) that providers and remote stores talk to, and its libcurl
// adapter. The adapter runs every request through the SSRF guard and pins the addresses the
// guard approved, so curl never resolves a name on its own. curl's headers stay in the .cpp.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/ssrf_guard.h"

namespace quarry::net {

struct HttpRequest {
  std::string method = "GET";  // "GET" | "POST" | "PUT" | "DELETE"
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int timeout_ms = 30000;  // the whole exchange
  int connect_timeout_ms = 10000;
  bool allow_private = false;  // private/loopback targets (a local Ollama) need this
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
  std::string body;

  // "" when absent.
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

// Thread-safe: one client serves every thread. Failures to get any response throw
// quarry::Error: blocked_address (the guard; never worth retrying), timeout (no complete answer
// within timeout_ms / connect_timeout_ms), engine_unavailable (DNS, refused connection, TLS,
// reset). Those two carry details["transport"] = "1" so a retry policy can tell them apart
// from errors raised above the transport. Any HTTP status, 4xx and 5xx included, is a response.
class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual HttpResponse send(const HttpRequest& req) = 0;
};

struct CurlClientOptions {
  // Redirects are never followed: a 3xx comes back as a response. Following one would need
  // the guard to re-check the new host, and no embeddings API redirects a POST anyway.
  std::string user_agent = "quarry/0.1";
  // Proxies from the environment are ignored on purpose: through a proxy the guard's pinned
  // address would not be the one connected to. A proxy given here is used as is.
  std::string proxy;
  std::size_t max_response_bytes = 256u << 20;  // a runaway body is cut off, not buffered
};

std::shared_ptr<HttpClient> make_curl_client(CurlClientOptions opts = {},
                                             SsrfGuard guard = SsrfGuard());

}  // namespace quarry::net
