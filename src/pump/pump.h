// The embedding pump (SPEC §8): deploys a folder of use cases, runs them (ask the app what is
// pending, chunk, embed, hand the vectors back), and embeds query text for the app's searches.
// The app's own storage is the ledger; the catalog keeps only each use case's config, run state
// (attempts, parked, queued trigger, lease) and tombstones.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "embed/provider.h"
#include "pump/source.h"
#include "pump/use_case.h"
#include "quarry/pump.h"

namespace quarry::pump {

inline constexpr int kMaxBatches = 20;           // per run; more -> drained: false, re-poke
inline constexpr int kMaxChunksPerSlice = 2000;  // per store() call (= too_many_chunks)
inline constexpr std::size_t kMaxContentChars = 200000;
inline constexpr std::size_t kMaxEmbedChars = 100000;
inline constexpr int kChunksPerUsageEntry = 128;
// A run hands back embedded documents once this many chunks are ready (or at a batch's end).
inline constexpr std::size_t kMinSliceChunks = 256;
inline constexpr int kParkAfterFailures = 5;
// A lease older than this is a crashed run's (one whose process is gone on this machine is
// taken over at once).
inline constexpr std::int64_t kLeaseStaleMs = 30LL * 60 * 1000;
inline constexpr std::int64_t kFirstRetryMs = 20000;  // then 40, 80, 160 s

// Embedding providers by spec, loaded once (a static model takes a while to load) and shared
// by every Pump of a process (providers are thread-safe). A spec that does not resolve is not
// cached, so installing the model fixes it without a restart.
class ProviderCache {
 public:
  ProviderCache(std::string data_dir, SecretLookup secret);
  // Null with `why` set when `spec` does not resolve to a usable provider.
  std::shared_ptr<embed::EmbeddingProvider> get(const std::string& spec, std::string* why);
  // Serves `spec` with `provider` (an embedder built by the caller, e.g. a test's).
  void put(const std::string& spec, std::unique_ptr<embed::EmbeddingProvider> provider);

 private:
  std::string data_dir_;
  SecretLookup secret_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<embed::EmbeddingProvider>> cache_;
};

// The results of the pump's calls are the public API's types (quarry/pump.h): one definition.
// UseCaseStatus alone differs: it keeps the catalog row and the parsed config.
using DeployReport = quarry::PumpDeployReport;

struct UseCaseStatus {
  catalog::PumpUseCaseRow row;
  nlohmann::json config;  // as deployed
  std::string revision;   // "" when no embedder resolves (model_error says why)
  std::string model_error;
  bool running = false;
  std::int64_t tombstoned = 0;
  std::int64_t usage_entries = 0;  // this calendar month (UTC)
  std::int64_t usage_chunks = 0;
};

using Spend = quarry::PumpSpend;
using RunResult = quarry::PumpRunResult;
using EmbedResult = quarry::PumpEmbedding;

class Pump {
 public:
  // `providers` may be shared by several Pumps (the server's threads); null makes one.
  Pump(std::string data_dir, catalog::Catalog& cat, SecretLookup secret,
       std::shared_ptr<ProviderCache> providers = nullptr);

  // Validates every `*.json` file of `dir` (one bad file fails the whole deploy, naming the file
  // and key) and reconciles: configs rewritten, run state of surviving use cases kept, removed
  // ones dropped; every use case gets a trigger, except those parked for a deploy problem.
  // `embedder` is the provider spec the use cases embed with (QUARRY_EMBEDDING_PROVIDER wins).
  DeployReport deploy(const std::string& dir, const std::string& embedder,
                      const catalog::AuditEntry& audit);
  std::vector<UseCaseStatus> list();
  // A manual trigger, run now in this process. Throws the run's error after recording it (the
  // use case's attempts, backoff or park); not_found for an unknown use case.
  // `stop`, when given and set (the server shutting down), ends the run after the batch in
  // hand as if at the batch cap: drained false, another run queued.
  RunResult run(const std::string& name, const std::atomic<bool>* stop = nullptr);
  // Query-time embedding with the use case's embedder, and the revision its vectors carry.
  EmbedResult embed(const std::string& name, const std::string& text);

  // Triggers (SPEC §8). A manual or scheduled trigger queues a run (one more attempt for a
  // parked use case; a retry backing off keeps its time); not_found for an unknown use case.
  void trigger(const std::string& name);
  // An event: triggers every use case whose `on` names it; returns their names (maybe none).
  std::vector<std::string> event(const std::string& event_name);
  // Cron: triggers every use case whose schedule has a minute in (from_ms, to_ms].
  std::vector<std::string> cron_tick(std::int64_t from_ms, std::int64_t to_ms);
  // Use cases with a queued run due by `now` whose lease is free (or stale, or a dead process's).
  std::vector<std::string> due(std::int64_t now);

  // The spend budget: usage entries per calendar month (UTC); nullopt removes it.
  void set_budget(std::optional<std::int64_t> monthly_entries, const catalog::AuditEntry& audit);
  Spend spend();

 private:
  std::shared_ptr<embed::EmbeddingProvider> require_provider(const std::string& spec);
  // Throws budget_exhausted when the month's budget has no entry left (`unrecorded`: entries
  // this run spent or started that are not in the catalog yet).
  void check_budget(const std::string& name, std::int64_t unrecorded);
  void embed_and_store(const std::string& name, embed::EmbeddingProvider& provider, Source& source,
                       RunResult& res, std::vector<StoredDocument>& docs,
                       std::vector<Failure> failures);
  RunResult run_leased(const UseCase& uc, const catalog::PumpUseCaseRow& row, Source& source,
                       const std::atomic<bool>* stop);
  bool take_over_dead_lease(const std::string& name, const std::string& owner, std::int64_t now);

  std::string data_dir_;
  catalog::Catalog& cat_;
  SecretLookup secret_;
  std::shared_ptr<ProviderCache> providers_;
};

// Validates an event name (1-200 printable ASCII characters, no spaces); invalid_argument.
void check_event_name(const std::string& name);
// The first millisecond of the calendar month (UTC) containing `ms`.
std::int64_t month_start_utc(std::int64_t ms);

}  // namespace quarry::pump
