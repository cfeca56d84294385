// The library's side of quarry::Settings (quarry/settings.h): the view holds an nlohmann::json
// object, and the built-in plugins read that object directly, so their validation and messages
// stay what they were before settings became a public view.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "quarry/settings.h"

namespace quarry::core {

// A view over `j`: null counts as {}; anything else but an object throws
// Error(invalid_argument) saying that `what` ("store settings", ...) must be a JSON object.
Settings settings_from_json(nlohmann::json j, const std::string& what = "settings");
// The object a view holds (never null: an empty view holds {}).
const nlohmann::json& settings_json(const Settings& s);

}  // namespace quarry::core
