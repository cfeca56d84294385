// One HTTP call of a remote store (chroma, qdrant) with the store's retry policy. Failures that
// never got an answer become errors a user can act on, naming the store's server and URL:
// timeout (raise timeout_ms), blocked_address (allow_private for a local server), unreachable
// (upstream_error: start the server or fix url). Answers, good or bad, are the caller's.
#pragma once

#include <string>

#include "net/http_client.h"
#include "net/retry.h"
#include "store/settings_reader.h"
#include "store/vector_store.h"

namespace quarry::store {

struct RemoteTarget {
  std::string store;   // "chroma": the setting names in messages
  std::string server;  // "Chroma": the server in messages
  std::string url;
  int timeout_ms = 0;
};

// The retry policy a remote store's settings ask for.
net::RetryOptions retry_options(const RemoteSettings& s);

// A request to the store's server, guarded as its settings say (timeouts, allow_private), with
// `body` as its JSON when given. The caller adds its authentication header.
net::HttpRequest remote_request(const RemoteSettings& s, const std::string& method,
                                const std::string& url, const nlohmann::json* body = nullptr);

net::RetryOutcome call_remote(const net::RetryPolicy& retry, net::HttpClient& http,
                              const net::HttpRequest& req, const RemoteTarget& target,
                              const std::string& what);

// An answer outside 2xx as the error a user can act on: 401/403 unauthorized (`auth_hint`),
// 429 rate_limited, 5xx upstream_error (after the retries), anything else upstream_error
// (`rejected_hint`). `server_message` is the server's own explanation of its answer.
[[noreturn]] void fail_remote(const RemoteTarget& target, const std::string& what,
                              const net::RetryOutcome& outcome, const std::string& server_message,
                              const std::string& auth_hint, const std::string& rejected_hint);

// Up to 20 characters of `s` for a readable collection name: ASCII letters and digits
// lower-cased, anything else '-'. Not unique: callers append a hash of `s`.
std::string name_slug(const std::string& s);

// Percent-encodes one URL path segment (tenant, database and collection names).
std::string path_segment(const std::string& s);

// The first 300 bytes of a body on one line, for messages.
std::string body_excerpt(const std::string& body);

// The value of the secret a store's `api_key_secret` names ("" when the setting is empty);
// invalid_argument without a secret store, unauthorized when the secret is missing or empty.
std::string api_key_from_secret(const StoreContext& ctx, const std::string& store,
                                const std::string& secret_name);

}  // namespace quarry::store
