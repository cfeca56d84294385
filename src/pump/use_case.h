// A pump use case (SPEC §8): one file in the app's folder says what to embed, how to chunk it,
// when to run, and where the rows come from and go back to. Parsed strictly: an unknown key,
// a value out of range or a budget under `none` is Error(invalid_argument) naming the file and
// the key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quarry/config.h"

namespace quarry::pump {

// The `sql` source: statements against the app's own PostgreSQL (libpq) or SQLite database.
// Parameters are positional, `$1`..`$n`, in both (SQLite reads them as named parameters).
struct SqlSource {
  std::string driver;           // postgres | sqlite
  std::string dsn_secret;       // postgres: the name of the secret holding the libpq DSN
  std::string path;             // sqlite: the database file (absolute once deployed)
  std::string pending;          // $1 = limit, $2 = revision -> rows (id, content[, metadata])
  std::string delete_document;  // optional, before a document's chunks: $1 = id
  std::string store_document;   // optional, after them: $1 id, $2 revision, $3 metadata JSON,
                                // $4 chunk count
  std::string store_chunk;      // $1 id, $2 chunk index, $3 vector "[..]", $4 text, $5 revision,
                                // $6 chunk metadata JSON, $7 vector as a PostgreSQL array "{..}"
  std::string store_failure;    // optional: $1 id, $2 code, $3 message, $4 skipped (0|1),
                                // $5 revision
};

// The `http` source: the app's webhook. GET <url>?limit=N&revision=R answers the pending rows
// as a JSON array of {id, content, metadata?}; POST <url> takes {revision, docs, failures}.
struct HttpSource {
  std::string url;
  std::string api_key_secret;  // optional: sent as `Authorization: Bearer <secret>`
  bool allow_private = false;  // loopback/private addresses (an app on this machine) need it
};

struct UseCase {
  std::string name;  // the file's stem
  std::string description;
  ChunkingConfig chunking{"none", {}, {}};  // the pump's default profile is `none`
  std::vector<std::string> on;              // event names
  std::string cron;                         // 5 fields, "" = none
  int batch_size = 100;                     // 1..1000 rows per pending query
  int timeout_ms = 30000;                   // 1000..300000, per statement / request
  int revision = 0;                         // the author's counter: bump to re-embed everything
  std::string source_type = "sql";          // sql | http
  SqlSource sql;
  HttpSource http;
};

// `file` names the use case in errors. `base_dir` resolves a relative SQLite path.
UseCase parse_use_case(const std::string& name, const nlohmann::json& j, const std::string& file,
                       const std::string& base_dir);
nlohmann::json use_case_to_json(const UseCase& uc);
// Reads `<dir>/<name>.json`, `.yaml` or `.yml`; the name must be a valid KB-style name.
UseCase load_use_case_file(const std::string& path);

// The chunking half of the revision (profile, effective budgets, the counter), and the revision
// itself with the embedder's identity: computed as for a KB (core/kb_config.h), so the same
// settings hash the same.
std::string config_revision(const UseCase& uc);
// `tokenizer`: embed::chunking_key of the embedder (chunks counted in its model's tokens).
std::string revision(const UseCase& uc, const std::string& embedder_identity,
                     const std::string& tokenizer = "");

// Five cron fields, each `*`, a number, a range a-b, a list, or a step (*/n, a-b/n), in range
// for its position (minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 0-7).
void validate_cron(const std::string& expr, const std::string& file);

}  // namespace quarry::pump
