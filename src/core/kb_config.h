// Strict JSON schema for KbConfig and KB names.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "quarry/config.h"

namespace quarry::core {

// Throws Error(invalid_argument) unless `name` matches [a-z0-9][a-z0-9_-]{0,62}.
void validate_kb_name(const std::string& name);

// Applies the keys present in `j` on top of `base`. Unknown keys, wrong types and out-of-range
// values throw Error(invalid_argument) with details {"field": "<dotted.path>"}.
KbConfig kb_config_from_json(const nlohmann::json& j, const KbConfig& base = {});
nlohmann::json kb_config_to_json(const KbConfig& c);

// `quarry kb set NAME key=value`: `key` is a dotted path (chunking.max_tokens); `value` is parsed
// as JSON when it parses, else taken as a string.
KbConfig kb_config_set(const KbConfig& c, const std::string& dotted_key, const std::string& value);

// The revision hashes of SPEC §1 (16 hex digits). config_revision covers what changes chunks:
// the chunking profile and budgets and the manual revision counter. revision() adds the
// embedder identity (provider, model, dimensions, normalisation, tokenizer...): a vector is
// only ever compared with vectors of the same revision. API keys, timeouts and rate limits are
// not part of either (docs/configuration.md lists what is).
// `tokenizer` names the model tokenizer and input limit chunks were counted with ("" for the
// approximation: the revisions of KBs without one did not change when model tokenizers came).
std::string config_revision(const KbConfig& c, const std::string& tokenizer = "");
// `tokenizer` as for config_revision: the chunks a vector was made from are part of its revision.
std::string revision(const KbConfig& c, const std::string& embedder_identity,
                     const std::string& tokenizer = "");

// Cross-field checks (overlap <= max/2, budgets refused under `none`, ...).
void validate_kb_config(const KbConfig& c);

}  // namespace quarry::core
