// quarry::Settings: an immutable JSON object shared by copies, with typed getters whose
// errors name the key (invalid_argument, details field) so that a plugin's user learns which
// setting to fix without the plugin writing its own messages.
#include <climits>

#include "core/settings_json.h"
#include "quarry/error.h"

namespace quarry {
using nlohmann::json;

struct Settings::Impl {
  json object = json::object();
  std::string text = "{}";
};

namespace detail {
struct SettingsAccess {
  static Settings make(json object) {
    auto impl = std::make_shared<Settings::Impl>();
    impl->text = object.dump();
    impl->object = std::move(object);
    return Settings(std::move(impl));
  }
  static const json& object(const Settings& s) { return s.impl_->object; }
  static std::shared_ptr<const Settings::Impl> empty() {
    static const auto impl = std::make_shared<const Settings::Impl>();
    return impl;
  }
};
}  // namespace detail

namespace {

// The value under `key`, or null when it is missing or null.
const json* value_of(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

[[noreturn]] void wrong_type(std::string_view key, const char* want, const json& got) {
  throw Error(Code::invalid_argument,
              "setting '" + std::string(key) + "' must be " + want + ", not " + got.type_name() +
                  " " + got.dump(),
              {{"field", std::string(key)}});
}

}  // namespace

Settings::Settings() : impl_(detail::SettingsAccess::empty()) {}
Settings::Settings(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Settings Settings::parse(std::string_view json_text) {
  if (json_text.empty()) return Settings();
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded())
    throw Error(Code::invalid_argument, "settings are not valid JSON: write a JSON object",
                {{"field", "settings"}});
  return core::settings_from_json(std::move(j));
}

const std::string& Settings::json_text() const {
  return impl_->text;
}

bool Settings::empty() const {
  return impl_->object.empty();
}

std::vector<std::string> Settings::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : impl_->object.items()) out.push_back(k);
  return out;
}

bool Settings::has(std::string_view key) const {
  return impl_->object.contains(key);
}

std::optional<std::string> Settings::get_string(std::string_view key) const {
  const json* v = value_of(impl_->object, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(key, "a string", *v);
  return v->get<std::string>();
}

std::optional<std::int64_t> Settings::get_integer(std::string_view key) const {
  const json* v = value_of(impl_->object, key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    wrong_type(key, "an integer of at most 2^63-1", *v);
  if (!v->is_number_integer()) wrong_type(key, "an integer", *v);
  return v->get<std::int64_t>();
}

std::optional<double> Settings::get_number(std::string_view key) const {
  const json* v = value_of(impl_->object, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(key, "a number", *v);
  return v->get<double>();
}

std::optional<bool> Settings::get_bool(std::string_view key) const {
  const json* v = value_of(impl_->object, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(key, "true or false", *v);
  return v->get<bool>();
}

std::optional<std::string> Settings::get_json(std::string_view key) const {
  const json* v = value_of(impl_->object, key);
  if (!v) return std::nullopt;
  return v->dump();
}

Settings Settings::get_object(std::string_view key) const {
  const json* v = value_of(impl_->object, key);
  if (!v) return Settings();
  if (!v->is_object()) wrong_type(key, "a JSON object", *v);
  return detail::SettingsAccess::make(*v);
}

namespace core {

Settings settings_from_json(nlohmann::json j, const std::string& what) {
  if (j.is_null()) return Settings();
  if (!j.is_object())
    throw Error(Code::invalid_argument, what + " must be a JSON object, e.g. {\"key\": \"value\"}",
                {{"field", "settings"}});
  return detail::SettingsAccess::make(std::move(j));
}

const nlohmann::json& settings_json(const Settings& s) {
  return detail::SettingsAccess::object(s);
}

}  // namespace core
}  // namespace quarry
