// A FAKE Qdrant, not a real server: a cpp-httplib server on 127.0.0.1 (any free port), started
// by the test, that
//  (a) checks every request against the shapes of Qdrant's documented REST API
//      (https://api.qdrant.tech/api-reference, v1.11 to v1.19: method, path, query parameters,
//      body fields and their types) and answers 400 {"status": {"error": ...}} to anything else,
//      as Qdrant's request validation does; and
//  (b) implements just enough semantics in memory (collections, points, payload filters with
//      Qdrant's documented rules — arrays match if any element matches, match value is typed,
//      range is numeric, is_null / is_empty — exact cosine search, counts, scroll, deletes) to
//      run the store contract suite through it.
// It proves the store speaks the documented API and that its filter translation is right under
// Qdrant's documented semantics; it cannot prove a real server agrees (see
// qdrant_real_contract_test.cpp for that, opt-in).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace quarry::testing {

class FakeQdrant {
 public:
  explicit FakeQdrant(std::string api_key = "");
  ~FakeQdrant();
  FakeQdrant(const FakeQdrant&) = delete;
  FakeQdrant& operator=(const FakeQdrant&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Requests answered 400 for an undocumented shape, and the last such error.
  int rejected() const { return rejected_.load(); }
  std::string last_error() const;
  // Every request as "METHOD /path?query" with its body, in arrival order.
  struct Seen {
    std::string line;
    nlohmann::json body;
  };
  std::vector<Seen> seen() const;
  void clear_seen();
  // The payload index schema of a collection ({} when none or no collection).
  nlohmann::json payload_schema(const std::string& collection) const;

 private:
  struct Point {
    std::vector<double> vector;
    nlohmann::json payload;
  };
  struct Collection {
    int size = 0;
    std::string distance;
    nlohmann::json payload_schema = nlohmann::json::object();
    std::map<std::string, Point> points;  // by canonical id
  };
  using Handler = std::function<nlohmann::json(const httplib::Request&, const nlohmann::json&,
                                               const std::string& collection)>;

  void route(const std::string& method, const std::string& pattern, std::vector<std::string> params,
             Handler h);
  nlohmann::json list(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json get(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json create(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json drop(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json index(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json upsert(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json remove(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json scroll(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json search(const httplib::Request&, const nlohmann::json&, const std::string&);
  nlohmann::json count(const httplib::Request&, const nlohmann::json&, const std::string&);

  Collection& existing(const std::string& name);

  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  std::string api_key_;
  mutable std::mutex mu_;
  std::map<std::string, Collection> collections_;
  std::vector<Seen> seen_;
  std::string last_error_;
  std::atomic<int> rejected_{0};
};

}  // namespace quarry::testing
