#include "store/chroma/chroma_http.h"

#include <algorithm>
#include <cstring>

#include "quarry/error.h"
#include "store/remote_call.h"

namespace quarry::store::chroma {
using nlohmann::json;

namespace {

// Chroma's error bodies: {"error": "NotFoundError", "message": "..."}.
std::string server_message(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    std::string m;
    if (j.contains("error") && j["error"].is_string()) m = j["error"].get<std::string>();
    if (j.contains("message") && j["message"].is_string())
      m += (m.empty() ? "" : ": ") + j["message"].get<std::string>();
    if (!m.empty()) return m;
  }
  return body_excerpt(body);
}

}  // namespace

ChromaHttp::ChromaHttp(const ChromaSettings& s, std::string token, ChromaDeps deps)
    : s_(s),
      token_(std::move(token)),
      http_(deps.http ? deps.http : net::make_curl_client()),
      retry_(retry_options(s), deps.sleeper) {}

Reply ChromaHttp::call(const std::string& method, const std::string& path, const json* body,
                       bool missing_ok) const {
  net::HttpRequest req = remote_request(s_, method, s_.url + "/api/v2" + path, body);
  if (!token_.empty()) req.headers.emplace_back("x-chroma-token", token_);
  const std::string what = method + " " + path;

  net::RetryOutcome outcome = call_remote(
      retry_, *http_, req, RemoteTarget{"chroma", "Chroma", s_.url, s_.timeout_ms}, what);
  const auto& r = outcome.response;
  if (r.status == 404 && missing_ok) return {404, json::parse(r.body, nullptr, false)};
  if (r.status < 200 || r.status > 299) fail(what, outcome);
  if (r.body.empty()) return {r.status, nullptr};
  json j = json::parse(r.body, nullptr, false);
  if (j.is_discarded())
    throw Error(Code::upstream_error,
                "Chroma at " + s_.url + " answered " + what + " with malformed JSON: '" +
                    body_excerpt(r.body) + "'; is url a Chroma server (API v2)?",
                {{"store", "chroma"}, {"url", s_.url}});
  return {r.status, std::move(j)};
}

void ChromaHttp::fail(const std::string& what, const net::RetryOutcome& o) const {
  fail_remote(RemoteTarget{"chroma", "Chroma", s_.url, s_.timeout_ms}, what, o,
              server_message(o.response.body),
              "set the chroma store's api_key_secret to a secret holding its token",
              "check the chroma store's tenant/database settings and the server version (API v2, "
              "Chroma >= 1.0)");
}

bool ChromaHttp::reachable() const {
  try {
    net::HttpRequest req;
    req.url = s_.url + "/api/v2/heartbeat";
    req.timeout_ms = std::min(s_.timeout_ms, 5000);
    req.connect_timeout_ms = std::min(s_.timeout_ms, 2000);
    req.allow_private = s_.allow_private;
    if (!token_.empty()) req.headers.emplace_back("x-chroma-token", token_);
    return http_->send(req).status == 200;
  } catch (const std::exception&) {
    return false;
  }
}

std::string base64_floats(const std::vector<float>& v) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * sizeof(float), '\0');
  // x86-64 and aarch64 Linux are little-endian, as Chroma's decoder expects.
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    auto b0 = static_cast<unsigned char>(bytes[i]), b1 = static_cast<unsigned char>(bytes[i + 1]),
         b2 = static_cast<unsigned char>(bytes[i + 2]);
    out += tbl[b0 >> 2];
    out += tbl[((b0 & 3) << 4) | (b1 >> 4)];
    out += tbl[((b1 & 15) << 2) | (b2 >> 6)];
    out += tbl[b2 & 63];
  }
  if (i + 1 == bytes.size()) {
    auto b0 = static_cast<unsigned char>(bytes[i]);
    out += tbl[b0 >> 2];
    out += tbl[(b0 & 3) << 4];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    auto b0 = static_cast<unsigned char>(bytes[i]), b1 = static_cast<unsigned char>(bytes[i + 1]);
    out += tbl[b0 >> 2];
    out += tbl[((b0 & 3) << 4) | (b1 >> 4)];
    out += tbl[(b1 & 15) << 2];
    out += '=';
  }
  return out;
}

}  // namespace quarry::store::chroma
