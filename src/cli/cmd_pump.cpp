// quarry pump deploy|list|run|event|budget|embed — the embedding pump (SPEC §8): keep the
// vectors of the app's own tables in sync. `run` runs a use case now, in this process; the
// other triggers (deploy, events, cron, re-pokes) queue runs that `quarry serve` carries out.
#include <cstdlib>
#include <iostream>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "core/layout.h"
#include "core/secret_store.h"
#include "core/util.h"
#include "pump/pump.h"
#include "pump/pump_json.h"

namespace quarry::cli {
using nlohmann::json;

namespace {

std::string iso(std::int64_t ms) {
  return ms > 0 ? core::iso8601_utc(ms) : "";
}

// The pump works on the engine's data directory, beside its catalog.
struct PumpHandle {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<catalog::Catalog> cat;
  std::unique_ptr<pump::Pump> pump;
};

PumpHandle open_pump(const Globals& g) {
  PumpHandle h;
  h.engine = open_engine(g);
  const std::string dir = h.engine->data_dir();
  h.cat = catalog::Catalog::open(core::Layout{dir}.catalog_path());
  h.pump = std::make_unique<pump::Pump>(dir, *h.cat, core::secret_lookup(dir));
  return h;
}

}  // namespace

void add_pump_commands(CLI::App& app, Globals& g, int& exit_code) {
  auto* pump = app.add_subcommand(
      "pump", "Keep the embeddings of your own database tables in sync (the embedding pump)");
  pump->require_subcommand(1);

  struct DeployArgs {
    std::string dir, embedder;
  };
  auto da = std::make_shared<DeployArgs>();
  auto* deploy = pump->add_subcommand(
      "deploy", "Deploy a folder of use cases (one JSON file each; unknown keys fail the deploy)");
  deploy->add_option("dir", da->dir, "The folder of use case files")->required();
  deploy->add_option("--embedder", da->embedder,
                     "Embedding provider of the use cases, e.g. hash:256 or static:glove-100d "
                     "(QUARRY_EMBEDDING_PROVIDER overrides it)");
  deploy->callback([&g, da] {
    auto h = open_pump(g);
    catalog::AuditEntry a;
    const char* user = std::getenv("USER");
    a.actor = user && *user ? user : "cli";
    a.surface = "cli";
    auto rep = h.pump->deploy(da->dir, da->embedder, a);
    if (g.json) {
      print_json({{"deployed", rep.deployed}, {"removed", rep.removed}, {"parked", rep.parked}});
      return;
    }
    std::cout << "deployed " << rep.deployed.size() << " use case"
              << (rep.deployed.size() == 1 ? "" : "s");
    for (const auto& n : rep.deployed) std::cout << " " << n;
    std::cout << "\n";
    for (const auto& n : rep.removed) std::cout << "removed " << n << " (its file is gone)\n";
    for (const auto& [n, why] : rep.parked) std::cout << "parked " << n << ": " << why << "\n";
    if (!rep.deployed.empty())
      std::cout << "run one now with `quarry pump run NAME`; `quarry serve` runs them as "
                   "triggered\n";
  });

  auto* list = pump->add_subcommand("list", "Use cases with their revision and run state");
  list->callback([&g] {
    auto h = open_pump(g);
    auto all = h.pump->list();
    if (g.json) {
      json items = json::array();
      for (const auto& s : all) items.push_back(pump::to_json(s));
      print_json({{"use_cases", items}, {"spend", pump::to_json(h.pump->spend())}});
      return;
    }
    if (all.empty()) std::cout << "no use cases (deploy a folder with `quarry pump deploy DIR`)\n";
    for (const auto& s : all) {
      const auto& r = s.row;
      std::cout << r.name << "  revision " << (s.revision.empty() ? "-" : s.revision)
                << (r.parked ? "  PARKED" : "") << (s.running ? "  running" : "")
                << (r.pending ? "  pending" : "") << "  attempts " << r.attempts << "  tombstoned "
                << s.tombstoned << "\n";
      if (!s.model_error.empty()) std::cout << "  model: " << s.model_error << "\n";
      if (!r.last_error.empty()) std::cout << "  last error: " << r.last_error << "\n";
      if (r.last_run_at > 0)
        std::cout << "  last run " << iso(r.last_run_at) << ": " << r.last_failed << " failed, "
                  << r.last_skipped << " skipped\n";
    }
  });

  auto run_name = std::make_shared<std::string>();
  auto* run = pump->add_subcommand("run", "Run a use case now: embed what its app says is pending");
  run->add_option("name", *run_name, "The use case")->required();
  run->callback([&g, run_name, &exit_code] {
    auto h = open_pump(g);
    auto r = h.pump->run(*run_name);
    if (g.json) {
      print_json(pump::to_json(r));
    } else if (r.status == "already_running") {
      std::cout << *run_name << " is already running; this trigger is queued for after it\n";
    } else {
      std::cout << r.use_case << ": " << r.processed << " documents (" << r.chunks
                << " chunks) embedded in " << r.batches << " batch" << (r.batches == 1 ? "" : "es")
                << ", " << r.failed << " failed, " << r.skipped << " skipped";
      if (r.blocked > 0) std::cout << ", blocked by " << r.blocked << " unembeddable rows";
      std::cout << (r.drained ? "" : "; more pending (the 20-batch cap): run again") << "\n";
    }
    if (r.status == "already_running") exit_code = exit_status(Code::busy);
  });

  auto event_name = std::make_shared<std::string>();
  auto* event = pump->add_subcommand(
      "event", "Send an event: every use case whose `on` names it gets a run queued");
  event->add_option("name", *event_name, "The event, e.g. ticket.created")->required();
  event->callback([&g, event_name] {
    auto h = open_pump(g);
    auto names = h.pump->event(*event_name);
    if (g.json) {
      print_json({{"event", *event_name}, {"triggered", names}});
      return;
    }
    if (names.empty()) std::cout << "no use case listens to " << *event_name << "\n";
    for (const auto& n : names)
      std::cout << "queued " << n << " (`quarry serve` runs it; `quarry pump run " << n
                << "` runs it now)\n";
  });

  struct BudgetArgs {
    std::int64_t monthly = -1;
    bool off = false;
  };
  auto ba = std::make_shared<BudgetArgs>();
  auto* budget = pump->add_subcommand(
      "budget", "Show or set the pump's spend budget (usage entries per calendar month, UTC)");
  auto* monthly = budget->add_option(
      "--monthly", ba->monthly,
      "Usage entries allowed per month: a provider batch of up to 128 chunks, or one embed");
  monthly->check(CLI::NonNegativeNumber);
  auto* off = budget->add_flag("--off", ba->off, "Remove the budget");
  off->excludes(monthly);
  budget->callback([&g, ba, monthly, off] {
    auto h = open_pump(g);
    if (monthly->count() > 0 || off->count() > 0) {
      catalog::AuditEntry a;
      const char* user = std::getenv("USER");
      a.actor = user && *user ? user : "cli";
      a.surface = "cli";
      h.pump->set_budget(ba->off ? std::nullopt : std::optional<std::int64_t>(ba->monthly), a);
    }
    const auto sp = h.pump->spend();
    if (g.json) {
      print_json(pump::to_json(sp));
      return;
    }
    std::cout << "this month (since " << iso(sp.month_start) << "): " << sp.used
              << " usage entries";
    if (sp.monthly_budget)
      std::cout << " of a budget of " << *sp.monthly_budget;
    else
      std::cout << ", no budget";
    std::cout << "\n";
    for (const auto& [name, v] : sp.by_use_case)
      std::cout << "  " << name << ": " << v.first << " entries, " << v.second << " chunks\n";
  });

  struct EmbedArgs {
    std::string name, text;
  };
  auto ea = std::make_shared<EmbedArgs>();
  auto* embed = pump->add_subcommand(
      "embed", "Embed query text with a use case's embedder (for the app's own search)");
  embed->add_option("name", ea->name, "The use case")->required();
  embed
      ->add_option("text", ea->text,
                   "The text, embedded exactly as given ('-' reads stdin, '@file' a file)")
      ->required();
  embed->callback([&g, ea] {
    auto h = open_pump(g);
    auto r = h.pump->embed(ea->name, read_arg_or_file(ea->text));
    json j = {{"embedding", r.embedding}, {"revision", r.revision}};
    if (g.json) {
      print_json(j);
      return;
    }
    std::cout << j.dump() << "\n";
  });
}

}  // namespace quarry::cli
