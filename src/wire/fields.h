// Strict, typed reading of a request's JSON object, shared by every decoder of the codec (and by
// MCP's other tools): one rule for unknown keys, types, ranges and nulls, and one way to say what
// is wrong. Every failure is Error(invalid_argument) whose details.field names the field, so a
// caller (a person, a client, an agent) can fix the request.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "quarry/error.h"

namespace quarry::wire {

// Error(invalid_argument, message) with details {"field": field}.
Error bad_field(const std::string& field, const std::string& message);

// Parses untrusted JSON text that must be an object (a request body): too deep, not JSON, or not
// an object is an error naming `field` (REST says "body").
nlohmann::json parse_object(const std::string& text, const std::string& field = "body");

class Fields {
 public:
  // `object` must be a JSON object whose keys are all in `allowed`; an unknown key is refused
  // (a typo would otherwise be ignored silently).
  Fields(const nlohmann::json& object, const std::vector<std::string>& allowed);

  // A null value counts as absent: some clients send every optional field.
  const nlohmann::json* get(const std::string& name) const;
  bool has(const std::string& name) const { return get(name) != nullptr; }

  std::optional<std::string> string(const std::string& name) const;
  // Present, a string, and not empty unless `may_be_empty`.
  std::string required_string(const std::string& name, bool may_be_empty = false) const;
  // A whole number within [lo, hi]; 5.0 counts as whole (JSON has one number type).
  std::optional<std::int64_t> integer(const std::string& name, std::int64_t lo,
                                      std::int64_t hi) const;
  std::optional<double> number(const std::string& name, double lo, double hi) const;
  bool flag(const std::string& name, bool fallback) const;
  // A JSON object as text ("" when absent): a §4 filter, metadata, a config.
  std::string object_text(const std::string& name) const;
  // One of `choices`, or `fallback` when absent.
  std::string choice(const std::string& name, const std::vector<std::string>& choices,
                     const std::string& fallback) const;

 private:
  const nlohmann::json& j_;
};

// "a, b or c", for messages that list what is accepted.
std::string one_of(const std::vector<std::string>& names);

}  // namespace quarry::wire
