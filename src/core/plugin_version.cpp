#include "core/plugin_version.h"

#include "quarry/error.h"
#include "quarry/plugin.h"

namespace quarry::core {

void check_plugin_api_version(const std::string& kind, const std::string& detail_key,
                              const std::string& id, int api_version) {
  if (api_version == kPluginApiVersion) return;
  throw Error(Code::invalid_argument,
              kind + " '" + id + "' was built against plugin API version " +
                  std::to_string(api_version) + " but this Quarry speaks version " +
                  std::to_string(kPluginApiVersion) +
                  ": rebuild the plugin against this Quarry's include/quarry/plugin.h",
              {{detail_key, id},
               {"api_version", std::to_string(api_version)},
               {"expected", std::to_string(kPluginApiVersion)}});
}

PluginSetting plugin_setting(std::string name, std::string type, std::string default_json,
                             std::string description, bool required,
                             std::vector<std::string> allowed) {
  PluginSetting s;
  s.name = std::move(name);
  s.type = std::move(type);
  s.required = required;
  s.default_json = std::move(default_json);
  s.description = std::move(description);
  s.allowed = std::move(allowed);
  return s;
}

}  // namespace quarry::core
