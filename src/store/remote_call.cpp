#include "store/remote_call.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "quarry/error.h"

namespace quarry::store {

net::RetryOptions retry_options(const RemoteSettings& s) {
  return net::RetryOptions{s.max_retries, net::Millis(s.retry_base_delay_ms),
                           net::Millis(s.retry_max_delay_ms), net::Millis(60000)};
}

net::HttpRequest remote_request(const RemoteSettings& s, const std::string& method,
                                const std::string& url, const nlohmann::json* body) {
  net::HttpRequest req;
  req.method = method;
  req.url = url;
  req.headers = {{"Accept", "application/json"}};
  if (body) {
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = body->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  req.timeout_ms = s.timeout_ms;
  req.connect_timeout_ms = std::min(s.timeout_ms, 5000);
  req.allow_private = s.allow_private;
  return req;
}

net::RetryOutcome call_remote(const net::RetryPolicy& retry, net::HttpClient& http,
                              const net::HttpRequest& req, const RemoteTarget& t,
                              const std::string& what) {
  try {
    return retry.run([&] { return http.send(req); });
  } catch (const Error& e) {
    auto d = e.details();
    d["store"] = t.store;
    d["url"] = t.url;
    const std::string at = t.server + " at " + t.url;
    if (e.code() == Code::timeout)
      throw Error(Code::timeout,
                  at + " did not answer " + what + " within " + std::to_string(t.timeout_ms) +
                      " ms (" + e.message() + "); check the server, or raise the " + t.store +
                      " store's timeout_ms",
                  d);
    if (e.code() == Code::blocked_address)
      throw Error(e.code(),
                  at + ": " + e.message() + " (for a local server set the " + t.store +
                      " store's allow_private: true)",
                  d);
    if (d.count("transport"))
      throw Error(Code::upstream_error,
                  at + " is unreachable (" + e.message() + "); start the server or fix the " +
                      t.store + " store's url",
                  d);
    throw;
  }
}

void fail_remote(const RemoteTarget& t, const std::string& what, const net::RetryOutcome& o,
                 const std::string& server_message, const std::string& auth_hint,
                 const std::string& rejected_hint) {
  const long st = o.response.status;
  std::map<std::string, std::string> d = {{"store", t.store},
                                          {"url", t.url},
                                          {"status", std::to_string(st)},
                                          {"attempts", std::to_string(o.attempts)}};
  const std::string http = " (HTTP " + std::to_string(st) + "): " + server_message;
  const std::string who = t.server + " at " + t.url;
  if (st == 401 || st == 403)
    throw Error(Code::unauthorized, who + " refused " + what + http + "; " + auth_hint, d);
  if (st == 429)
    throw Error(Code::rate_limited,
                who + " kept rate-limiting " + what + " after " + std::to_string(o.attempts) +
                    " attempts" + http + "; retry later",
                d);
  if (st >= 500)
    throw Error(Code::upstream_error,
                who + " failed " + what + " after " + std::to_string(o.attempts) + " attempts" +
                    http + "; check the server's log, then retry",
                d);
  throw Error(Code::upstream_error, who + " rejected " + what + http + "; " + rejected_hint, d);
}

std::string name_slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (out.size() >= 20) break;
    auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) && u < 128 ? static_cast<char>(std::tolower(u)) : '-';
  }
  return out;
}

std::string path_segment(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string body_excerpt(const std::string& body) {
  std::string s = body.substr(0, 300);
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string api_key_from_secret(const StoreContext& ctx, const std::string& store,
                                const std::string& secret_name) {
  if (secret_name.empty()) return "";
  if (!ctx.secret)
    throw Error(Code::invalid_argument,
                "the " + store + " store's api_key_secret is set but no secret store is available",
                {{"store", store}});
  std::string value = ctx.secret(secret_name);
  if (value.empty())
    throw Error(Code::unauthorized,
                "secret " + secret_name + " (the " + store +
                    " store's api_key_secret) is empty or missing; set it with `quarry secret "
                    "set " +
                    secret_name + "`",
                {{"store", store}, {"secret", secret_name}});
  return value;
}

}  // namespace quarry::store
