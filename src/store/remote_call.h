// One HTTP call of a remote store (chroma, qdrant) with the store's retry policy. Failures that
// never got an answer become errors a user can act on, naming the store's server and URL:
// timeout (raise timeout_ms), blocked_address (allow_private for a local server), unreachable
// (upstream_error: start the server or fix url). Answers, good or bad, are the caller's.
#pragma once

#include <string>

#include "net/http_client.h"
#include "net/retry.h"

namespace quarry::store {

struct RemoteTarget {
  std::string store;   // "chroma": the setting names in messages
  std::string server;  // "Chroma": the server in messages
  std::string url;
  int timeout_ms = 0;
};

net::RetryOutcome call_remote(const net::RetryPolicy& retry, net::HttpClient& http,
                              const net::HttpRequest& req, const RemoteTarget& target,
                              const std::string& what);

}  // namespace quarry::store
