// Request parsing shared by the REST handlers: strict JSON bodies (unknown keys are errors
// naming the key), typed fields and query parameters with ranges.
#include "server/rest_helpers.h"

#include <cstdio>
#include <cstdlib>

#include "core/util.h"

namespace quarry::server {
using nlohmann::json;

ApiReply reply(const json& j, int status) {
  return ApiReply{status, "application/json",
                  j.dump(-1, ' ', false, json::error_handler_t::replace)};
}

std::string fmt_num(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)))
    return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Error bad(const std::string& field, const std::string& message) {
  return Error(Code::invalid_argument, message, {{"field", field}});
}

// The JSON object of a request body; `allowed` lists its keys (anything else is an error).
json body_object(const ApiRequest& r, std::initializer_list<const char*> allowed,
                 bool may_be_empty) {
  if (r.body.empty() && may_be_empty) return json::object();
  if (!core::json_nesting_within(r.body, 160))
    throw bad("body", "the request body nests deeper than 160 levels");
  json j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw bad("body", "the request body must be a JSON object (Content-Type: application/json)");
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) throw bad(k, "unknown field '" + k + "' in the request body");
  }
  return j;
}

std::string str_field(const json& j, const char* key, bool required, const std::string& def) {
  if (!j.contains(key)) {
    if (required) throw bad(key, std::string("'") + key + "' is required");
    return def;
  }
  if (!j[key].is_string()) throw bad(key, std::string("'") + key + "' must be a string");
  return j[key].get<std::string>();
}

bool bool_field(const json& j, const char* key, bool def) {
  if (!j.contains(key)) return def;
  if (!j[key].is_boolean()) throw bad(key, std::string("'") + key + "' must be true or false");
  return j[key].get<bool>();
}

double num_field(const json& j, const char* key, double def, double lo, double hi) {
  if (!j.contains(key)) return def;
  if (!j[key].is_number()) throw bad(key, std::string("'") + key + "' must be a number");
  double v = j[key].get<double>();
  if (!(v >= lo && v <= hi))
    throw bad(key,
              std::string("'") + key + "' must be between " + fmt_num(lo) + " and " + fmt_num(hi));
  return v;
}

int int_field(const json& j, const char* key, int def, int lo, int hi) {
  if (!j.contains(key)) return def;
  if (!j[key].is_number_integer()) throw bad(key, std::string("'") + key + "' must be an integer");
  return static_cast<int>(num_field(j, key, def, lo, hi));
}

// A filter given as a JSON object in a body ("" when absent).
std::string filter_field(const json& j) {
  if (!j.contains("filter") || j["filter"].is_null()) return "";
  if (!j["filter"].is_object()) throw bad("filter", "'filter' must be a JSON object (SPEC §4)");
  return j["filter"].dump();
}

std::string query_param(const ApiRequest& r, const std::string& key, const std::string& def) {
  auto it = r.query.find(key);
  return it == r.query.end() ? def : it->second;
}

int int_param(const ApiRequest& r, const std::string& key, int def, int lo, int hi) {
  std::string v = query_param(r, key);
  if (v.empty()) return def;
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (*end != '\0' || n < lo || n > hi)
    throw bad(key, "query parameter '" + key + "' must be an integer from " + std::to_string(lo) +
                       " to " + std::to_string(hi));
  return static_cast<int>(n);
}

bool bool_param(const ApiRequest& r, const std::string& key, bool def) {
  std::string v = query_param(r, key);
  if (v.empty()) return def;
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  throw bad(key, "query parameter '" + key + "' must be true or false");
}

}  // namespace quarry::server
