// Request plumbing shared by the REST handlers: the body and the query parameters with ranges.
#include "server/rest_helpers.h"

#include <cstdlib>

#include "wire/fields.h"

namespace quarry::server {
using nlohmann::json;

ApiReply reply(const json& j, int status) {
  return ApiReply{status, "application/json",
                  j.dump(-1, ' ', false, json::error_handler_t::replace)};
}

Error bad(const std::string& field, const std::string& message) {
  return wire::bad_field(field, message);
}

json body_object(const ApiRequest& r, bool may_be_empty) {
  if (r.body.empty() && may_be_empty) return json::object();
  return wire::parse_object(r.body);
}

std::string query_param(const ApiRequest& r, const std::string& key, const std::string& def) {
  auto it = r.query.find(key);
  return it == r.query.end() ? def : it->second;
}

int int_param(const ApiRequest& r, const std::string& key, int def, int lo, int hi) {
  if (!r.query.count(key)) return def;
  std::string v = query_param(r, key);
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (*end != '\0' || n < lo || n > hi)
    throw bad(key, "query parameter '" + key + "' must be an integer from " + std::to_string(lo) +
                       " to " + std::to_string(hi));
  return static_cast<int>(n);
}

// Strict: true, false, 1 or 0, and nothing else (not even an empty value).
bool bool_param(const ApiRequest& r, const std::string& key, bool def) {
  if (!r.query.count(key)) return def;
  std::string v = query_param(r, key);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  throw bad(key, "query parameter '" + key + "' must be true, false, 1 or 0");
}

}  // namespace quarry::server
