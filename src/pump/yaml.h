// YAML use-case files (SPEC §8: "one file per use case (YAML or JSON)"), read with libyaml into
// the same JSON the strict parser takes. Plain scalars are typed as YAML 1.2's core schema does
// (null, true/false, integers, floats); quoted scalars stay strings. Anchors, aliases and tags
// are refused: a use case has no need for them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace quarry::pump {

// Throws Error(invalid_argument) naming `file` and the line of a syntax error.
nlohmann::json parse_yaml(const std::string& text, const std::string& file);

}  // namespace quarry::pump
