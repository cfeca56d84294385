// Reading a store's `settings` object (SPEC §6): every remote store validates its settings the
// same way, with errors that name the store and the key (invalid_argument, details store/key).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace quarry::store {

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

 private:
  std::string store_;
};

// A metadata key segment a filter field can name (core/filter.cpp: letters, digits, '_', '-';
// '.' separates segments), and the longest field path it accepts. Stores that flatten nested
// metadata keep only what a filter could reach.
bool filter_reachable_segment(const std::string& segment);
constexpr std::size_t kMaxFilterFieldLength = 128;

}  // namespace quarry::store
