// The HTTP side of `quarry serve`: cpp-httplib (DESIGN.md) with TCP no-delay and a bounded
// thread pool; each route of routes.h is registered from the table, authenticated, checked
// against its scope and KB *before* its handler looks anything up, and answered with the one
// error envelope. Request counters and latencies feed /metrics.
#include "server/serve.h"

#include <arpa/inet.h>

#include <httplib.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "quarry/pump.h"
#include "server/mcp.h"
#include "server/rest.h"
#include "server/routes.h"
#include "wire/wire.h"

namespace quarry::server {

extern const char* const kOpenApiJson;  // openapi_doc.cpp, generated from docs/openapi.json

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

namespace {
using nlohmann::json;

// Request counts by (operation, status) and a latency histogram, for /metrics.
class HttpMetrics {
 public:
  void record(const std::string& op, int status, double seconds) {
    std::lock_guard lk(mu_);
    ++count_[{op, status}];
    auto& h = hist_[op];
    for (std::size_t i = 0; i < kBounds.size(); ++i)
      if (seconds <= kBounds[i]) ++h.buckets[i];
    ++h.count;
    h.sum += seconds;
  }

  std::string text() const {
    std::lock_guard lk(mu_);
    std::string out =
        "# HELP quarry_http_requests_total HTTP requests by operation and status.\n"
        "# TYPE quarry_http_requests_total counter\n";
    for (const auto& [k, n] : count_)
      out += "quarry_http_requests_total{route=\"" + k.first + "\",status=\"" +
             std::to_string(k.second) + "\"} " + std::to_string(n) + "\n";
    out +=
        "# HELP quarry_http_request_duration_seconds Time to answer a request.\n"
        "# TYPE quarry_http_request_duration_seconds histogram\n";
    char buf[64];
    for (const auto& [op, h] : hist_) {
      const std::string name = "quarry_http_request_duration_seconds";
      for (std::size_t i = 0; i < kBounds.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%g", kBounds[i]);
        out += name + "_bucket{route=\"" + op + "\",le=\"" + buf + "\"} " +
               std::to_string(h.buckets[i]) + "\n";
      }
      out += name + "_bucket{route=\"" + op + "\",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
      std::snprintf(buf, sizeof buf, "%.6f", h.sum);
      out += name + "_sum{route=\"" + op + "\"} " + buf + "\n";
      out += name + "_count{route=\"" + op + "\"} " + std::to_string(h.count) + "\n";
    }
    return out;
  }

