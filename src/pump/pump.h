// The embedding pump (SPEC §8): deploys a folder of use cases, runs them (ask the app what is
// pending, chunk, embed, hand the vectors back), and embeds query text for the app's searches.
// The app's own storage is the ledger; the catalog keeps only each use case's config, run state
// (attempts, parked, queued trigger, lease) and tombstones.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "pump/source.h"
#include "pump/use_case.h"

namespace quarry::pump {

inline constexpr int kMaxBatches = 20;           // per run; more -> drained: false, re-poke
inline constexpr int kMaxChunksPerSlice = 2000;  // per store() call (= too_many_chunks)
inline constexpr std::size_t kMaxContentChars = 200000;
inline constexpr std::size_t kMaxEmbedChars = 100000;
inline constexpr int kChunksPerUsageEntry = 128;
inline constexpr int kParkAfterFailures = 5;
// A lease older than this is a crashed run's (one whose process is gone on this machine is
// taken over at once).
inline constexpr std::int64_t kLeaseStaleMs = 30LL * 60 * 1000;
inline constexpr std::int64_t kFirstRetryMs = 20000;  // then 40, 80, 160 s

struct DeployReport {
  std::vector<std::string> deployed;          // every use case of the folder, sorted
  std::vector<std::string> removed;           // deployed before, file gone now
  std::map<std::string, std::string> parked;  // name -> why (e.g. no pgvector)
};

struct UseCaseStatus {
  catalog::PumpUseCaseRow row;
  nlohmann::json config;  // as deployed
  std::string revision;   // "" when no embedder resolves (model_error says why)
  std::string model_error;
  bool running = false;
  std::int64_t tombstoned = 0;
};

struct RunResult {
  std::string status;  // ok | already_running
  std::string use_case;
  std::string revision;
  int processed = 0;  // documents embedded and handed back
  int failed = 0;     // rows that failed permanently in this run (now tombstoned)
  int skipped = 0;    // rows already tombstoned, re-reported with skipped: true
  int blocked = 0;    // rows of the batch that stopped the run with nothing embeddable
  int batches = 0;    // pending queries that returned rows
  int chunks = 0;
  int usage_entries = 0;  // one per provider batch of up to 128 chunks
  bool drained = true;    // false: stopped at the 20-batch cap (and queued another run)
};

struct EmbedResult {
  std::vector<float> embedding;
  std::string revision;
};

class Pump {
 public:
  Pump(std::string data_dir, catalog::Catalog& cat, SecretLookup secret);

  // Validates every `*.json` file of `dir` (one bad file fails the whole deploy, naming the file
  // and key) and reconciles: configs rewritten, run state of surviving use cases kept, removed
  // ones dropped; every use case gets a trigger, except those parked for a deploy problem.
  // `embedder` is the provider spec the use cases embed with (QUARRY_EMBEDDING_PROVIDER wins).
  DeployReport deploy(const std::string& dir, const std::string& embedder,
                      const catalog::AuditEntry& audit);
  std::vector<UseCaseStatus> list();
  // A manual trigger, run now in this process. Throws the run's error after recording it (the
  // use case's attempts, backoff or park); not_found for an unknown use case.
  RunResult run(const std::string& name);
  // Query-time embedding with the use case's embedder, and the revision its vectors carry.
  EmbedResult embed(const std::string& name, const std::string& text);

 private:
  RunResult run_leased(const UseCase& uc, const catalog::PumpUseCaseRow& row, Source& source);
  bool take_over_dead_lease(const std::string& name, const std::string& owner, std::int64_t now);

  std::string data_dir_;
  catalog::Catalog& cat_;
  SecretLookup secret_;
};

}  // namespace quarry::pump
