// The fake Qdrant of fake_qdrant_server.h. Every shape below is from Qdrant's API reference
// (https://api.qdrant.tech/api-reference, v1.11 to v1.19; the page of each endpoint is named at
// its handler) and its filtering guide (https://qdrant.tech/documentation/concepts/filtering/).
#include "fake_qdrant_server.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace quarry::testing {
using nlohmann::json;

namespace {

struct Bad : std::runtime_error {  // 400, as Qdrant's request validation answers
  using std::runtime_error::runtime_error;
};
struct Missing : std::runtime_error {  // 404
  using std::runtime_error::runtime_error;
};
struct Conflict : std::runtime_error {  // 409
  using std::runtime_error::runtime_error;
};

void only(const json& obj, std::set<std::string> allowed, const std::string& where) {
  if (!obj.is_object()) throw Bad(where + ": expected an object");
  for (const auto& [k, v] : obj.items())
    if (!allowed.count(k)) throw Bad(where + ": unknown field `" + k + "`");
}

bool is_uint(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

// A point id: an unsigned integer or a UUID (hyphenated or 32 hex digits); canonical form back.
std::string point_id(const json& id) {
  if (is_uint(id)) return id.dump();
  if (!id.is_string()) throw Bad("point id: expected an unsigned integer or a UUID");
  std::string s, in = id.get<std::string>();
  for (char c : in)
    if (c != '-') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::regex hyphenated(
      "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
      "[0-9a-fA-F]{12}$");
  static const std::regex plain("^[0-9a-f]{32}$");
  if (!(std::regex_match(in, hyphenated) || std::regex_match(in, plain)))
    throw Bad("Unable to parse UUID: " + in);
  return s.substr(0, 8) + "-" + s.substr(8, 4) + "-" + s.substr(12, 4) + "-" + s.substr(16, 4) +
         "-" + s.substr(20);
}

json id_json(const std::string& canonical) {
  if (!canonical.empty() && std::isdigit(static_cast<unsigned char>(canonical[0])) &&
      canonical.find('-') == std::string::npos)
    return json::parse(canonical);
  return canonical;
}

// --- filters (https://qdrant.tech/documentation/concepts/filtering/) --------------------------

void check_filter(const json& f, const std::string& where);

void check_condition(const json& c, const std::string& where) {
  if (!c.is_object()) throw Bad(where + ": a condition is an object");
  if (c.contains("key")) {
    only(c, {"key", "match", "range"}, where);  // the field conditions this fake implements
    if (!c["key"].is_string()) throw Bad(where + ".key: expected a string");
    if (c.contains("match") == c.contains("range"))
      throw Bad(where + ": a field condition needs exactly one of match, range");
    if (c.contains("match")) {
      const json& m = c["match"];
      only(m, {"value", "any", "except"}, where + ".match");
      if (m.size() != 1) throw Bad(where + ".match: expected one of value, any, except");
      if (m.contains("value")) {
        const json& v = m["value"];
        if (!(v.is_string() || v.is_number_integer() || v.is_boolean()))
          throw Bad(where + ".match.value: expected a string, an integer or a bool");
      } else {
        const json& l = m.contains("any") ? m["any"] : m["except"];
        if (!l.is_array()) throw Bad(where + ".match: expected an array");
        bool strs = true, ints = true;
        for (const auto& e : l) {
          strs = strs && e.is_string();
          ints = ints && e.is_number_integer();
        }
        if (!strs && !ints) throw Bad(where + ".match: expected only strings or only integers");
      }
    } else {
      only(c["range"], {"gt", "gte", "lt", "lte"}, where + ".range");
      for (const auto& [k, v] : c["range"].items())
        if (!(v.is_number() || v.is_null()))
          throw Bad(where + ".range." + k + ": expected a number");
    }
    return;
  }
  if (c.contains("is_null") || c.contains("is_empty")) {
    const char* k = c.contains("is_null") ? "is_null" : "is_empty";
    only(c, {k}, where);
    only(c[k], {"key"}, where + "." + k);
    if (!c[k].contains("key") || !c[k]["key"].is_string())
      throw Bad(where + "." + k + ".key: expected a string");
    return;
  }
  if (c.contains("has_id")) {
    only(c, {"has_id"}, where);
    if (!c["has_id"].is_array()) throw Bad(where + ".has_id: expected an array");
    for (const auto& id : c["has_id"]) point_id(id);
    return;
  }
  check_filter(c, where);  // a nested filter
}

void check_filter(const json& f, const std::string& where) {
  only(f, {"must", "should", "must_not"}, where);
  for (const auto& [k, v] : f.items()) {
    if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i)
        check_condition(v[i], where + "." + k + "[" + std::to_string(i) + "]");
    } else if (!v.is_null()) {
      check_condition(v, where + "." + k);
    }
  }
}

