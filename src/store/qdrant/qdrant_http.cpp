// Qdrant's REST envelope (https://api.qdrant.tech/api-reference): a success is
// {"result": ..., "status": "ok", "time": s}; an error is {"status": {"error": "..."}, "time": s}
// with a 4xx/5xx status. Authentication is the `api-key` header
// (https://qdrant.tech/documentation/guides/security/).
#include "store/qdrant/qdrant_http.h"

#include <algorithm>
#include <cctype>

#include "quarry/error.h"
#include "store/remote_call.h"

namespace quarry::store::qdrant {
using nlohmann::json;

namespace {

std::string server_message(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("status") && j["status"].is_object() &&
      j["status"].contains("error") && j["status"]["error"].is_string())
    return j["status"]["error"].get<std::string>();
  return body_excerpt(body);
}

}  // namespace

QdrantHttp::QdrantHttp(const QdrantSettings& s, std::string api_key, QdrantDeps deps)
    : s_(s),
      api_key_(std::move(api_key)),
      http_(deps.http ? deps.http : net::make_curl_client()),
      retry_(retry_options(s), deps.sleeper) {}

net::HttpRequest QdrantHttp::request(const std::string& method, const std::string& path,
                                     const json* body) const {
  net::HttpRequest req = remote_request(s_, method, s_.url + path, body);
  if (!api_key_.empty()) req.headers.emplace_back("api-key", api_key_);
  return req;
}

Reply QdrantHttp::call(const std::string& method, const std::string& path, const json* body,
                       bool missing_ok) const {
  net::HttpRequest req = request(method, path, body);
  const std::string what = method + " " + path;

  net::RetryOutcome outcome = call_remote(
      retry_, *http_, req, RemoteTarget{"qdrant", "Qdrant", s_.url, s_.timeout_ms}, what);
  const auto& r = outcome.response;
  if (r.status == 404 && missing_ok) return {404, nullptr};
  if (r.status < 200 || r.status > 299) fail(what, outcome);
  if (r.body.empty()) return {r.status, nullptr};
  json j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(Code::upstream_error,
                "Qdrant at " + s_.url + " answered " + what + " with malformed JSON: '" +
                    body_excerpt(r.body) + "'; is url a Qdrant server (REST port, usually 6333)?",
                {{"store", "qdrant"}, {"url", s_.url}});
  return {r.status, j.contains("result") ? j["result"] : json()};
}

void QdrantHttp::fail(const std::string& what, const net::RetryOutcome& o) const {
  fail_remote(RemoteTarget{"qdrant", "Qdrant", s_.url, s_.timeout_ms}, what, o,
              server_message(o.response.body),
              "set the qdrant store's api_key_secret to a secret holding its API key",
              "check the qdrant store's settings and the server version (Qdrant >= 1.11)");
}

bool QdrantHttp::reachable() const {
  try {
    net::HttpRequest req = request("GET", "/collections");
    req.timeout_ms = std::min(s_.timeout_ms, 5000);
    req.connect_timeout_ms = std::min(s_.timeout_ms, 2000);
    return http_->send(req).status == 200;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace quarry::store::qdrant
