// The HTTP side of `quarry serve`: requests come complete from the event loop (http_loop.h) to
// a worker, are matched against the route table of routes.h, authenticated, checked against
// their scope and KB *before* a handler looks anything up, and answered with the one error
// envelope. Request counters and latencies feed /metrics.
#include "server/serve.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "quarry/deadline.h"
#include "quarry/pump.h"
#include "server/http1.h"
#include "server/http_loop.h"
#include "server/mcp.h"
#include "server/rest.h"
#include "server/routes.h"
#include "server/ui_assets.h"
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
http::Response error_response(const Error& raw, const std::string& data_dir,
                              bool upstream = false) {
  const Error e = wire::redacted(raw, data_dir);
  http::Response res;
  res.status = wire::http_status(e.code());
  if (e.code() == Code::unauthorized && upstream)
    res.status = 502;
  else if (e.code() == Code::unauthorized)
    res.headers.push_back({"WWW-Authenticate", "Bearer"});
  if (e.code() == Code::busy || e.code() == Code::rate_limited)
    res.headers.push_back({"Retry-After", "1"});
  res.body = wire::error_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return res;
}

// A route of routes.h, split at '/': literal segments and {parameters}.
struct CompiledRoute {
  RouteSpec spec;
  std::vector<std::string> segments;  // "{kb}" for a parameter
  RestHandler handler;
};

std::vector<std::string_view> split_path(std::string_view p) {
  std::vector<std::string_view> out;
  while (!p.empty()) {
    if (p[0] == '/') p.remove_prefix(1);
    const auto slash = p.find('/');
    out.push_back(p.substr(0, slash));
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash);
  }
  return out;
}

bool is_param(const std::string& seg) {
  return !seg.empty() && seg.front() == '{';
}