// The values at a dotted path; arrays at any step are expanded (Qdrant's array semantics).
void collect(const json& at, const std::vector<std::string>& parts, std::size_t i,
             std::vector<json>& out) {
  if (at.is_array()) {
    for (const auto& e : at) collect(e, parts, i, out);
    return;
  }
  if (i == parts.size()) {
    out.push_back(at);
    return;
  }
  if (at.is_object() && at.contains(parts[i])) collect(at[parts[i]], parts, i + 1, out);
}

std::vector<json> values_at(const json& payload, const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  std::vector<json> out;
  collect(payload, parts, 0, out);
  return out;
}

bool same_typed(const json& stored, const json& want) {
  if (want.is_string()) return stored.is_string() && stored == want;
  if (want.is_boolean()) return stored.is_boolean() && stored == want;
  return stored.is_number_integer() && want.is_number_integer() &&
         stored.get<std::int64_t>() == want.get<std::int64_t>();
}

bool matches(const json& f, const std::string& id, const json& payload);

bool condition(const json& c, const std::string& id, const json& payload) {
  if (c.contains("key")) {
    auto vals = values_at(payload, c["key"].get<std::string>());
    if (c.contains("range")) {
      for (const auto& v : vals) {
        if (!v.is_number()) continue;  // range is numeric; bools are not numbers in JSON
        double x = v.get<double>();
        bool ok = true;
        for (const auto& [op, b] : c["range"].items()) {
          if (b.is_null()) continue;
          double y = b.get<double>();
          ok = ok && (op == "gt" ? x > y : op == "gte" ? x >= y : op == "lt" ? x < y : x <= y);
        }
        if (ok) return true;
      }
      return false;
    }
    const json& m = c["match"];
    if (m.contains("value")) {
      for (const auto& v : vals)
        if (same_typed(v, m["value"])) return true;
      return false;
    }
    const bool any = m.contains("any");
    const json& list = any ? m["any"] : m["except"];
    for (const auto& v : vals) {
      bool in = false;
      for (const auto& w : list) in = in || same_typed(v, w);
      if (any ? in : !in) return true;
    }
    return false;
  }
  if (c.contains("is_null")) {
    for (const auto& v : values_at(payload, c["is_null"]["key"].get<std::string>()))
      if (v.is_null()) return true;
    return false;
  }
  if (c.contains("is_empty")) {
    auto vals = values_at(payload, c["is_empty"]["key"].get<std::string>());
    return std::all_of(vals.begin(), vals.end(), [](const json& v) { return v.is_null(); });
  }
  if (c.contains("has_id")) {
    for (const auto& h : c["has_id"])
      if (point_id(h) == id) return true;
    return false;
  }
  return matches(c, id, payload);
}

std::vector<json> clause(const json& f, const char* k) {
  if (!f.contains(k) || f[k].is_null()) return {};
  if (f[k].is_array()) return f[k].get<std::vector<json>>();
  return {f[k]};
}

bool matches(const json& f, const std::string& id, const json& payload) {
  for (const auto& c : clause(f, "must"))
    if (!condition(c, id, payload)) return false;
  auto should = clause(f, "should");
  if (!should.empty() && std::none_of(should.begin(), should.end(),
                                      [&](const json& c) { return condition(c, id, payload); }))
    return false;
  for (const auto& c : clause(f, "must_not"))
    if (condition(c, id, payload)) return false;
  return true;
}

json project(const json& payload, const json& with) {
  if (with.is_boolean()) return with.get<bool>() ? payload : json();
  json out = json::object();
  for (const auto& k : with)
    if (payload.contains(k.get<std::string>()))
      out[k.get<std::string>()] = payload[k.get<std::string>()];
  return out;
}

