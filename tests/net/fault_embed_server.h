// A loopback OpenAI-compatible embeddings server (POST /v1/embeddings on 127.0.0.1, any free
// port) whose faults are decided by what it is sent, not by a script, so a test can drive the
// whole index lifecycle through it without knowing how requests are batched:
//   - a request with an input containing kTooLarge is answered 413 (content_too_large);
//   - one containing kRejected is answered 400 {"error":{"message":"input is too long"}}
//     (input_rejected);
//   - while an outage is switched on every request is answered 429 or 500, or (`slow`) only
//     after kSlowMs, longer than a test's client timeout, or (`model_refused`) 400 with a
//     message about the model, a misconfiguration no document is to blame for;
//   - otherwise every input gets a vector derived from a hash of its text.
// It counts every request it receives and records the inputs of each.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace quarry::testing {

class FaultEmbedServer {
 public:
  static constexpr const char* kTooLarge = "ZZFAULT413ZZ";
  static constexpr const char* kRejected = "ZZFAULT400ZZ";

  enum class Outage { none, rate_limited, server_error, slow, model_refused };
  static constexpr int kSlowMs = 400;

  explicit FaultEmbedServer(int dims) : dims_(dims) {
    svr_.set_tcp_nodelay(true);
    svr_.Post("/v1/embeddings",
              [this](const httplib::Request& req, httplib::Response& res) { serve(req, res); });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FaultEmbedServer() {
    svr_.stop();
    thread_.join();
  }
  FaultEmbedServer(const FaultEmbedServer&) = delete;
  FaultEmbedServer& operator=(const FaultEmbedServer&) = delete;

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

  void set_outage(Outage o) { outage_ = o; }

  // Every request received (answered well or not).
  int requests() const {
    std::lock_guard<std::mutex> lk(mu_);
    return static_cast<int>(inputs_.size());
  }
  // Requests answered 200 / with each fault.
  int ok_requests() const { return ok_; }
  int too_large_requests() const { return too_large_; }
  int rejected_requests() const { return rejected_; }
  int outage_requests() const { return outage_hits_; }

  // The inputs of every request, in arrival order.
  std::vector<std::vector<std::string>> inputs() const {
    std::lock_guard<std::mutex> lk(mu_);
    return inputs_;
  }
  // How many requests carried an input containing `needle`.
  int requests_with(const std::string& needle) const {
    std::lock_guard<std::mutex> lk(mu_);
    int n = 0;
    for (const auto& batch : inputs_)
      for (const auto& t : batch)
        if (t.find(needle) != std::string::npos) {
          ++n;
          break;
        }
    return n;
  }

 private:
  static std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    return h;
  }

  static void error(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    res.set_content(
        nlohmann::json{{"error", {{"message", message}, {"type", "test_fault"}}}}.dump(),
        "application/json");
  }

  void serve(const httplib::Request& req, httplib::Response& res) {
    auto in = nlohmann::json::parse(req.body, nullptr, false);
    std::vector<std::string> texts;
    if (in.is_object() && in.contains("input")) {
      if (in["input"].is_array()) {
        for (const auto& t : in["input"])
          texts.push_back(t.is_string() ? t.get<std::string>() : "");
      } else if (in["input"].is_string()) {
        texts.push_back(in["input"].get<std::string>());
      }
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      inputs_.push_back(texts);
    }
    switch (outage_.load()) {
      case Outage::rate_limited:
        ++outage_hits_;
        return error(res, 429, "Rate limit reached for requests");
      case Outage::server_error:
        ++outage_hits_;
        return error(res, 500, "The server had an error while processing your request");
      case Outage::model_refused:
        ++outage_hits_;
        return error(res, 400,
                     "The model `fault-model` does not exist or you do not have access to it.");
      case Outage::slow:
        ++outage_hits_;
        std::this_thread::sleep_for(std::chrono::milliseconds(kSlowMs));
        return error(res, 503, "answered too late to matter");
      case Outage::none:
        break;
    }
    for (const auto& t : texts) {
      if (t.find(kTooLarge) != std::string::npos) {
        ++too_large_;
        return error(res, 413, "Request entity too large");
      }
    }
    for (const auto& t : texts) {
      if (t.find(kRejected) != std::string::npos) {
        ++rejected_;
        return error(res, 400, "input is too long");
      }
    }
    nlohmann::json data = nlohmann::json::array();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      std::uint64_t h = fnv1a(texts[i]);
      std::vector<float> v(static_cast<std::size_t>(dims_));
      for (int d = 0; d < dims_; ++d) {
        v[static_cast<std::size_t>(d)] = 1.0f + static_cast<float>(h & 0xff) / 255.0f;
        h = (h >> 8) | (h << 56);
      }
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", v}});
    }
    ++ok_;
    res.status = 200;
    res.set_content(nlohmann::json{{"object", "list"}, {"data", data}}.dump(), "application/json");
  }

  int dims_;
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<Outage> outage_{Outage::none};
  std::atomic<int> ok_{0}, too_large_{0}, rejected_{0}, outage_hits_{0};
  mutable std::mutex mu_;
  std::vector<std::vector<std::string>> inputs_;
};

}  // namespace quarry::testing