 private:
  static constexpr std::array<double, 10> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                     0.025,  0.05,  0.1,    0.5,   2.5};
  struct Histogram {
    std::array<std::uint64_t, kBounds.size()> buckets{};
    std::uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, std::uint64_t> count_;
  std::map<std::string, Histogram> hist_;
};

// `upstream`: raised while serving an authenticated request, so an `unauthorized` is a provider
// refusing our key (502), not the caller's token (401).
void send_error(httplib::Response& res, const Error& raw, const std::string& data_dir,
                bool upstream = false) {
  const Error e = wire::redacted(raw, data_dir);
  res.status = wire::http_status(e.code());
  if (e.code() == Code::unauthorized && upstream)
    res.status = 502;
  else if (e.code() == Code::unauthorized)
    res.set_header("WWW-Authenticate", "Bearer");
  if (e.code() == Code::busy || e.code() == Code::rate_limited) res.set_header("Retry-After", "1");
  res.set_content(
      wire::error_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      "application/json");
}

// "/kbs/{kb}/documents/{id}" -> regex "/api/v1/kbs/([^/]+)/documents/([^/]+)" and {kb, id}.
std::pair<std::string, std::vector<std::string>> route_pattern(const std::string& tmpl) {
  std::string re = kApiPrefix;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if (c == '{') {
      std::size_t end = tmpl.find('}', i);
      names.push_back(tmpl.substr(i + 1, end - i - 1));
      re += "([^/]+)";
      i = end;
    } else if (c == '.') {
      re += "\\.";
    } else {
      re.push_back(c);
    }
  }
  return {re, names};
}

class HttpServerImpl final : public HttpServer {
 public:
  HttpServerImpl(const EngineOptions& engine, const ServeOptions& o) : opts_(o) {
    const bool loopback = is_loopback_host(o.host);
    allow_anonymous_ = loopback && !o.require_token;
    int threads = o.threads > 0
                      ? o.threads
                      : std::max(8, 4 * static_cast<int>(std::thread::hardware_concurrency()));
    EngineOptions base = engine;
    base.surface = "rest";
    pool_ = std::make_unique<EnginePool>(base, static_cast<std::size_t>(threads) + 2);
    data_dir_ = pool_->data_dir();
    if (!loopback) {
      auto e = pool_->acquire("local", "rest");
      const auto tokens = e->list_tokens();
      if (std::none_of(tokens.begin(), tokens.end(),
                       [](const TokenInfo& t) { return t.revoked_at.empty(); }))
        throw Error(Code::invalid_argument,
                    "binding " + o.host +
                        " (not loopback) requires tokens: create one first with `quarry token "
                        "create --name NAME --scope admin`",
                    {{"field", "host"}});
    }
    state_ = std::make_unique<ServerState>(ServerState{
        *pool_, nullptr, std::chrono::steady_clock::now(), kOpenApiJson, {}, {}, nullptr});
    state_->pump_providers = make_pump_providers(data_dir_);
    state_->http_metrics = [this] { return metrics_.text(); };
    if (o.mcp) {
      McpOptions mo;
      mo.read_only = o.mcp_read_only;
      mo.on_write = [this](const std::string& kb) {
        if (indexer_) indexer_->poke(kb);
      };
      mcp_ = std::make_unique<McpServer>(*pool_, mo);
    }

    http_.new_task_queue = [threads] {
      return new httplib::ThreadPool(static_cast<size_t>(threads));
    };
    http_.set_tcp_nodelay(true);
    http_.set_payload_max_length(o.max_body_bytes);
    http_.set_read_timeout(o.read_timeout_s, 0);
    http_.set_write_timeout(o.write_timeout_s, 0);
    http_.set_keep_alive_max_count(1000);
    http_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                        httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      try {
        if (res.status == 413)
          send_error(res,
                     Error(Code::payload_too_large,
                           "the request body is larger than this server accepts "
                           "(--max-body-mb)"),
                     data_dir_);
        else if (res.status == 404)
          send_error(res,
                     Error(Code::not_found, "no route " + req.method + " " + req.path +
                                                " (see /api/v1/openapi.json)"),
                     data_dir_);
        else if (res.status == 414)
          send_error(res, Error(Code::invalid_argument, "the request URI is too long"), data_dir_);
        else
          send_error(res, Error(Code::invalid_argument, "bad request"), data_dir_);
      } catch (...) {  // never let an exception out of httplib's error path
        res.status = 500;
        res.set_content(R"({"error":{"code":"internal","message":"internal error","details":{}}})",
                        "application/json");
      }
      return httplib::Server::HandlerResponse::Handled;
    }));
    http_.set_exception_handler(
        [this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
          send_error(res, Error(Code::internal, "internal error"), data_dir_);
        });
    // cpp-httplib reads a POST/PUT/PATCH/DELETE body without Content-Length until the connection
    // closes: `curl -X POST url` (no body) would hang for the read timeout. No length, no chunked
    // encoding: the body is empty.
    http_.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
      auto& r = const_cast<httplib::Request&>(req);
      if (r.method != "GET" && r.method != "HEAD" && !r.has_header("Content-Length") &&
          !r.has_header("Transfer-Encoding"))
        r.headers.emplace("Content-Length", "0");
      // `curl -d '{...}'` labels JSON as a form; httplib would parse it as one and cap it at
      // 8 KiB. No route takes form fields: read the body as it is.
      auto ct = r.headers.find("Content-Type");
      if (ct != r.headers.end() && ct->second.rfind("application/x-www-form-urlencoded", 0) == 0)
        ct->second = "application/json";
      return httplib::Server::HandlerResponse::Unhandled;
    });
    register_routes();
    if (mcp_) register_mcp();

    port_ = o.port == 0 ? http_.bind_to_any_port(o.host) : o.port;
    if (o.port != 0 && !http_.bind_to_port(o.host, o.port)) port_ = -1;
    if (port_ <= 0)
      throw Error(Code::io_error, "cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                      " (in use? choose another with --port)");

    if (o.indexer) {
      IndexerOptions io;
      io.engine = base;
      io.engine.surface = "server";
      io.engine.actor = "indexer";
      io.foreground_duty = o.index_duty;
      state_->indexer = nullptr;
      indexer_ = Indexer::start(io);
      state_->indexer = indexer_.get();
    }
    if (o.pump) {
      pool_->acquire("local", "server");  // opening one creates the data dir and its catalog
      PumpSchedulerOptions po;
      po.data_dir = data_dir_;
      po.providers = state_->pump_providers;
      pump_ = PumpScheduler::start(po);
      state_->pump_scheduler = pump_.get();
    }
  }

  ~HttpServerImpl() override {
    stop();
    if (pump_) pump_->stop();
    if (indexer_) indexer_->stop();
  }

  int port() const override { return port_; }
  void run() override { http_.listen_after_bind(); }
  void stop() override { http_.stop(); }

 private:
  // `check_origin` false: the caller checks Origin itself (MCP answers in JSON-RPC's shape).
  Principal authenticate_request(const httplib::Request& req, bool check_origin = true) {
    if (allow_anonymous_ && !req.has_header("Authorization")) check_local_caller(req, check_origin);
    auto e = pool_->acquire("local", "rest");
    return authenticate(*e, req.get_header_value("Authorization"), allow_anonymous_);
  }

  // Without a token only a local caller is the admin: not a request relayed by a proxy, not a
  // web page's cross-origin request (CSRF), not a name that resolves to 127.0.0.1 for a
  // hostile site (DNS rebinding).
  static void check_local_caller(const httplib::Request& req, bool check_origin) {
    if (req.has_header("Forwarded") || req.has_header("X-Forwarded-For"))
      throw Error(Code::unauthorized,
                  "a request relayed by a proxy needs a bearer token (run the server with "
                  "--require-token behind a proxy)");
    if (!is_loopback_host(host_of(req.get_header_value("Host"))))
      throw Error(Code::forbidden,
                  "the Host header is not a loopback name; send a bearer token to use another");
    if (check_origin && req.has_header("Origin")) {
      const std::string origin = req.get_header_value("Origin");
      const auto scheme = origin.find("://");
      if (scheme == std::string::npos || !is_loopback_host(host_of(origin.substr(scheme + 3))))
        throw Error(Code::forbidden, "cross-origin request from '" + origin +
                                         "' refused; a web app must send a bearer token");
    }
  }

  // "127.0.0.1:7720" -> "127.0.0.1", "[::1]:80" -> "::1", "localhost" -> "localhost".
  static std::string host_of(const std::string& authority) {
    if (!authority.empty() && authority[0] == '[') {
      auto end = authority.find(']');
      return end == std::string::npos ? authority : authority.substr(1, end - 1);
    }
    std::string h = authority.substr(0, authority.find_first_of(":/"));
    return h;
  }

  void register_routes() {
    for (const RouteSpec& spec : rest_routes()) {
      auto [re, names] = route_pattern(spec.path);
      RestHandler handler = rest_handlers().at(spec.operation_id);
      auto fn = [this, spec, names, handler](const httplib::Request& req, httplib::Response& res) {
        auto t0 = std::chrono::steady_clock::now();
        serve(spec, names, handler, req, res);
        metrics_.record(
            spec.operation_id, res.status,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      };
      const std::string m = spec.method;
      if (m == "GET")
        http_.Get(re, fn);
      else if (m == "POST")
        http_.Post(re, fn);
      else if (m == "PUT")
        http_.Put(re, fn);
      else if (m == "PATCH")
        http_.Patch(re, fn);
      else if (m == "DELETE")
        http_.Delete(re, fn);
    }
  }

  void serve(const RouteSpec& spec, const std::vector<std::string>& names, RestHandler handler,
             const httplib::Request& req, httplib::Response& res) {
    bool authenticated = false;
    try {
      ApiRequest a;
      for (std::size_t i = 0; i < names.size(); ++i) a.path[names[i]] = req.matches[i + 1];
      if (spec.authenticated) {
        a.who = authenticate_request(req);
        auto kb = a.path.find("kb");
        require(a.who, spec.scope, kb == a.path.end() ? "" : kb->second);
      }
      authenticated = true;
      for (const auto& [k, v] : req.params) a.query.emplace(k, v);
      a.content_type = req.get_header_value("Content-Type");
      if (req.is_multipart_form_data()) {
        for (const auto& [k, f] : req.files) {
          if (f.filename.empty())
            a.fields[k] = f.content;
          else
            a.files.push_back(UploadedFile{k, f.filename, f.content});
        }
      } else {
        a.body = req.body;
      }
      ApiReply r = handler(*state_, a);
      res.status = r.status;
      res.set_content(std::move(r.body), r.content_type);
    } catch (const Error& e) {
      send_error(res, e, data_dir_, authenticated);
    } catch (const nlohmann::json::exception& e) {
      send_error(res, Error(Code::invalid_argument, std::string("bad JSON: ") + e.what()),
                 data_dir_);
    } catch (const std::exception& e) {
      send_error(res, Error(Code::internal, std::string("internal error: ") + e.what()), data_dir_);
    }
  }

  void register_mcp() {
    auto fn = [this](const httplib::Request& req, httplib::Response& res) {
      auto t0 = std::chrono::steady_clock::now();
      try {
        Principal who = authenticate_request(req, /*check_origin=*/false);
        auto header = [&req](const std::string& name) {
          return req.get_header_value(name.c_str());
        };
        McpHttpReply r = handle_http(*mcp_, req.method, req.body, header, who);
        res.status = r.status;
        for (const auto& [k, v] : r.headers) res.set_header(k.c_str(), v);
        res.set_content(std::move(r.body), r.content_type.c_str());
      } catch (const Error& e) {
        send_error(res, e, data_dir_);
      } catch (const std::exception& e) {
        send_error(res, Error(Code::internal, std::string("internal error: ") + e.what()),
                   data_dir_);
      }
      metrics_.record("mcp", res.status,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    };
    http_.Post("/mcp", fn);
    http_.Get("/mcp", fn);
    http_.Delete("/mcp", fn);
  }

  ServeOptions opts_;
  std::string data_dir_;  // hidden from error messages (wire::redacted)
  bool allow_anonymous_ = false;
  int port_ = 0;
  httplib::Server http_;
  std::unique_ptr<EnginePool> pool_;
  std::unique_ptr<ServerState> state_;
  std::unique_ptr<McpServer> mcp_;
  std::unique_ptr<Indexer> indexer_;
  std::unique_ptr<PumpScheduler> pump_;
  HttpMetrics metrics_;
};

}  // namespace

std::unique_ptr<HttpServer> HttpServer::bind(const EngineOptions& engine,
                                             const ServeOptions& opts) {
  return std::make_unique<HttpServerImpl>(engine, opts);
}

}  // namespace quarry::server