void check_with_payload(const json& w, const std::string& where) {
  if (w.is_boolean()) return;
  if (!w.is_array()) throw Bad(where + ": expected a bool or an array of field names");
  for (const auto& e : w)
    if (!e.is_string()) throw Bad(where + ": expected field names");
}

std::vector<double> unit(const json& v, int size, const std::string& where) {
  if (!v.is_array()) throw Bad(where + ": expected an array of numbers");
  if (static_cast<int>(v.size()) != size)
    throw Bad("Wrong input: Vector dimension error: expected dim: " + std::to_string(size) +
              ", got " + std::to_string(v.size()));
  std::vector<double> out;
  double n = 0;
  for (const auto& x : v) {
    if (!x.is_number()) throw Bad(where + ": expected numbers");
    out.push_back(x.get<double>());
    n += out.back() * out.back();
  }
  if (n > 0)
    for (auto& x : out) x /= std::sqrt(n);  // Cosine collections store normalised vectors
  return out;
}

void check_wait(const httplib::Request& req) {
  if (req.has_param("wait")) {
    auto w = req.get_param_value("wait");
    if (w != "true" && w != "false") throw Bad("wait: expected true or false");
  }
}

}  // namespace

FakeQdrant::FakeQdrant(std::string api_key) : api_key_(std::move(api_key)) {
  svr_.set_tcp_nodelay(true);
  using namespace std::placeholders;
  const std::string c = "/collections/([A-Za-z0-9_.-]+)";
  // collections/get-collections, get-collection, create-collection, delete-collection
  route("GET", "/collections", {}, std::bind(&FakeQdrant::list, this, _1, _2, _3));
  route("GET", c, {}, std::bind(&FakeQdrant::get, this, _1, _2, _3));
  route("PUT", c, {"timeout"}, std::bind(&FakeQdrant::create, this, _1, _2, _3));
  route("DELETE", c, {"timeout"}, std::bind(&FakeQdrant::drop, this, _1, _2, _3));
  // indexes/create-field-index; points/upsert-points, delete-points, scroll-points, count-points;
  // search/points
  const std::vector<std::string> writes = {"wait", "ordering", "timeout"};
  const std::vector<std::string> reads = {"consistency", "timeout"};
  route("PUT", c + "/index", writes, std::bind(&FakeQdrant::index, this, _1, _2, _3));
  route("PUT", c + "/points", writes, std::bind(&FakeQdrant::upsert, this, _1, _2, _3));
  route("POST", c + "/points/delete", writes, std::bind(&FakeQdrant::remove, this, _1, _2, _3));
  route("POST", c + "/points/scroll", reads, std::bind(&FakeQdrant::scroll, this, _1, _2, _3));
  route("POST", c + "/points/search", reads, std::bind(&FakeQdrant::search, this, _1, _2, _3));
  route("POST", c + "/points/count", reads, std::bind(&FakeQdrant::count, this, _1, _2, _3));
  port_ = svr_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { svr_.listen_after_bind(); });
  while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeQdrant::~FakeQdrant() {
  svr_.stop();
  thread_.join();
}

void FakeQdrant::route(const std::string& method, const std::string& pattern,
                       std::vector<std::string> params, Handler h) {
  auto serve = [this, params, h, method](const httplib::Request& req, httplib::Response& res) {
    auto answer = [&](int status, const json& body) {
      res.status = status;
      res.set_content(body.dump(), "application/json");
    };
    auto error = [&](int status, const std::string& msg) {
      if (status == 400) {
        ++rejected_;
        std::lock_guard lock(mu_);
        last_error_ = method + " " + req.path + ": " + msg;
      }
      answer(status, {{"status", {{"error", msg}}}, {"time", 0.0}});
    };
    if (!api_key_.empty() && req.get_header_value("api-key") != api_key_)
      return error(401, "Must provide an API key or an Authorization bearer token");
    try {
      for (const auto& [k, v] : req.params)
        if (std::find(params.begin(), params.end(), k) == params.end())
          throw Bad("unknown query parameter `" + k + "`");
      json body;
      if (method == "PUT" || method == "POST") {
        if (req.get_header_value("Content-Type").rfind("application/json", 0) != 0)
          throw Bad("Content-Type must be application/json");
        body = json::parse(req.body, nullptr, false);
        if (body.is_discarded() || !body.is_object()) throw Bad("Json deserialize error");
      } else if (!req.body.empty()) {
        throw Bad(method + " takes no body");
      }
      {
        std::lock_guard lock(mu_);
        std::string line = method + " " + req.path;
        char sep = '?';
        for (const auto& [k, v] : req.params) {
          line += sep + k + "=" + v;
          sep = '&';
        }
        seen_.push_back({line, body});
      }
      std::string name = req.matches.size() > 1 ? req.matches[1].str() : "";
      json result = h(req, body, name);
      answer(200, {{"result", result}, {"status", "ok"}, {"time", 0.0001}});
    } catch (const Bad& e) {
      error(400, e.what());
    } catch (const Missing& e) {
      error(404, e.what());
    } catch (const Conflict& e) {
      error(409, e.what());
    } catch (const std::exception& e) {
      error(500, e.what());
    }
  };
  if (method == "GET") svr_.Get(pattern, serve);
  if (method == "PUT") svr_.Put(pattern, serve);
  if (method == "POST") svr_.Post(pattern, serve);
  if (method == "DELETE") svr_.Delete(pattern, serve);
}

