// A plugin's settings (quarry/plugin.h): the JSON object a KB config gives under
// `embedding.settings` or `store.settings`, handed to a provider or store factory as a read-only
// view. Plugins read it through typed getters, or take the raw JSON text and parse it with a
// library of their own; no JSON library's types appear in the plugin API.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quarry {

namespace detail {
struct SettingsAccess;  // the library's own bridge to its JSON representation
}

class Settings {
 public:
  Settings();  // the empty object

  // Throws quarry::Error(invalid_argument) unless `json_text` is the JSON text of an object
  // ("" and null count as {}).
  static Settings parse(std::string_view json_text);

  // The whole object as compact JSON text (keys sorted), e.g. {"url":"http://..."}.
  const std::string& json_text() const;
  bool empty() const;
  std::vector<std::string> keys() const;  // sorted
  bool has(std::string_view key) const;   // present, null values included

  // Typed getters. std::nullopt when the key is missing or its value is null; a value of
  // another type throws quarry::Error(invalid_argument) naming the key (details: field).
  std::optional<std::string> get_string(std::string_view key) const;
  std::optional<std::int64_t> get_integer(std::string_view key) const;  // integral numbers only
  std::optional<double> get_number(std::string_view key) const;         // any number
  std::optional<bool> get_bool(std::string_view key) const;
  // Any value (an object, an array, ...) as JSON text.
  std::optional<std::string> get_json(std::string_view key) const;
  // A nested object as a view of its own: empty when missing or null.
  Settings get_object(std::string_view key) const;

 private:
  friend struct detail::SettingsAccess;
  struct Impl;
  explicit Settings(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;  // immutable, so copies share it
};

}  // namespace quarry
