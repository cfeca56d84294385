// docs/openapi.json and the server's route table describe the same API: every route is in the
// document with its method, operationId and scope, and every operation of the document is a
// route (SPEC §9).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "server/routes.h"
#include "test_util.h"

namespace quarry::testing {
namespace {
using nlohmann::json;

json openapi() {
  return json::parse(read_file(std::string(QUARRY_SOURCE_DIR) + "/docs/openapi.json"));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

TEST(OpenApi, IsOpenApi31WithTheApiPrefix) {
  json doc = openapi();
  EXPECT_EQ(doc["openapi"].get<std::string>().rfind("3.1", 0), 0u);
  ASSERT_TRUE(doc["servers"].is_array());
  EXPECT_EQ(doc["servers"][0]["url"], server::kApiPrefix);
}

TEST(OpenApi, EveryRouteIsDocumented) {
  json paths = openapi()["paths"];
  for (const auto& r : server::rest_routes()) {
    SCOPED_TRACE(std::string(r.method) + " " + r.path);
    ASSERT_TRUE(paths.contains(r.path)) << "path missing from docs/openapi.json";
    ASSERT_TRUE(paths[r.path].contains(lower(r.method))) << "method missing";
    const json& op = paths[r.path][lower(r.method)];
    EXPECT_EQ(op.value("operationId", ""), r.operation_id);
    if (r.authenticated) {
      EXPECT_EQ(op.value("x-required-scope", ""), server::scope_name(r.scope));
      EXPECT_TRUE(op["responses"].contains("401")) << "no 401 documented";
      EXPECT_TRUE(op["responses"].contains("403")) << "no 403 documented";
    } else {
      ASSERT_TRUE(op.contains("security"));
      EXPECT_TRUE(op["security"].empty());
    }
  }
}

TEST(OpenApi, EveryDocumentedOperationIsARoute) {
  std::set<std::pair<std::string, std::string>> routes;
  for (const auto& r : server::rest_routes()) routes.insert({lower(r.method), r.path});
  static const std::set<std::string> kMethods = {"get",    "post", "put",     "patch",
                                                 "delete", "head", "options", "trace"};
  const json doc = openapi();  // the loop below must not walk a temporary
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items()) {
      if (kMethods.count(method)) {
        EXPECT_TRUE(routes.count({method, path})) << method << " " << path << " is not served";
      }
    }
}

}  // namespace
}  // namespace quarry::testing
