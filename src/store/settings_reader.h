// Reading a store's `settings` object (SPEC §6): every remote store validates its settings the
// same way, with errors that name the store and the key (invalid_argument, details store/key).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "quarry/plugin.h"

namespace quarry::store {

// The settings every remote store (chroma, qdrant) has: where its server is, and how calls to
// it are guarded, limited and retried. docs/stores.md documents them once per store.
struct RemoteSettings {
  std::string url;             // the server's base URL (no trailing '/'); each store's default
  bool allow_private = false;  // loopback/private servers (the usual local one) need it
  int timeout_ms = 30000;
  int max_retries = 4;
  int retry_base_delay_ms = 200;
  int retry_max_delay_ms = 5000;
  std::string api_key_secret;  // secret name; its value is sent in the store's auth header
};

class SettingsReader {
 public:
  explicit SettingsReader(std::string store) : store_(std::move(store)) {}

  [[noreturn]] void bad(const std::string& key, const std::string& what) const;
  int integer(const nlohmann::json& v, const std::string& key, int lo, int hi) const;
  std::string string(const nlohmann::json& v, const std::string& key,
                     bool may_be_empty = false) const;
  // A string from `allowed`.
  std::string one_of(const nlohmann::json& v, const std::string& key,
                     const std::set<std::string>& allowed) const;
  bool boolean(const nlohmann::json& v, const std::string& key) const;
  // Reads `key` into `s` when it is one of RemoteSettings' keys; false for any other key.
  // remote_settings_schema() describes the same keys.
  bool remote(RemoteSettings& s, const std::string& key, const nlohmann::json& v) const;

 private:
  std::string store_;
};

// The keys SettingsReader::remote() reads, with `d`'s values as defaults; `key_header` is the
// header the api_key_secret's value is sent in.
std::vector<PluginSetting> remote_settings_schema(const RemoteSettings& d,
                                                  const std::string& key_header);

// A metadata key segment a filter field can name (core/filter.cpp: letters, digits, '_', '-';
// '.' separates segments), and the longest field path it accepts. Stores that flatten nested
// metadata keep only what a filter could reach.
bool filter_reachable_segment(const std::string& segment);
constexpr std::size_t kMaxFilterFieldLength = 128;

}  // namespace quarry::store