class HttpServerImpl final : public HttpServer {
 public:
  HttpServerImpl(const EngineOptions& engine, const ServeOptions& o) : opts_(o) {
    const bool loopback = is_loopback_host(o.host);
    allow_anonymous_ = loopback && !o.require_token;
    const int threads =
        o.threads > 0 ? o.threads
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
    for (const RouteSpec& spec : rest_routes()) {
      CompiledRoute r{spec, {}, rest_handlers().at(spec.operation_id)};
      for (auto seg : split_path(spec.path)) r.segments.emplace_back(seg);
      routes_.push_back(std::move(r));
    }

    http::LoopOptions lo;
    lo.host = o.host;
    lo.port = o.port;
    lo.workers = threads;
    lo.limits.max_body = o.max_body_bytes;
    lo.header_timeout = std::chrono::seconds(o.header_timeout_s);
    lo.read_timeout = std::chrono::seconds(o.read_timeout_s);
    lo.write_timeout = std::chrono::seconds(o.write_timeout_s);
    lo.idle_timeout = std::chrono::seconds(o.idle_timeout_s);
    lo.max_connections = o.max_connections;
    lo.max_incomplete = o.max_incomplete;
    loop_ = http::Loop::listen(
        lo, [this](http::Request& req) { return handle(req); },
        [this](int status, const char* code, const std::string& message) {
          http::Response r = error_response(Error(code_from_name(code), message), data_dir_);
          r.status = status;
          return r;
        });

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

  int port() const override { return loop_->port(); }
  void run() override { loop_->run(); }
  void stop() override { loop_->stop(); }

 private:
  // One complete request, on a worker thread.
  http::Response handle(http::Request& req) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string op = "unrouted";
    http::Response res;
    try {
      res = route(req, op);
    } catch (const Error& e) {
      res = error_response(e, data_dir_);
    } catch (const std::exception& e) {
      res = error_response(Error(Code::internal, std::string("internal error: ") + e.what()),
                           data_dir_);
    }
    add_security_headers(res, op == "ui");
    metrics_.record(op, res.status,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return res;
  }

  // The page's policy: scripts, styles and images only from this server's own files (no inline
  // script, no eval), requests only to this origin, never framed. Everything else (JSON,
  // Markdown) may run nothing at all, so a document opened from the API stays inert.
  static void add_security_headers(http::Response& res, bool page) {
    res.headers.push_back(
        {"Content-Security-Policy",
         page ? "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: "
                "blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                "frame-ancestors 'none'"
              : "default-src 'none'; frame-ancestors 'none'; sandbox"});
    res.headers.push_back({"Referrer-Policy", "no-referrer"});
    res.headers.push_back({"X-Frame-Options", "DENY"});
    res.headers.push_back({"Cross-Origin-Opener-Policy", "same-origin"});
    res.headers.push_back({"Cross-Origin-Resource-Policy", "same-origin"});
  }

  static bool is_ui_path(const std::string& p) {
    return p == "/" || p == "/index.html" || p.rfind("/ui/", 0) == 0;
  }

  // The web UI's files (web/, compiled in): `/` is the page, `/ui/NAME` its scripts and styles.
  // They hold no data, so they answer without a token; every call the page makes goes through
  // the API's checks.
  http::Response serve_ui(const http::Request& req) {
    if (req.method != "GET" && req.method != "HEAD") {
      http::Response r =
          error_response(Error(Code::not_found,
                               "no route " + req.method + " " + req.path + "; it takes GET, HEAD"),
                         data_dir_);
      r.status = 405;
      r.headers.push_back({"Allow", "GET, HEAD"});
      return r;
    }
    if (!opts_.ui)
      return error_response(Error(Code::not_found,
                                  "the web UI is off: this server was started with --no-ui (the "
                                  "REST API is under /api/v1)"),
                            data_dir_);
    const std::string path =
        req.path == "/" || req.path == "/index.html" ? "/ui/index.html" : req.path;
    for (const UiAsset& a : ui_assets()) {
      if (path != a.path) continue;
      http::Response res;
      res.headers.push_back({"ETag", a.etag});
      res.headers.push_back({"Cache-Control", "no-cache"});
      const std::string* inm = req.header("if-none-match");
      if (inm && *inm == a.etag) {
        res.status = 304;
        res.content_type.clear();
        return res;
      }
      res.content_type = a.content_type;
      res.body.assign(a.data, a.size);
      return res;
    }
    return error_response(Error(Code::not_found, "no web UI file " + req.path), data_dir_);
  }

  http::Response route(http::Request& req, std::string& op) {
    if (req.path == "/mcp" && mcp_) {
      op = "mcp";
      return serve_mcp(req);
    }
    if (is_ui_path(req.path)) {
      op = "ui";
      return serve_ui(req);
    }
    const std::string_view prefix = kApiPrefix;
    std::string_view path = req.path;
    const bool api = path.substr(0, prefix.size()) == prefix &&
                     (path.size() == prefix.size() || path[prefix.size()] == '/');
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    const CompiledRoute* best = nullptr;
    int best_literals = -1;
    std::string allowed;
    if (api) {
      const auto segs = split_path(path.substr(prefix.size()));
      for (const auto& r : routes_) {
        if (r.segments.size() != segs.size()) continue;
        int literals = 0;
        bool match = true;
        for (std::size_t i = 0; i < segs.size() && match; ++i) {
          if (is_param(r.segments[i]))
            match = !segs[i].empty();
          else if ((match = r.segments[i] == segs[i]))
            ++literals;
        }
        if (!match) continue;
        if (method != r.spec.method) {
          if (allowed.find(r.spec.method) == std::string::npos)
            allowed += (allowed.empty() ? "" : ", ") + std::string(r.spec.method);
          continue;
        }
        if (literals > best_literals) {
          best = &r;
          best_literals = literals;
        }
      }
    }
    if (!best) {
      const std::string what = "no route " + req.method + " " + req.path;
      if (!allowed.empty()) {
        http::Response r = error_response(
            Error(Code::not_found, what + "; this path takes " + allowed), data_dir_);
        r.status = 405;
        r.headers.push_back({"Allow", allowed});
        return r;
      }
      return error_response(Error(Code::not_found, what + " (see /api/v1/openapi.json)"),
                            data_dir_);
    }
    op = best->spec.operation_id;
    ApiRequest a;
    const auto segs = split_path(path.substr(prefix.size()));
    for (std::size_t i = 0; i < segs.size(); ++i)
      if (is_param(best->segments[i]))
        a.path[best->segments[i].substr(1, best->segments[i].size() - 2)] = std::string(segs[i]);
    return serve(*best, a, req);
  }

  // CSRF: a browser may send a cross-site POST without asking first only as a form or plain
  // text; with an Origin header (a browser) a POST must be JSON or multipart, which a page of
  // another site cannot send without a CORS preflight this server never grants. `curl -d`
  // (no Origin) labels JSON as a form: read it as the JSON it is.
  static void check_content_type(http::Request& req) {
    if (req.method != "POST") return;
    for (auto& h : req.headers) {
      if (h.name != "content-type") continue;
      const bool form = http::media_type_is(h.value, "application/x-www-form-urlencoded");
      if (!req.has_header("origin")) {
        if (form) h.value = "application/json";
        return;
      }
      if (http::media_type_is(h.value, "application/json") ||
          http::media_type_is(h.value, "multipart/form-data"))
        return;
      break;
    }
    if (!req.has_header("origin")) return;
    const std::string* type = req.header("content-type");
    throw Error(Code::invalid_argument,
                "a POST from a web page (with an Origin header) must be application/json or "
                "multipart/form-data, not '" +
                    (type ? *type : std::string("none")) + "'",
                {{"field", "Content-Type"}});
  }

  http::Response serve(const CompiledRoute& r, ApiRequest& a, http::Request& req) {
    bool authenticated = false;
    try {
      if (r.spec.authenticated) {
        a.who = authenticate_request(req);
        auto kb = a.path.find("kb");
        require(a.who, r.spec.scope, kb == a.path.end() ? "" : kb->second);
      }
      check_content_type(req);
      authenticated = true;
      if (const std::string* client = req.header("x-quarry-client"); client && *client == "ui")
        a.surface = "ui";
      a.query = http::parse_query(req.query);
      const std::string* type = req.header("content-type");
      a.content_type = type ? *type : "";
      if (type && http::media_type_is(*type, "multipart/form-data")) {
        for (auto& part : http::parse_multipart(req.body, *type)) {
          if (part.has_filename)
            a.files.push_back(
                UploadedFile{part.name, std::move(part.filename), std::move(part.content)});
          else
            a.fields[part.name] = std::move(part.content);
        }
      } else {
        a.body = req.body;
      }
      ApiReply reply = with_deadline(r.spec.scope == Scope::read, what_of(r.spec),
                                     [&] { return r.handler(*state_, a); });
      http::Response res;
      res.status = reply.status;
      res.content_type = std::move(reply.content_type);
      res.body = std::move(reply.body);
      return res;
    } catch (const Error& e) {
      return error_response(e, data_dir_, authenticated);
    } catch (const nlohmann::json::exception& e) {
      return error_response(Error(Code::invalid_argument, std::string("bad JSON: ") + e.what()),
                            data_dir_);
    }
  }

  http::Response serve_mcp(http::Request& req) {
    const Principal who = authenticate_request(req, /*check_origin=*/false);
    check_content_type(req);
    auto header = [&req](const std::string& name) {
      std::string lower = name;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const std::string* v = req.header(lower);
      return v ? *v : std::string();
    };
    McpHttpReply r = with_deadline(false, "this MCP call", [&] {
      return handle_http(*mcp_, req.method, req.body, header, who);
    });
    http::Response res;
    res.status = r.status;
    for (const auto& [k, v] : r.headers) res.headers.push_back({k, v});
    res.content_type = std::move(r.content_type);
    res.body = std::move(r.body);
    return res;
  }

  // Runs `work` under the request deadline of its kind (docs/reliability.md); a deadline that
  // passes names the flag that sets it.
  template <typename Work>
  auto with_deadline(bool read, const std::string& what, Work&& work) -> decltype(work()) {
    ScopedDeadline d(
        std::chrono::milliseconds(read ? opts_.deadline_ms : opts_.write_deadline_ms), what,
        read ? "the server's --deadline option" : "the server's --write-deadline option");
    return work();
  }

  static std::string what_of(const RouteSpec& spec) {
    const std::string op = spec.operation_id;
    if (op == "search") return "this search";
    if (op == "grep") return "this grep";
    if (op == "addDocuments") return "this upload";
    return std::string("this request (") + spec.operation_id + ")";
  }

  static std::string header_or_empty(const http::Request& req, std::string_view name) {
    const std::string* v = req.header(name);
    return v ? *v : "";
  }

  // `check_origin` false: the caller checks Origin itself (MCP answers in JSON-RPC's shape).
  Principal authenticate_request(const http::Request& req, bool check_origin = true) {
    if (allow_anonymous_ && !req.has_header("authorization")) check_local_caller(req, check_origin);
    auto e = pool_->acquire("local", "rest");
    return authenticate(*e, header_or_empty(req, "authorization"), allow_anonymous_);
  }

  // Without a token only a local caller is the admin: not a request relayed by a proxy, not a
  // web page's cross-origin request (CSRF), not a name that resolves to 127.0.0.1 for a
  // hostile site (DNS rebinding).
  static void check_local_caller(const http::Request& req, bool check_origin) {
    if (req.has_header("forwarded") || req.has_header("x-forwarded-for"))
      throw Error(Code::unauthorized,
                  "a request relayed by a proxy needs a bearer token (run the server with "
                  "--require-token behind a proxy)");
    if (!is_loopback_host(host_of(header_or_empty(req, "host"))))
      throw Error(Code::forbidden,
                  "the Host header is not a loopback name; send a bearer token to use another");
    if (check_origin && req.has_header("origin")) {
      const std::string origin = header_or_empty(req, "origin");
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

  ServeOptions opts_;
  std::string data_dir_;  // hidden from error messages (wire::redacted)
  bool allow_anonymous_ = false;
  std::vector<CompiledRoute> routes_;
  std::unique_ptr<EnginePool> pool_;
  std::unique_ptr<ServerState> state_;
  std::unique_ptr<McpServer> mcp_;
  std::unique_ptr<Indexer> indexer_;
  std::unique_ptr<PumpScheduler> pump_;
  HttpMetrics metrics_;
  std::unique_ptr<http::Loop> loop_;  // last: its workers stop before what they use goes
};

}  // namespace

std::unique_ptr<HttpServer> HttpServer::bind(const EngineOptions& engine,
                                             const ServeOptions& opts) {
  return std::make_unique<HttpServerImpl>(engine, opts);
}

}  // namespace quarry::server
