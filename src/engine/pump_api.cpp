// The public pump API (include/quarry/pump.h) over src/pump/: the shells name use cases and
// actors; opening the catalog, the secret lookup and the audit rows stay inside the library.
#include "quarry/pump.h"

#include <filesystem>

#include "catalog/catalog.h"
#include "core/layout.h"
#include "core/util.h"
#include "pump/pump.h"
#include "pump/scheduler.h"
#include "quarry/error.h"
#include "secrets/secret_store.h"

namespace quarry {

class PumpProviders {
 public:
  explicit PumpProviders(const std::string& data_dir)
      : cache(std::make_shared<pump::ProviderCache>(data_dir, secrets::secret_lookup(data_dir))) {}
  std::shared_ptr<pump::ProviderCache> cache;
};

std::shared_ptr<PumpProviders> make_pump_providers(const std::string& data_dir) {
  return std::make_shared<PumpProviders>(data_dir);
}

namespace {

namespace fs = std::filesystem;

// The data directory as the Engine names it (created, canonical), so both open the same catalog.
std::string open_data_dir(const std::string& dir) {
  if (dir.empty())
    throw Error(Code::invalid_argument, "data directory is empty", {{"field", "data_dir"}});
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(Code::io_error, "cannot create data directory " + dir + ": " + ec.message());
  return fs::canonical(dir).string();
}

PumpUseCaseStatus to_public(pump::UseCaseStatus s) {
  PumpUseCaseStatus o;
  auto& r = s.row;
  o.name = std::move(r.name);
  o.config_json = s.config.dump();
  o.embedder = std::move(r.embedder);
  o.revision = std::move(s.revision);
  o.config_revision = std::move(r.config_revision);
  o.model_error = std::move(s.model_error);
  o.running = s.running;
  o.pending = r.pending;
  o.parked = r.parked;
  o.next_run_at = r.next_run_at;
  o.attempts = r.attempts;
  o.tombstoned = s.tombstoned;
  o.last_run_at = r.last_run_at;
  o.last_error = std::move(r.last_error);
  o.last_failed = r.last_failed;
  o.last_skipped = r.last_skipped;
  o.usage_entries = s.usage_entries;
  o.usage_chunks = s.usage_chunks;
  o.deployed_at = r.deployed_at;
  return o;
}

PumpRunResult to_public(const pump::RunResult& r) {
  PumpRunResult o;
  o.status = r.status;
  o.use_case = r.use_case;
  o.revision = r.revision;
  o.processed = r.processed;
  o.failed = r.failed;
  o.skipped = r.skipped;
  o.blocked = r.blocked;
  o.batches = r.batches;
  o.chunks = r.chunks;
  o.usage_entries = r.usage_entries;
  o.drained = r.drained;
  return o;
}

class PumpImpl final : public Pump {
 public:
  explicit PumpImpl(const PumpOptions& o)
      : dir_(open_data_dir(o.data_dir)),
        actor_(o.actor.empty() ? core::os_user() : o.actor),
        surface_(o.surface),
        providers_(o.providers ? o.providers : make_pump_providers(dir_)),
        cat_(catalog::Catalog::open(core::Layout{dir_}.catalog_path())),
        pump_(dir_, *cat_, secrets::secret_lookup(dir_), providers_->cache) {}

  PumpDeployReport deploy(const std::string& dir, const std::string& embedder) override {
    auto rep = pump_.deploy(dir, embedder, audit());
    return {std::move(rep.deployed), std::move(rep.removed), std::move(rep.parked)};
  }

  std::vector<PumpUseCaseStatus> list() override {
    std::vector<PumpUseCaseStatus> out;
    for (auto& s : pump_.list()) out.push_back(to_public(std::move(s)));
    return out;
  }

  PumpRunResult run(const std::string& use_case) override { return to_public(pump_.run(use_case)); }

  std::vector<std::string> event(const std::string& name) override { return pump_.event(name); }

  PumpEmbedding embed(const std::string& use_case, const std::string& text) override {
    auto e = pump_.embed(use_case, text);
    return {std::move(e.embedding), std::move(e.revision)};
  }

  PumpSpend spend() override {
    auto s = pump_.spend();
    return {s.monthly_budget, s.used, s.month_start, std::move(s.by_use_case)};
  }

  void set_budget(std::optional<std::int64_t> monthly_entries) override {
    pump_.set_budget(monthly_entries, audit());
  }

  const std::string& data_dir() const override { return dir_; }

 private:
  // The pump fills in the action, target and details of each write.
  catalog::AuditEntry audit() const {
    catalog::AuditEntry a;
    a.actor = actor_;
    a.surface = surface_;
    return a;
  }

  std::string dir_, actor_, surface_;
  std::shared_ptr<PumpProviders> providers_;
  std::unique_ptr<catalog::Catalog> cat_;
  pump::Pump pump_;
};

class PumpSchedulerImpl final : public PumpScheduler {
 public:
  explicit PumpSchedulerImpl(const PumpSchedulerOptions& o) {
    const std::string dir = open_data_dir(o.data_dir);
    // The scheduler's loop opens the catalog on its own thread: make sure it exists first.
    catalog::Catalog::open(core::Layout{dir}.catalog_path());
    pump::SchedulerOptions so;
    so.data_dir = dir;
    so.secret = secrets::secret_lookup(dir);
    so.providers = (o.providers ? o.providers : make_pump_providers(dir))->cache;
    so.workers = o.workers;
    so.tick_ms = o.tick_ms;
    scheduler_ = std::make_unique<pump::Scheduler>(so);
  }

  void poke() override { scheduler_->poke(); }
  void stop() override { scheduler_->stop(); }
  std::int64_t runs_finished() const override { return scheduler_->runs_finished(); }

 private:
  std::unique_ptr<pump::Scheduler> scheduler_;
};

}  // namespace

std::unique_ptr<Pump> Pump::open(const PumpOptions& options) {
  return std::make_unique<PumpImpl>(options);
}

std::unique_ptr<PumpScheduler> PumpScheduler::start(const PumpSchedulerOptions& options) {
  return std::make_unique<PumpSchedulerImpl>(options);
}

}  // namespace quarry
