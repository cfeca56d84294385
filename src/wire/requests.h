// The request codec: ONE decoder per request kind, from a JSON object to the public request
// types, shared by REST (the body), MCP (a tool's arguments) and the CLI (its flags, gathered
// into the same object). So every surface has the same fields, the same defaults and the same
// bounds, and refuses the same mistakes with the same error: Error(invalid_argument) whose
// details.field names the field (wire/fields.h). docs/rest.md and docs/search.md list them.
//
// A decoder takes the object without the KB: REST takes it from the path, MCP from its `kb`
// argument (or the server's --kb), the CLI from --kb.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "quarry/engine.h"

namespace quarry::wire {

// --- search: query, mode, top_k, min_score, filter, fusion, semantic_ratio, advanced ----------
// No mode means kDefaultMode (auto: hybrid where the KB has a working embedder, else keyword).
inline constexpr int kTopKDefault = 10;
inline constexpr int kTopKMax = 1000;
const std::vector<std::string>& search_fields();
SearchRequest decode_search(const nlohmann::json& body, const std::string& kb);
// The object decode_search reads back into the same request (without the KB).
nlohmann::json encode_search(const SearchRequest& r);

// --- grep: pattern, literal, ignore_case, word, invert, context, before_context, after_context,
// max_matches, filter. `context` sets both sides; before_context/after_context override it.
inline constexpr int kContextMax = 100;
inline constexpr int kMaxMatchesDefault = 1000;
inline constexpr int kMaxMatchesMax = 100000;
const std::vector<std::string>& grep_fields();
GrepRequest decode_grep(const nlohmann::json& body, const std::string& kb);
nlohmann::json encode_grep(const GrepRequest& r);

// --- ingest -------------------------------------------------------------------------------------
// One upload held in memory.
struct Upload {
  std::string filename;
  std::string bytes;
};
struct UploadBatch {
  std::vector<Upload> uploads;
  IngestOptions options;
};
// A JSON upload: filename, exactly one of content (text) and content_base64 (any bytes),
// metadata (an object), replace (default false).
const std::vector<std::string>& upload_fields();
UploadBatch decode_upload(const nlohmann::json& body);
// A multipart form: text fields metadata (JSON object text) and replace ("true" | "false"), and
// one or more file parts named `file`.
struct FormFile {
  std::string field;
  std::string filename;
  std::string content;
};
UploadBatch decode_upload_form(const std::map<std::string, std::string>& fields,
                               const std::vector<FormFile>& files);
// The options of a path ingest (the CLI): metadata, replace, include and exclude (glob arrays).
IngestOptions decode_ingest_options(const nlohmann::json& body);

// --- knowledge bases ----------------------------------------------------------------------------
// kb create: name (required), config (an object in the schema of docs/configuration.md),
// description (a shortcut for config.description).
struct KbCreate {
  std::string name;
  std::string config_json;
};
KbCreate decode_kb_create(const nlohmann::json& body);
// kb change: settings (a non-empty object of "dotted.key": string | number | boolean) and
// cutover (on-complete, the default: blue-green; immediate: switch now and drop the old vectors).
struct KbChange {
  std::vector<std::pair<std::string, std::string>> settings;
  bool cutover_immediate = false;
};
KbChange decode_kb_change(const nlohmann::json& body);
// The same change from settings in the order given (the CLI's key=value arguments: an object's
// keys would be sorted, and a later setting may depend on an earlier one).
KbChange decode_kb_change(const std::vector<std::pair<std::string, nlohmann::json>>& settings,
                          const std::string& cutover);

}  // namespace quarry::wire
