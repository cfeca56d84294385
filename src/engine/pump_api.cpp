// The public pump API (include/quarry/pump.h) over src/pump/: the shells name use cases and
// actors; opening the catalog, the secret lookup and the audit rows stay inside the library.
#include "quarry/pump.h"

#include "catalog/catalog.h"
#include "core/layout.h"
#include "core/util.h"
#include "engine/data_dir.h"
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

class PumpImpl final : public Pump {
 public:
  explicit PumpImpl(const PumpOptions& o)
      : dir_(engine::open_data_dir(o.data_dir)),
        actor_(o.actor.empty() ? core::os_user() : o.actor),
        surface_(o.surface),
        providers_(o.providers ? o.providers : make_pump_providers(dir_)),
        cat_(catalog::Catalog::open(core::Layout{dir_}.catalog_path())),
        pump_(dir_, *cat_, secrets::secret_lookup(dir_), providers_->cache) {}

  PumpDeployReport deploy(const std::string& dir, const std::string& embedder) override {
    return pump_.deploy(dir, embedder, audit());
  }

  std::vector<PumpUseCaseStatus> list() override {
    std::vector<PumpUseCaseStatus> out;
    for (auto& s : pump_.list()) out.push_back(to_public(std::move(s)));
    return out;
  }

  PumpRunResult run(const std::string& use_case, const std::atomic<bool>* stop) override {
    return pump_.run(use_case, stop);
  }

  std::vector<std::string> event(const std::string& name) override { return pump_.event(name); }

  PumpEmbedding embed(const std::string& use_case, const std::string& text) override {
    return pump_.embed(use_case, text);
  }

  PumpSpend spend() override { return pump_.spend(); }

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
    const std::string dir = engine::open_data_dir(o.data_dir);
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
