// Request parsing shared by the REST handlers (rest.cpp, rest_pump.cpp). Every malformed
// input is Error(invalid_argument) with `details.field` naming it.
#pragma once

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "server/rest.h"

namespace quarry::server {

ApiReply reply(const nlohmann::json& j, int status = 200);
std::string fmt_num(double v);
Error bad(const std::string& field, const std::string& message);

// The JSON object of a request body; `allowed` lists its keys (anything else is an error).
nlohmann::json body_object(const ApiRequest& r, std::initializer_list<const char*> allowed,
                           bool may_be_empty = false);
std::string str_field(const nlohmann::json& j, const char* key, bool required,
                      const std::string& def = "");
bool bool_field(const nlohmann::json& j, const char* key, bool def);
double num_field(const nlohmann::json& j, const char* key, double def, double lo, double hi);
int int_field(const nlohmann::json& j, const char* key, int def, int lo, int hi);
// A filter given as a JSON object in a body ("" when absent).
std::string filter_field(const nlohmann::json& j);

std::string query_param(const ApiRequest& r, const std::string& key, const std::string& def = "");
int int_param(const ApiRequest& r, const std::string& key, int def, int lo, int hi);
bool bool_param(const ApiRequest& r, const std::string& key, bool def);

}  // namespace quarry::server
