// The one version rule of the plugin registries (include/quarry/plugin.h): a provider or store
// compiled against another plugin API version is refused, nothing is registered.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "quarry/plugin.h"

namespace quarry::core {

// Throws Error(invalid_argument) unless `api_version` is kPluginApiVersion. `kind` names the
// port ("embedding provider", "vector store"); `detail_key` is the key of `id` in the details.
void check_plugin_api_version(const std::string& kind, const std::string& detail_key,
                              const std::string& id, int api_version);

// Each registered id (the keys of `factories`, sorted) with the schema it registered, if any:
// what both registries answer described_providers() / described_stores() with.
template <class Factories>
std::vector<RegisteredPlugin> described_plugins(
    const Factories& factories, const std::map<std::string, std::optional<PluginSchema>>& schemas) {
  std::vector<RegisteredPlugin> out;
  for (const auto& entry : factories) {
    auto it = schemas.find(entry.first);
    out.push_back({entry.first, it == schemas.end() ? std::nullopt : it->second});
  }
  return out;
}

// One described setting of a built-in (the schemas beside each factory): `default_json` is the
// default as JSON text ("" = none), `allowed` the only values of a string setting.
PluginSetting plugin_setting(std::string name, std::string type, std::string default_json,
                             std::string description, bool required = false,
                             std::vector<std::string> allowed = {});

}  // namespace quarry::core
