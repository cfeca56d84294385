// The `http` source (SPEC §8): the app's webhook, through src/net/ (the SSRF guard, the use
// case's timeout). GET <url>?limit=N&revision=R answers a JSON array of {id, content,
// metadata?}; POST <url> takes one slice: {revision, docs: [{id, metadata, chunks: [{seq,
// content, metadata, embedding}]}], failures: [{id, code, message, skipped}]}. Ids go back
// exactly as the app sent them (number or string).
//
// Errors: no answer, a timeout or a 429/5xx is retryable; any other status is the app's to fix
// (contract_violation, parked); an address the guard refuses is blocked_address (parked).
#include <memory>

#include "net/http_client.h"
#include "pump/source.h"
#include "quarry/error.h"

namespace quarry::pump {
using nlohmann::json;

namespace {

class HttpSourceImpl final : public Source {
 public:
  HttpSourceImpl(const UseCase& uc, std::string token, std::shared_ptr<net::HttpClient> client)
      : uc_(uc), token_(std::move(token)), client_(std::move(client)) {}

  std::optional<std::vector<PendingRow>> pending(int limit, const std::string& revision) override {
    const char sep = uc_.http.url.find('?') == std::string::npos ? '?' : '&';
    auto r = call(
        "GET", uc_.http.url + sep + "limit=" + std::to_string(limit) + "&revision=" + revision, "");
    if (r.body.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
    json body = json::parse(r.body, nullptr, false);
    if (body.is_discarded()) throw violation("its GET answered something that is not JSON");
    if (body.is_null()) return std::nullopt;
    if (!body.is_array())
      throw violation("its GET must answer a JSON array of {id, content, metadata?}");
    std::vector<PendingRow> rows;
    for (auto& e : body) {
      if (!e.is_object() || !e.contains("id") || !e.contains("content") ||
          !e["content"].is_string() || !(e["id"].is_string() || e["id"].is_number_integer()))
        throw violation(
            "every row of its GET needs an id (string or integer) and a content "
            "string");
      PendingRow row;
      row.id_value = e["id"];
      row.id = e["id"].is_string() ? e["id"].get<std::string>() : e["id"].dump();
      row.content = e["content"].get<std::string>();
      if (e.contains("metadata") && !e["metadata"].is_null()) {
        if (!e["metadata"].is_object())
          throw violation("a row's metadata must be a JSON object (row " + row.id + ")");
        row.metadata = e["metadata"];
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  void store(const Slice& s) override {
    json docs = json::array(), failures = json::array();
    for (const auto& d : s.docs) {
      json chunks = json::array();
      for (const auto& c : d.chunks)
        chunks.push_back({{"seq", c.index},
                          {"content", c.text},
                          {"metadata", c.metadata},
                          {"embedding", c.vector}});
      docs.push_back({{"id", d.id_value.is_null() ? json(d.id) : d.id_value},
                      {"metadata", d.metadata},
                      {"chunks", std::move(chunks)}});
    }
    for (const auto& f : s.failures)
      failures.push_back({{"id", f.id_value.is_null() ? json(f.id) : f.id_value},
                          {"code", f.code},
                          {"message", f.message},
                          {"permanent", true},
                          {"skipped", f.skipped}});
    json body = {
        {"revision", s.revision}, {"docs", std::move(docs)}, {"failures", std::move(failures)}};
    call("POST", uc_.http.url, body.dump(-1, ' ', false, json::error_handler_t::replace));
  }

 private:
  Error violation(const std::string& what) const {
    return Error(Code::contract_violation,
                 "use case " + uc_.name +
                     ": the webhook broke the pump "
                     "contract: " +
                     what,
                 {{"use_case", uc_.name}});
  }

  net::HttpResponse call(const std::string& method, const std::string& url,
                         const std::string& body) {
    net::HttpRequest req;
    req.method = method;
    req.url = url;
    req.body = body;
    req.timeout_ms = uc_.timeout_ms;
    req.connect_timeout_ms = std::min(uc_.timeout_ms, 10000);
    req.allow_private = uc_.http.allow_private;
    req.headers.push_back({"Accept", "application/json"});
    if (!body.empty()) req.headers.push_back({"Content-Type", "application/json"});
    if (!token_.empty()) req.headers.push_back({"Authorization", "Bearer " + token_});
    net::HttpResponse r;
    try {
      r = client_->send(req);
    } catch (const Error& e) {
      throw Error(e.code(),
                  "use case " + uc_.name + ": the webhook " + method + " failed: " + e.message(),
                  {{"use_case", uc_.name}});
    }
    if (r.status >= 200 && r.status < 300) return r;
    std::string excerpt = r.body.substr(0, 200);
    const std::string msg = "use case " + uc_.name + ": the webhook answered " + method + " with " +
                            std::to_string(r.status) + (excerpt.empty() ? "" : ": " + excerpt);
    if (r.status == 429 || r.status >= 500)
      throw Error(r.status == 429 ? Code::rate_limited : Code::upstream_error, msg,
                  {{"use_case", uc_.name}, {"status", std::to_string(r.status)}});
    throw Error(Code::contract_violation, msg + "; the app's handler refused the pump's request",
                {{"use_case", uc_.name}, {"status", std::to_string(r.status)}});
  }

  const UseCase& uc_;
  std::string token_;
  std::shared_ptr<net::HttpClient> client_;
};

}  // namespace

std::unique_ptr<Source> make_http_source(const UseCase& uc, const SecretLookup& secret) {
  std::string token;
  if (!uc.http.api_key_secret.empty()) {
    token = secret ? secret(uc.http.api_key_secret) : "";
    if (token.empty())
      throw Error(Code::invalid_argument,
                  "use case " + uc.name + ": secret '" + uc.http.api_key_secret +
                      "' (source.api_key_secret) is empty or unknown: store the webhook's token "
                      "in it (quarry secret set " +
                      uc.http.api_key_secret + ")",
                  {{"use_case", uc.name}, {"field", "source.api_key_secret"}});
  }
  static std::shared_ptr<net::HttpClient> client = net::make_curl_client();
  return std::make_unique<HttpSourceImpl>(uc, std::move(token), client);
}

std::unique_ptr<Source> make_source(const UseCase& uc, const SecretLookup& secret) {
  return uc.source_type == "http" ? make_http_source(uc, secret) : make_sql_source(uc, secret);
}

}  // namespace quarry::pump