FakeQdrant::Collection& FakeQdrant::existing(const std::string& name) {
  auto it = collections_.find(name);
  if (it == collections_.end())
    throw Missing("Not found: Collection `" + name + "` doesn't exist!");
  return it->second;
}

json FakeQdrant::list(const httplib::Request&, const json&, const std::string&) {
  std::lock_guard lock(mu_);
  json out = json::array();
  for (const auto& [name, c] : collections_) out.push_back({{"name", name}});
  return {{"collections", out}};
}

json FakeQdrant::get(const httplib::Request&, const json&, const std::string& name) {
  std::lock_guard lock(mu_);
  Collection& c = existing(name);
  return {{"status", "green"},
          {"optimizer_status", "ok"},
          {"points_count", c.points.size()},
          {"segments_count", 1},
          {"config",
           {{"params",
             {{"vectors", {{"size", c.size}, {"distance", c.distance}}},
              {"shard_number", 1},
              {"replication_factor", 1},
              {"on_disk_payload", true}}},
            {"hnsw_config", {{"m", 16}, {"ef_construct", 100}, {"full_scan_threshold", 10000}}}}},
          {"payload_schema", c.payload_schema}};
}

json FakeQdrant::create(const httplib::Request&, const json& body, const std::string& name) {
  only(body,
       {"vectors", "shard_number", "sharding_method", "replication_factor",
        "write_consistency_factor", "on_disk_payload", "hnsw_config", "wal_config",
        "optimizers_config", "quantization_config", "sparse_vectors", "strict_mode_config"},
       "CreateCollection");
  const json& v = body.contains("vectors") ? body["vectors"] : json();
  only(v,
       {"size", "distance", "hnsw_config", "quantization_config", "on_disk", "datatype",
        "multivector_config"},
       "CreateCollection.vectors");
  if (!v.contains("size") || !is_uint(v["size"]) || v["size"].get<int>() == 0)
    throw Bad("CreateCollection.vectors.size: expected a positive integer");
  static const std::set<std::string> distances = {"Cosine", "Euclid", "Dot", "Manhattan"};
  if (!v.contains("distance") || !v["distance"].is_string() ||
      !distances.count(v["distance"].get<std::string>()))
    throw Bad("CreateCollection.vectors.distance: expected Cosine, Euclid, Dot or Manhattan");
  if (body.contains("hnsw_config")) {
    only(body["hnsw_config"],
         {"m", "ef_construct", "full_scan_threshold", "max_indexing_threads", "on_disk",
          "payload_m"},
         "CreateCollection.hnsw_config");
    for (const auto& [k, x] : body["hnsw_config"].items())
      if (k != "on_disk" && !is_uint(x)) throw Bad("hnsw_config." + k + ": expected an integer");
  }
  std::lock_guard lock(mu_);
  if (collections_.count(name))
    throw Conflict("Wrong input: Collection `" + name + "` already exists!");
  Collection& c = collections_[name];
  c.size = v["size"].get<int>();
  c.distance = v["distance"].get<std::string>();
  return true;
}

json FakeQdrant::drop(const httplib::Request&, const json&, const std::string& name) {
  std::lock_guard lock(mu_);
  return collections_.erase(name) > 0;
}

