// The JSON shapes of the public types, shared by the CLI (--json), REST and MCP, and the HTTP
// status of each error code. docs/openapi.json describes these shapes.
#pragma once

#include <nlohmann/json.hpp>

#include "quarry/engine.h"

namespace quarry::wire {

// Error envelope {"error": {"code", "message", "details"}}.
nlohmann::json error_json(const Error& e);

nlohmann::json to_json(const IndexStatus& s);
nlohmann::json to_json(const KbInfo& k);
nlohmann::json to_json(const VectorIndexInfo& v);
nlohmann::json to_json(const Document& d);
nlohmann::json to_json(const Hit& h);
nlohmann::json to_json(const SearchResponse& r);
nlohmann::json to_json(const GrepResponse& r);
nlohmann::json to_json(const IngestItem& i);
nlohmann::json to_json(const IngestReport& r);
nlohmann::json to_json(const ReindexReport& r);
nlohmann::json to_json(const ReindexProgress& p);
nlohmann::json to_json(const ActivityEntry& a);
nlohmann::json to_json(const TokenInfo& t);

// The error as a caller of a server may see it: the data directory's absolute path replaced by
// "<data-dir>" in the message and details, invalid UTF-8 repaired (so it can be printed).
Error redacted(const Error& e, const std::string& data_dir);

// The HTTP status a REST error with this code is answered with (docs/rest.md lists them).
int http_status(Code code);

}  // namespace quarry::wire
