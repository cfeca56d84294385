#include "store/settings_reader.h"

#include <cctype>
#include <cstdint>

#include "core/plugin_version.h"
#include "quarry/error.h"

namespace quarry::store {

void SettingsReader::bad(const std::string& key, const std::string& what) const {
  throw Error(Code::invalid_argument, store_ + " store setting '" + key + "': " + what,
              {{"store", store_}, {"key", key}});
}

int SettingsReader::integer(const nlohmann::json& v, const std::string& key, int lo, int hi) const {
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    bad(key, "expects an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return v.get<int>();
}

std::string SettingsReader::string(const nlohmann::json& v, const std::string& key,
                                   bool may_be_empty) const {
  if (!v.is_string() || (!may_be_empty && v.get_ref<const std::string&>().empty()))
    bad(key, may_be_empty ? "expects a string" : "expects a non-empty string");
  return v.get<std::string>();
}

std::string SettingsReader::one_of(const nlohmann::json& v, const std::string& key,
                                   const std::set<std::string>& allowed) const {
  std::string s = string(v, key);
  if (!allowed.count(s)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    bad(key, "'" + s + "' is not one of: " + list);
  }
  return s;
}

bool SettingsReader::boolean(const nlohmann::json& v, const std::string& key) const {
  if (!v.is_boolean()) bad(key, "expects true or false");
  return v.get<bool>();
}

bool SettingsReader::remote(RemoteSettings& s, const std::string& k,
                            const nlohmann::json& v) const {
  if (k == "url") {
    s.url = string(v, k, false);
    while (!s.url.empty() && s.url.back() == '/') s.url.pop_back();
  } else if (k == "allow_private") {
    s.allow_private = boolean(v, k);
  } else if (k == "timeout_ms") {
    s.timeout_ms = integer(v, k, 100, 3600000);
  } else if (k == "max_retries") {
    s.max_retries = integer(v, k, 0, 20);
  } else if (k == "retry_base_delay_ms") {
    s.retry_base_delay_ms = integer(v, k, 1, 600000);
  } else if (k == "retry_max_delay_ms") {
    s.retry_max_delay_ms = integer(v, k, 1, 600000);
  } else if (k == "api_key_secret") {
    s.api_key_secret = string(v, k, true);
  } else {
    return false;
  }
  return true;
}

bool filter_reachable_segment(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

std::vector<PluginSetting> remote_settings_schema(const RemoteSettings& d,
                                                  const std::string& key_header) {
  using core::plugin_setting;
  return {plugin_setting("url", "string", "\"" + d.url + "\"", "The server's base URL."),
          plugin_setting("allow_private", "boolean", d.allow_private ? "true" : "false",
                         "Allow loopback and private addresses (a server on 127.0.0.1 or a LAN "
                         "needs true)."),
          plugin_setting("timeout_ms", "integer", std::to_string(d.timeout_ms),
                         "Limit for one HTTP exchange, 100-3600000."),
          plugin_setting("max_retries", "integer", std::to_string(d.max_retries),
                         "Retries of a failed call, 0-20."),
          plugin_setting("retry_base_delay_ms", "integer", std::to_string(d.retry_base_delay_ms),
                         "First retry delay (full-jitter exponential backoff)."),
          plugin_setting("retry_max_delay_ms", "integer", std::to_string(d.retry_max_delay_ms),
                         "Longest retry delay."),
          plugin_setting("api_key_secret", "secret-name", "",
                         "The secret whose value is sent as the " + key_header + " header.")};
}

}  // namespace quarry::store
