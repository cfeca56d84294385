// The one version rule of the plugin registries (include/quarry/plugin.h): a provider or store
// compiled against another plugin API version is refused, nothing is registered.
#pragma once

#include <string>

namespace quarry::core {

// Throws Error(invalid_argument) unless `api_version` is kPluginApiVersion. `kind` names the
// port ("embedding provider", "vector store"); `detail_key` is the key of `id` in the details.
void check_plugin_api_version(const std::string& kind, const std::string& detail_key,
                              const std::string& id, int api_version);

}  // namespace quarry::core