json FakeQdrant::index(const httplib::Request& req, const json& body, const std::string& name) {
  check_wait(req);
  only(body, {"field_name", "field_schema"}, "CreateFieldIndex");
  if (!body.contains("field_name") || !body["field_name"].is_string())
    throw Bad("CreateFieldIndex.field_name: expected a string");
  static const std::set<std::string> types = {"keyword", "integer", "float",    "geo",
                                              "text",    "bool",    "datetime", "uuid"};
  json schema = body.value("field_schema", json("keyword"));
  json entry;
  if (schema.is_string()) {
    if (!types.count(schema.get<std::string>())) throw Bad("field_schema: unknown type");
    entry = {{"data_type", schema}};
  } else {
    only(schema, {"type", "is_tenant", "on_disk"}, "KeywordIndexParams");  // keyword params
    if (schema.value("type", "") != "keyword")
      throw Bad("field_schema.type: this fake knows keyword params only");
    for (const char* b : {"is_tenant", "on_disk"})
      if (schema.contains(b) && !schema[b].is_boolean())
        throw Bad(std::string("field_schema.") + b + ": expected a bool");
    entry = {{"data_type", "keyword"}, {"params", schema}};
  }
  std::lock_guard lock(mu_);
  existing(name).payload_schema[body["field_name"].get<std::string>()] = entry;
  return {{"operation_id", 0}, {"status", "completed"}};
}

json FakeQdrant::upsert(const httplib::Request& req, const json& body, const std::string& name) {
  check_wait(req);
  only(body, {"points", "shard_key"}, "PointInsertOperations");  // the list form
  if (!body.contains("points") || !body["points"].is_array())
    throw Bad("PointInsertOperations.points: expected an array");
  std::lock_guard lock(mu_);
  Collection& c = existing(name);
  std::vector<std::pair<std::string, Point>> batch;
  for (const auto& p : body["points"]) {
    only(p, {"id", "vector", "payload"}, "PointStruct");
    if (!p.contains("id") || !p.contains("vector"))
      throw Bad("PointStruct: id and vector required");
    if (p.contains("payload") && !(p["payload"].is_object() || p["payload"].is_null()))
      throw Bad("PointStruct.payload: expected an object");
    batch.push_back(
        {point_id(p["id"]),
         {unit(p["vector"], c.size, "PointStruct.vector"), p.value("payload", json::object())}});
  }
  for (auto& [id, pt] : batch) c.points[id] = std::move(pt);
  return {{"operation_id", 0}, {"status", "completed"}};
}

json FakeQdrant::remove(const httplib::Request& req, const json& body, const std::string& name) {
  check_wait(req);
  only(body, {"points", "filter", "shard_key"}, "PointsSelector");
  if (body.contains("points") == body.contains("filter"))
    throw Bad("PointsSelector: expected exactly one of points, filter");
  std::set<std::string> ids;
  if (body.contains("points")) {
    if (!body["points"].is_array()) throw Bad("PointsSelector.points: expected an array");
    for (const auto& id : body["points"]) ids.insert(point_id(id));
  } else {
    check_filter(body["filter"], "filter");
  }
  std::lock_guard lock(mu_);
  Collection& c = existing(name);
  for (auto it = c.points.begin(); it != c.points.end();) {
    bool hit = body.contains("points") ? ids.count(it->first) > 0
                                       : matches(body["filter"], it->first, it->second.payload);
    it = hit ? c.points.erase(it) : std::next(it);
  }
  return {{"operation_id", 0}, {"status", "completed"}};
}

