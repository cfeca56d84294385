// The chroma store's wire: one call() that sends a JSON request to Chroma's HTTP API v2 through
// src/net/ (guard, retries) and turns every failure into a quarry::Error whose message names the
// server's URL and says what to do. Kept apart from the store so the store reads as the port.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "net/retry.h"
#include "store/chroma/chroma_store.h"
#include "store/remote_call.h"

namespace quarry::store::chroma {

struct Reply {
  long status = 0;
  nlohmann::json body;  // null when the body is empty
};

class ChromaHttp {
 public:
  ChromaHttp(const ChromaSettings& s, std::string token, ChromaDeps deps);

  // `path` is relative to /api/v2 ("/heartbeat"). A 404 returns {404, body} when missing_ok,
  // otherwise every non-2xx status throws (upstream_error, unauthorized, rate_limited; timeout
  // and upstream_error for a server that does not answer).
  Reply call(const std::string& method, const std::string& path,
             const nlohmann::json* body = nullptr, bool missing_ok = false) const;

  // One attempt, no retries, a short timeout: is the server there at all?
  bool reachable() const;

  const std::string& url() const { return s_.url; }

 private:
  [[noreturn]] void fail(const std::string& what, const net::RetryOutcome& o) const;

  ChromaSettings s_;
  std::string token_;
  std::shared_ptr<net::HttpClient> http_;
  net::RetryPolicy retry_;
};

// Little-endian float32 bytes, base64: Chroma's compact embedding encoding
// (pre-flight-checks: supports_base64_encoding).
std::string base64_floats(const std::vector<float>& v);

}  // namespace quarry::store::chroma
