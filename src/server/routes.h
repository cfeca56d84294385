// The REST API's route table (SPEC §9): one row per operation under /api/v1, with the scope it
// needs. The server registers handlers from it and a test checks it against
// docs/openapi.json in both directions, so the document and the code cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "server/auth.h"

namespace quarry::server {

struct RouteSpec {
  const char* method;        // GET | POST | PUT | PATCH | DELETE
  const char* path;          // OpenAPI template under /api/v1, e.g. "/kbs/{kb}"
  const char* operation_id;  // the operationId in docs/openapi.json
  bool authenticated;        // false: health and the OpenAPI document itself
  Scope scope;               // needed when authenticated
};

const std::vector<RouteSpec>& rest_routes();

constexpr const char* kApiPrefix = "/api/v1";

}  // namespace quarry::server
