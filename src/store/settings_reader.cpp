#include "store/settings_reader.h"

#include <cctype>
#include <cstdint>

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

bool filter_reachable_segment(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace quarry::store
