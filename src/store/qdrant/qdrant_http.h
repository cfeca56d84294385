// The qdrant store's wire: one call() that sends a JSON request to Qdrant's REST API through
// src/net/ (guard, retries) and turns every failure into a quarry::Error whose message names the
// server's URL and says what to do. Kept apart from the store so the store reads as the port.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "net/retry.h"
#include "store/qdrant/qdrant_store.h"
#include "store/remote_call.h"

namespace quarry::store::qdrant {

struct Reply {
  long status = 0;
  nlohmann::json result;  // the body's "result" member (null when absent)
};

class QdrantHttp {
 public:
  QdrantHttp(const QdrantSettings& s, std::string api_key, QdrantDeps deps);

  // `path` is absolute on the server ("/collections/x/points/count?wait=true"). A 404 returns
  // {404, null} when missing_ok, otherwise every non-2xx status throws (upstream_error,
  // unauthorized, rate_limited; timeout and upstream_error for a server that does not answer).
  Reply call(const std::string& method, const std::string& path,
             const nlohmann::json* body = nullptr, bool missing_ok = false) const;

  // One attempt, no retries, a short timeout: is the server there (GET /collections)?
  bool reachable() const;

 private:
  net::HttpRequest request(const std::string& method, const std::string& path,
                           const nlohmann::json* body = nullptr) const;
  [[noreturn]] void fail(const std::string& what, const net::RetryOutcome& o) const;

  QdrantSettings s_;
  std::string api_key_;
  std::shared_ptr<net::HttpClient> http_;
  net::RetryPolicy retry_;
};

}  // namespace quarry::store::qdrant
