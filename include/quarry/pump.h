// The embedding pump (SPEC §8, docs/pump.md): keeps the vectors of an application's own tables in
// sync. A folder of use cases is deployed; a run asks the app what is pending, chunks and embeds
// it, and hands the vectors back to the app, whose storage is the ledger. This is the API the
// CLI (`quarry pump ...`) and the server (`/api/v1/pump/...`, its in-process scheduler) use.
//
// A Pump works on a data directory's catalog (one per thread, like an Engine). Writes (deploy,
// budget) are audited with the actor and surface it was opened with.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace quarry {

struct PumpDeployReport {
  std::vector<std::string> deployed;  // every use case of the folder, sorted
  std::vector<std::string> removed;   // deployed before, file gone now
  std::map<std::string, std::string>
      parked;  // name -> why (e.g. the app's database lacks pgvector)
};

// One use case as `pump list` shows it. Times are milliseconds since the epoch (0: never).
struct PumpUseCaseStatus {
  std::string name;
  std::string config_json;  // the use case as deployed
  std::string embedder;     // the provider spec it embeds with
  std::string revision;     // "" when no embedder resolves (model_error says why)
  std::string config_revision;
  std::string model_error;
  bool running = false;
  bool pending = false;  // a trigger is queued
  bool parked = false;
  std::int64_t next_run_at = 0;
  int attempts = 0;  // consecutive failed runs
  std::int64_t tombstoned = 0;
  std::int64_t last_run_at = 0;
  std::string last_error;  // "code: message"
  int last_failed = 0;
  int last_skipped = 0;
  std::int64_t usage_entries = 0;  // this calendar month (UTC)
  std::int64_t usage_chunks = 0;
  std::int64_t deployed_at = 0;
};

// The pump's spend: usage entries this calendar month (UTC) against the optional budget.
struct PumpSpend {
  std::optional<std::int64_t> monthly_budget;  // usage entries; none = unlimited
  std::int64_t used = 0;
  std::int64_t month_start = 0;                                              // ms
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_use_case;  // entries, chunks
};

struct PumpRunResult {
  std::string status;  // ok | already_running (the trigger is queued for after the running run)
  std::string use_case;
  std::string revision;
  int processed = 0;  // documents embedded and handed back
  int failed = 0;     // rows that failed permanently in this run (now tombstoned)
  int skipped = 0;    // rows already tombstoned, re-reported with skipped: true
  int blocked = 0;    // rows of the batch that stopped the run with nothing embeddable
  int batches = 0;
  int chunks = 0;
  int usage_entries = 0;  // one per provider batch of up to 128 chunks
  bool drained = true;    // false: stopped at the 20-batch cap (another run is queued)
};

struct PumpEmbedding {
  std::vector<float> embedding;
  std::string revision;  // the revision the use case's vectors carry
};

// Embedding providers loaded once and shared by the Pumps and the scheduler of one process (a
// static model takes a while to load). Opaque.
class PumpProviders;
std::shared_ptr<PumpProviders> make_pump_providers(const std::string& data_dir);

struct PumpOptions {
  std::string data_dir;                      // created if missing
  std::string actor;                         // who, for the audit log (default: OS user)
  std::string surface = "library";           // cli | rest | mcp | library
  std::shared_ptr<PumpProviders> providers;  // null: its own
};

class Pump {
 public:
  static std::unique_ptr<Pump> open(const PumpOptions& options);
  virtual ~Pump() = default;

  // Validates every use case file of `dir` (one bad file fails the whole deploy, naming the file
  // and key) and reconciles; every use case gets a trigger, except those parked for a deploy
  // problem. `embedder`: the provider spec they embed with (QUARRY_EMBEDDING_PROVIDER wins).
  virtual PumpDeployReport deploy(const std::string& dir, const std::string& embedder) = 0;
  virtual std::vector<PumpUseCaseStatus> list() = 0;
  // A manual trigger, run now in this process; throws the run's error after recording it.
  // `stop`, when set (Ctrl-C), ends the run after the batch in hand, committed whole: drained
  // is false and a run is queued to carry on (`quarry serve`, or `pump run` again).
  virtual PumpRunResult run(const std::string& use_case,
                            const std::atomic<bool>* stop = nullptr) = 0;
  // Queues a run of every use case whose `on` names the event; returns their names.
  virtual std::vector<std::string> event(const std::string& name) = 0;
  // Query-time embedding with the use case's embedder (text embedded exactly as given).
  virtual PumpEmbedding embed(const std::string& use_case, const std::string& text) = 0;
  virtual PumpSpend spend() = 0;
  // Usage entries allowed per calendar month (UTC); nullopt removes the budget.
  virtual void set_budget(std::optional<std::int64_t> monthly_entries) = 0;

  virtual const std::string& data_dir() const = 0;
};

// The triggers a long-running process carries out (SPEC §8): cron schedules, and every queued
// run that is due (deploys, events, re-pokes, retries), on a few worker threads.
struct PumpSchedulerOptions {
  std::string data_dir;
  std::shared_ptr<PumpProviders> providers;  // null: its own
  int workers = 2;                           // use cases run at once
  int tick_ms = 1000;
};

class PumpScheduler {
 public:
  static std::unique_ptr<PumpScheduler> start(const PumpSchedulerOptions& options);
  virtual ~PumpScheduler() = default;  // stops
  // Look now (a trigger arrived), not at the next tick.
  virtual void poke() = 0;
  // Ends running use cases after their batch in hand (each queues its next run) and joins.
  virtual void stop() = 0;
  virtual std::int64_t runs_finished() const = 0;
};

}  // namespace quarry
