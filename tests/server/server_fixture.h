// A real `quarry serve` (the library's HttpServer) on 127.0.0.1, any free port, in this
// process, and an HTTP client for it: REST tests go over real HTTP.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "quarry/engine.h"
#include "server/serve.h"
#include "test_util.h"

namespace quarry::testing {

struct HttpResult {
  int status = 0;
  std::string body;
  nlohmann::json json;  // discarded when the body is not JSON
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  httplib::Headers headers;
};

class ServerTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::string data = (dir / "data").string();
  std::unique_ptr<server::HttpServer> srv;
  std::thread runner;
  std::string token;  // sent as a bearer token when not empty

  void start(server::ServeOptions o = {}) {
    o.port = 0;
    EngineOptions eo;
    eo.data_dir = data;
    srv = server::HttpServer::bind(eo, o);
    runner = std::thread([this] { srv->run(); });
  }

  void TearDown() override {
    if (srv) {
      srv->stop();
      runner.join();
      srv.reset();
    }
  }

  // An Engine on the same data directory (as another process would open it).
  std::unique_ptr<Engine> engine() {
    EngineOptions eo;
    eo.data_dir = data;
    return Engine::open(eo);
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", srv->port());
    c.set_read_timeout(30, 0);
    return c;
  }

  httplib::Headers headers(const std::string& tok) const {
    httplib::Headers h;
    if (!tok.empty()) h.emplace("Authorization", "Bearer " + tok);
    return h;
  }

  static HttpResult result(const httplib::Result& r) {
    HttpResult out;
    if (!r) {
      ADD_FAILURE() << "HTTP request failed: " << httplib::to_string(r.error());
      return out;
    }
    out.status = r->status;
    out.body = r->body;
    out.headers = r->headers;
    out.json = nlohmann::json::parse(r->body, nullptr, false);
    return out;
  }

  HttpResult get(const std::string& path, const std::string& tok = "\x01") {
    auto c = client();
    return result(c.Get(("/api/v1" + path).c_str(), headers(tok == "\x01" ? token : tok)));
  }
  HttpResult send(const std::string& method, const std::string& path, const nlohmann::json& body,
                  const std::string& tok = "\x01") {
    return send_raw(method, path, body.dump(), "application/json", tok);
  }
  HttpResult send_raw(const std::string& method, const std::string& path, const std::string& body,
                      const std::string& type, const std::string& tok = "\x01") {
    auto c = client();
    auto h = headers(tok == "\x01" ? token : tok);
    const std::string p = "/api/v1" + path;
    if (method == "POST") return result(c.Post(p.c_str(), h, body, type.c_str()));
    if (method == "PUT") return result(c.Put(p.c_str(), h, body, type.c_str()));
    if (method == "PATCH") return result(c.Patch(p.c_str(), h, body, type.c_str()));
    if (method == "DELETE") return result(c.Delete(p.c_str(), h, body, type.c_str()));
    ADD_FAILURE() << "no method " << method;
    return {};
  }
};

// The error code of an error envelope ("" when the body is not one).
inline std::string error_code(const HttpResult& r) {
  if (!r.json.is_object() || !r.json.contains("error")) return "";
  return r.json["error"].value("code", "");
}

}  // namespace quarry::testing
