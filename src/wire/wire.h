// The JSON shapes of the public types, shared by the CLI (--json), REST and MCP, and the HTTP
// status of each error code. docs/openapi.json describes these shapes. The requests' decoders
// are in wire/requests.h, the pump's shapes in wire/pump_json.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "quarry/engine.h"
#include "quarry/indexer.h"
#include "quarry/plugin.h"

namespace quarry::wire {

// Error envelope {"error": {"code", "message", "details"}}.
nlohmann::json error_json(const Error& e);

nlohmann::json to_json(const IndexStatus& s);
nlohmann::json to_json(const KbInfo& k);
// A dry run of a KB change: {dry_run, kb, description, config, revision, config_revision,
// vectors, re_embed, re_cut, re_cut_at, documents, chunks, chunks_after}.
nlohmann::json to_json(const KbChangePlan& p);
nlohmann::json to_json(const VectorIndexInfo& v);
nlohmann::json to_json(const Document& d);
nlohmann::json to_json(const ChunkInfo& c);
nlohmann::json to_json(const Hit& h);
nlohmann::json to_json(const SearchResponse& r);
nlohmann::json to_json(const GrepResponse& r);
nlohmann::json to_json(const IngestItem& i);
nlohmann::json to_json(const IngestReport& r);
nlohmann::json to_json(const ReindexReport& r);
nlohmann::json to_json(const ReindexProgress& p);
nlohmann::json to_json(const ActivityEntry& a);
nlohmann::json to_json(const TokenInfo& t);

// The plugins this build offers: {"providers": [...], "stores": [...]}, each {id, description,
// settings, models (providers only)}; a plugin registered without a schema has description,
// settings and models null ("not described"), never an empty list.
nlohmann::json plugins_json(const std::vector<RegisteredPlugin>& providers,
                            const std::vector<RegisteredPlugin>& stores);

// A document as a remote caller (REST, MCP) sees it: without markdown_path and raw_path, which
// it cannot open and which would reveal the server's layout.
nlohmann::json remote_document_json(const Document& d);

// The background indexer's view of one KB ({kb, running, progress, last, consecutive_failures,
// next_attempt}); `state` null when the indexer has none (or the server runs without one).
nlohmann::json reindex_state_json(const std::string& kb, const IndexerKbState* state);

// The error as a caller of a server may see it: the data directory's absolute path replaced by
// "<data-dir>" in the message and details, invalid UTF-8 repaired (so it can be printed).
Error redacted(const Error& e, const std::string& data_dir);

// The HTTP status a REST error with this code is answered with (docs/rest.md lists them).
int http_status(Code code);

}  // namespace quarry::wire
