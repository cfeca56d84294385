// Where a use case's rows come from and where their vectors go (SPEC §8): the app's own
// storage is the ledger. A Source answers the pending query and stores slices of results; the
// run loop (pump.cpp) never sees SQL or HTTP.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pump/use_case.h"

namespace quarry::pump {

struct PendingRow {
  std::string id;           // as text (SQL sources bind it back as text)
  nlohmann::json id_value;  // http: the JSON id exactly as the app sent it (number or string)
  std::string content;
  nlohmann::json metadata = nlohmann::json::object();
};

struct StoredChunk {
  int index = 0;
  std::string text;
  std::vector<float> vector;
  nlohmann::json metadata = nlohmann::json::object();  // {"heading_path": [...]}
};

struct StoredDocument {
  std::string id;
  nlohmann::json id_value;
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<StoredChunk> chunks;
};

struct Failure {
  std::string id;
  nlohmann::json id_value;
  std::string code;  // content_too_large | no_content | too_many_chunks
  std::string message;
  bool skipped = false;  // tombstoned by an earlier run, re-reported
};

// What one store() call writes: at most 2,000 chunks; the batch's failures ride its first slice.
struct Slice {
  std::string revision;
  std::vector<StoredDocument> docs;
  std::vector<Failure> failures;
};

class Source {
 public:
  virtual ~Source() = default;
  // Up to `limit` rows that need (re-)embedding under `revision`. nullopt when the source
  // answered nothing at all (no result set): an authoring error, never an empty corpus.
  // Throws Error(contract_violation) for rows without id/content.
  virtual std::optional<std::vector<PendingRow>> pending(int limit,
                                                         const std::string& revision) = 0;
  // Writes one slice in one transaction: all of it or none.
  virtual void store(const Slice& slice) = 0;
  // A reason to park the use case before anything is embedded ("" = none): a PostgreSQL
  // database without the `vector` extension whose statements use the vector type.
  virtual std::string deploy_problem() { return ""; }
};

using SecretLookup = std::function<std::string(const std::string&)>;
std::unique_ptr<Source> make_source(const UseCase& uc, const SecretLookup& secret);
std::unique_ptr<Source> make_sql_source(const UseCase& uc, const SecretLookup& secret);
std::unique_ptr<Source> make_http_source(const UseCase& uc, const SecretLookup& secret);

// Whether a statement uses pgvector's type (`::vector`, `vector(`), case-insensitively.
bool uses_vector_type(const std::string& sql);

}  // namespace quarry::pump
