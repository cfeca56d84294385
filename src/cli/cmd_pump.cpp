// quarry pump deploy|list|run|event|budget|embed — the embedding pump (SPEC §8): keep the
// vectors of the app's own tables in sync. `run` runs a use case now, in this process; the
// other triggers (deploy, events, cron, re-pokes) queue runs that `quarry serve` carries out.
#include <iostream>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "quarry/pump.h"
#include "quarry/util.h"
#include "wire/pump_json.h"

namespace quarry::cli {
using nlohmann::json;

namespace {

std::string iso(std::int64_t ms) {
  return ms > 0 ? iso8601_utc(ms) : "";
}

// The pump works on the engine's data directory, beside its catalog; its writes are audited as
// this user through the CLI.
std::unique_ptr<Pump> open_pump(const Globals& g) {
  PumpOptions o;
  o.data_dir = open_engine(g)->data_dir();  // opens (and recovers) the directory as every command
  o.surface = "cli";
  return Pump::open(o);
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
    auto rep = open_pump(g)->deploy(da->dir, da->embedder);
    if (g.json) {
      print_json(wire::to_json(rep));
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
    auto p = open_pump(g);
    auto all = p->list();
    if (g.json) {
      json items = json::array();
      for (const auto& s : all) items.push_back(wire::to_json(s));
      print_json({{"use_cases", items}, {"spend", wire::to_json(p->spend())}});
      return;
    }
    if (all.empty()) std::cout << "no use cases (deploy a folder with `quarry pump deploy DIR`)\n";
    for (const auto& s : all) {
      std::cout << s.name << "  revision " << (s.revision.empty() ? "-" : s.revision)
                << (s.parked ? "  PARKED" : "") << (s.running ? "  running" : "")
                << (s.pending ? "  pending" : "") << "  attempts " << s.attempts << "  tombstoned "
                << s.tombstoned << "\n";
      if (!s.model_error.empty()) std::cout << "  model: " << s.model_error << "\n";
      if (!s.last_error.empty()) std::cout << "  last error: " << s.last_error << "\n";
      if (s.last_run_at > 0)
        std::cout << "  last run " << iso(s.last_run_at) << ": " << s.last_failed << " failed, "
                  << s.last_skipped << " skipped\n";
    }
  });

  auto run_name = std::make_shared<std::string>();
  auto* run = pump->add_subcommand("run", "Run a use case now: embed what its app says is pending");
  run->add_option("name", *run_name, "The use case")->required();
  run->callback([&g, run_name, &exit_code] {
    auto pump = open_pump(g);
    // Ctrl-C or SIGTERM: the batch in hand is handed back whole, then the run stops.
    Interruption interruption;
    auto r = pump->run(*run_name, interruption.flag());
    const bool stopped = interruption.requested() && r.status == "ok" && !r.drained;
    if (g.json) {
      json j = wire::to_json(r);
      if (stopped) j["cancelled"] = true;
      print_json(j);
    } else if (r.status == "already_running") {
      std::cout << *run_name << " is already running; this trigger is queued for after it\n";
    } else {
      std::cout << r.use_case << ": " << r.processed << " documents (" << r.chunks
                << " chunks) embedded in " << r.batches << " batch" << (r.batches == 1 ? "" : "es")
                << ", " << r.failed << " failed, " << r.skipped << " skipped";
      if (r.blocked > 0) std::cout << ", blocked by " << r.blocked << " unembeddable rows";
      if (stopped)
        std::cout << "\n"
                  << interruption.name()
                  << ": the batches above are handed back; run `quarry pump run " << *run_name
                  << "` again to carry on (`quarry serve` also does)\n";
      else
        std::cout << (r.drained ? "" : "; more pending (the 20-batch cap): run again") << "\n";
    }
    if (r.status == "already_running") exit_code = exit_status(Code::busy);
    if (stopped) exit_code = interruption.exit_status();
  });

  auto event_name = std::make_shared<std::string>();
  auto* event = pump->add_subcommand(
      "event", "Send an event: every use case whose `on` names it gets a run queued");
  event->add_option("name", *event_name, "The event, e.g. ticket.created")->required();
  event->callback([&g, event_name] {
    auto names = open_pump(g)->event(*event_name);
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
    auto p = open_pump(g);
    if (monthly->count() > 0 || off->count() > 0)
      p->set_budget(ba->off ? std::nullopt : std::optional<std::int64_t>(ba->monthly));
    const auto sp = p->spend();
    if (g.json) {
      print_json(wire::to_json(sp));
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
    const json j = wire::to_json(open_pump(g)->embed(ea->name, read_arg_or_file(ea->text)));
    if (g.json) {
      print_json(j);
      return;
    }
    std::cout << j.dump() << "\n";
  });
}

}  // namespace quarry::cli
