// Request plumbing shared by the REST handlers (rest.cpp, rest_pump.cpp): the body as a JSON
// object (its fields are read with wire::Fields, the request kinds with wire/requests.h) and the
// query parameters. Every malformed input is Error(invalid_argument) with `details.field`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "server/rest.h"

namespace quarry::server {

ApiReply reply(const nlohmann::json& j, int status = 200);
Error bad(const std::string& field, const std::string& message);

// The JSON object of a request body (an empty body is {} when `may_be_empty`).
nlohmann::json body_object(const ApiRequest& r, bool may_be_empty = false);

std::string query_param(const ApiRequest& r, const std::string& key, const std::string& def = "");
int int_param(const ApiRequest& r, const std::string& key, int def, int lo, int hi);
bool bool_param(const ApiRequest& r, const std::string& key, bool def);

}  // namespace quarry::server