json FakeQdrant::scroll(const httplib::Request&, const json& body, const std::string& name) {
  only(body, {"offset", "limit", "filter", "with_payload", "with_vector", "shard_key"},
       "ScrollRequest");
  if (body.contains("filter") && !body["filter"].is_null()) check_filter(body["filter"], "filter");
  std::size_t limit = 10;
  if (body.contains("limit")) {
    if (!is_uint(body["limit"])) throw Bad("ScrollRequest.limit: expected an unsigned integer");
    limit = body["limit"].get<std::size_t>();
  }
  std::string from = body.contains("offset") && !body["offset"].is_null() ? point_id(body["offset"])
                                                                          : std::string();
  json with = body.value("with_payload", json(true));
  check_with_payload(with, "ScrollRequest.with_payload");
  if (body.contains("with_vector") && !body["with_vector"].is_boolean())
    throw Bad("ScrollRequest.with_vector: expected a bool");
  std::lock_guard lock(mu_);
  Collection& c = existing(name);
  json points = json::array(), next = nullptr;
  for (auto it = c.points.lower_bound(from); it != c.points.end(); ++it) {
    if (body.contains("filter") && !body["filter"].is_null() &&
        !matches(body["filter"], it->first, it->second.payload))
      continue;
    if (points.size() == limit) {
      next = id_json(it->first);
      break;
    }
    json p = {{"id", id_json(it->first)}};
    if (!(with.is_boolean() && !with.get<bool>())) p["payload"] = project(it->second.payload, with);
    points.push_back(std::move(p));
  }
  return {{"points", points}, {"next_page_offset", next}};
}

json FakeQdrant::search(const httplib::Request&, const json& body, const std::string& name) {
  only(body,
       {"vector", "filter", "params", "limit", "offset", "with_payload", "with_vector",
        "score_threshold", "shard_key"},
       "SearchRequest");
  if (!body.contains("vector") || !body.contains("limit"))
    throw Bad("SearchRequest: vector and limit are required");
  if (!is_uint(body["limit"])) throw Bad("SearchRequest.limit: expected an unsigned integer");
  if (body.contains("filter") && !body["filter"].is_null()) check_filter(body["filter"], "filter");
  if (body.contains("params")) {
    only(body["params"], {"hnsw_ef", "exact", "quantization", "indexed_only"}, "SearchParams");
    if (body["params"].contains("hnsw_ef") && !is_uint(body["params"]["hnsw_ef"]))
      throw Bad("SearchParams.hnsw_ef: expected an unsigned integer");
    if (body["params"].contains("exact") && !body["params"]["exact"].is_boolean())
      throw Bad("SearchParams.exact: expected a bool");
  }
  json with = body.value("with_payload", json(false));
  check_with_payload(with, "SearchRequest.with_payload");
  std::lock_guard lock(mu_);
  Collection& c = existing(name);
  auto q = unit(body["vector"], c.size, "SearchRequest.vector");
  std::vector<std::pair<double, std::string>> scored;
  for (const auto& [id, p] : c.points) {
    if (body.contains("filter") && !body["filter"].is_null() &&
        !matches(body["filter"], id, p.payload))
      continue;
    double dot = 0;
    for (std::size_t i = 0; i < q.size(); ++i) dot += q[i] * p.vector[i];
    scored.push_back({dot, id});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  json out = json::array();
  for (std::size_t i = 0; i < scored.size() && i < body["limit"].get<std::size_t>(); ++i) {
    json hit = {{"id", id_json(scored[i].second)}, {"version", 0}, {"score", scored[i].first}};
    if (!(with.is_boolean() && !with.get<bool>()))
      hit["payload"] = project(c.points[scored[i].second].payload, with);
    out.push_back(std::move(hit));
  }
  return out;
}

json FakeQdrant::count(const httplib::Request&, const json& body, const std::string& name) {
  only(body, {"filter", "exact", "shard_key"}, "CountRequest");
  if (body.contains("filter") && !body["filter"].is_null()) check_filter(body["filter"], "filter");
  if (body.contains("exact") && !body["exact"].is_boolean())
    throw Bad("CountRequest.exact: expected a bool");
  std::lock_guard lock(mu_);
  Collection& c = existing(name);
  std::size_t n = 0;
  for (const auto& [id, p] : c.points)
    if (!body.contains("filter") || body["filter"].is_null() ||
        matches(body["filter"], id, p.payload))
      ++n;
  return {{"count", n}};
}

std::string FakeQdrant::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

std::vector<FakeQdrant::Seen> FakeQdrant::seen() const {
  std::lock_guard lock(mu_);
  return seen_;
}

void FakeQdrant::clear_seen() {
  std::lock_guard lock(mu_);
  seen_.clear();
}

json FakeQdrant::payload_schema(const std::string& collection) const {
  std::lock_guard lock(mu_);
  auto it = collections_.find(collection);
  return it == collections_.end() ? json::object() : it->second.payload_schema;
}

}  // namespace quarry::testing
