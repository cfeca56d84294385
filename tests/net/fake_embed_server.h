// A real HTTP server on 127.0.0.1 (any free port), started by the test, that speaks the OpenAI
// embeddings API (POST /v1/embeddings) and Ollama's (POST /api/embed). Each request consumes
// the next scripted Reply; with none queued it answers correctly. It records what it was sent.
#pragma once

#include <httplib.h>

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace quarry::testing {

struct Reply {
  enum Kind { ok, raw, wrong_dims, wrong_count } kind = ok;
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
  int delay_ms = 0;  // sleep before answering (for timeouts)

  static Reply fine() { return {}; }
  static Reply status_body(int status, std::string body,
                           std::map<std::string, std::string> headers = {}) {
    Reply r;
    r.kind = raw;
    r.status = status;
    r.body = std::move(body);
    r.headers = std::move(headers);
    return r;
  }
  static Reply slow(int ms) {
    Reply r;
    r.delay_ms = ms;
    return r;
  }
};

class FakeEmbedServer {
 public:
  explicit FakeEmbedServer(int dims) : dims_(dims) {
    svr_.set_tcp_nodelay(true);
    auto handler = [this](bool ollama) {
      return [this, ollama](const httplib::Request& req, httplib::Response& res) {
        serve(req, res, ollama);
      };
    };
    svr_.Post("/v1/embeddings", handler(false));
    svr_.Post("/api/embed", handler(true));
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeEmbedServer() {
    svr_.stop();
    thread_.join();
  }
  FakeEmbedServer(const FakeEmbedServer&) = delete;
  FakeEmbedServer& operator=(const FakeEmbedServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::string ollama_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void push(Reply r) {
    std::lock_guard<std::mutex> lk(mu_);
    script_.push_back(std::move(r));
  }
  int requests() const {
    std::lock_guard<std::mutex> lk(mu_);
    return static_cast<int>(bodies_.size());
  }
  std::vector<nlohmann::json> bodies() const {
    std::lock_guard<std::mutex> lk(mu_);
    return bodies_;
  }
  std::vector<std::string> auth_headers() const {
    std::lock_guard<std::mutex> lk(mu_);
    return auth_;
  }

  // The vector the server returns for input `i` of a batch: component 0 is i + 1, the rest 1,
  // so a test can tell after normalisation which input a vector belongs to.
  static float marker(const std::vector<float>& v) { return v[0] / v[1]; }

 private:
  void serve(const httplib::Request& req, httplib::Response& res, bool ollama) {
    Reply r;
    {
      std::lock_guard<std::mutex> lk(mu_);
      bodies_.push_back(nlohmann::json::parse(req.body, nullptr, false));
      auth_.push_back(req.get_header_value("Authorization"));
      if (!script_.empty()) {
        r = script_.front();
        script_.pop_front();
      }
    }
    if (r.delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(r.delay_ms));
    for (const auto& [k, v] : r.headers) res.set_header(k, v);
    if (r.kind == Reply::raw) {
      res.status = r.status;
      res.set_content(r.body, "application/json");
      return;
    }
    auto in = nlohmann::json::parse(req.body, nullptr, false);
    std::size_t n = in.is_object() && in["input"].is_array() ? in["input"].size() : 1;
    if (r.kind == Reply::wrong_count) ++n;
    int dims = r.kind == Reply::wrong_dims ? dims_ + 1 : dims_;
    nlohmann::json vecs = nlohmann::json::array();
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<float> v(static_cast<std::size_t>(dims), 1.0f);
      v[0] = static_cast<float>(i + 1);
      vecs.push_back(v);
    }
    nlohmann::json out;
    if (ollama) {
      out = {{"model", in.value("model", "")}, {"embeddings", vecs}};
    } else {
      // Reversed on purpose: clients must order by "index", not by position.
      out = {{"object", "list"}, {"data", nlohmann::json::array()}};
      for (std::size_t i = n; i-- > 0;)
        out["data"].push_back({{"object", "embedding"}, {"index", i}, {"embedding", vecs[i]}});
    }
    res.status = 200;
    res.set_content(out.dump(), "application/json");
  }

  int dims_;
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::deque<Reply> script_;
  std::vector<nlohmann::json> bodies_;
  std::vector<std::string> auth_;
};

}  // namespace quarry::testing
