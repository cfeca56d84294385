// One set of rules for reading a request's fields, so REST, MCP and the CLI refuse the same
// input with the same code, field and message.
#include "wire/fields.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "quarry/util.h"

namespace quarry::wire {
using nlohmann::json;

namespace {

// A request body nesting deeper than this is refused before it is parsed (quarry/util.h says why).
constexpr int kMaxNesting = 160;

std::string quoted(const std::string& name) {
  return "'" + name + "'";
}

std::string fmt_num(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)))
    return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Error bad_field(const std::string& field, const std::string& message) {
  return Error(Code::invalid_argument, message, {{"field", field}});
}

std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

json parse_object(const std::string& text, const std::string& field) {
  if (!json_nesting_within(text, kMaxNesting))
    throw bad_field(
        field, "the request body nests deeper than " + std::to_string(kMaxNesting) + " levels");
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw bad_field(field,
                    "the request body must be a JSON object (Content-Type: application/json)");
  return j;
}

Fields::Fields(const json& object, const std::vector<std::string>& allowed) : j_(object) {
  if (!j_.is_object()) throw bad_field("body", "the request must be a JSON object");
  for (const auto& [key, value] : j_.items()) {
    bool known = false;
    for (const auto& a : allowed) known = known || key == a;
    if (!known)
      throw bad_field(key, "unknown field " + quoted(key) + " (this request takes " +
                               (allowed.empty() ? "no fields" : one_of(allowed)) + ")");
  }
}

const json* Fields::get(const std::string& name) const {
  auto it = j_.find(name);
  if (it == j_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::string> Fields::string(const std::string& name) const {
  const json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw bad_field(name, quoted(name) + " must be a string");
  return v->get<std::string>();
}

std::string Fields::required_string(const std::string& name, bool may_be_empty) const {
  auto v = string(name);
  if (!v) throw bad_field(name, quoted(name) + " is required");
  if (v->empty() && !may_be_empty) throw bad_field(name, quoted(name) + " must not be empty");
  return *v;
}

std::optional<std::int64_t> Fields::integer(const std::string& name, std::int64_t lo,
                                            std::int64_t hi) const {
  const json* v = get(name);
  if (!v) return std::nullopt;
  const bool whole = v->is_number_integer() ||
                     (v->is_number_float() && std::trunc(v->get<double>()) == v->get<double>() &&
                      std::abs(v->get<double>()) < 9e15);
  if (!whole) throw bad_field(name, quoted(name) + " must be an integer");
  auto out_of_range = [&] {
    return bad_field(name, quoted(name) + " must be between " + std::to_string(lo) + " and " +
                               std::to_string(hi));
  };
  std::int64_t n = 0;
  if (v->is_number_float())
    n = static_cast<std::int64_t>(v->get<double>());
  else if (v->is_number_unsigned() &&
           v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    throw out_of_range();
  else
    n = v->get<std::int64_t>();
  if (n < lo || n > hi) throw out_of_range();
  return n;
}

std::optional<double> Fields::number(const std::string& name, double lo, double hi) const {
  const json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw bad_field(name, quoted(name) + " must be a number");
  const double d = v->get<double>();
  if (!(d >= lo && d <= hi))
    throw bad_field(name, quoted(name) + " must be between " + fmt_num(lo) + " and " + fmt_num(hi));
  return d;
}

bool Fields::flag(const std::string& name, bool fallback) const {
  const json* v = get(name);
  if (!v) return fallback;
  if (!v->is_boolean()) throw bad_field(name, quoted(name) + " must be true or false");
  return v->get<bool>();
}

std::string Fields::object_text(const std::string& name) const {
  const json* v = get(name);
  if (!v) return "";
  if (!v->is_object()) throw bad_field(name, quoted(name) + " must be a JSON object");
  return v->dump();
}

std::string Fields::choice(const std::string& name, const std::vector<std::string>& choices,
                           const std::string& fallback) const {
  auto v = string(name);
  if (!v) return fallback;
  for (const auto& c : choices)
    if (*v == c) return *v;
  throw bad_field(name, quoted(name) + " must be " + one_of(choices));
}

}  // namespace quarry::wire
