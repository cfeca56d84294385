// quarry reindex [--kb NAME]: reconcile and embed everything pending (SPEC §7), with progress
// (documents done/total, rate, ETA). Ctrl-C or SIGTERM stops it cleanly; the next run resumes.
#include <iostream>

#include "cli/commands.h"
#include "cli/interrupt.h"

namespace quarry::cli {
using nlohmann::json;

Sweep run_reindex(Engine& engine, const std::string& kb, bool json_out, int workers, double duty) {
  ReindexOptions o;
  o.foreground_duty = duty;
  ProgressBar bar;
  if (!json_out && stderr_is_tty())
    o.progress = [&bar](const ReindexProgress& p) {
      std::string rate = "docs";
      if (p.rate > 0) rate += "  " + std::to_string(static_cast<long>(p.rate)) + "/s";
      if (p.eta_s > 0.5) rate += "  ETA " + std::to_string(static_cast<long>(p.eta_s + 0.5)) + " s";
      bar.draw("embedding " + p.kb + " ", static_cast<std::size_t>(p.done),
               static_cast<std::size_t>(p.total), rate);
    };
  o.workers = workers;
  Interruption interruption;
  o.cancel = interruption.flag();
  Sweep s;
  s.report = engine.reindex(kb, o);
  bar.clear();
  if (s.report.cancelled) s.stop_signal = interruption.signal();
  return s;
}

void print_reindex_human(const Sweep& s) {
  const ReindexReport& r = s.report;
  if (r.target_revision.empty()) {
    std::cout << r.kb << ": no embedder configured; keyword and grep only\n";
    return;
  }
  std::cout << r.kb << ": " << r.documents << " documents embedded (" << r.chunks
            << " chunks: " << r.chunks_embedded << " by the provider in " << r.provider_calls
            << " calls, " << r.chunks_cached << " from the cache), " << r.failed << " failed, "
            << r.pending << " pending";
  if (r.orphans) std::cout << ", " << r.orphans << " deleted documents' vectors dropped";
  std::cout << "  (" << static_cast<long>(r.took_ms) << " ms)\n";
  if (r.cut_over) std::cout << "  revision " << r.serving_revision << " now serves\n";
  if (r.cancelled)
    std::cout << "  " << (s.stop_signal == SIGTERM ? "terminated" : "interrupted")
              << ": the documents above are committed; run `quarry reindex` again to resume\n";
  if (!r.error_code.empty())
    std::cout << "  stopped: [" << r.error_code << "] " << r.error_message
              << "\n  the pending work is kept; run `quarry reindex` again later\n";
}

int reindex_exit_status(const Sweep& s) {
  const ReindexReport& r = s.report;
  if (r.cancelled) return s.stop_signal ? 128 + s.stop_signal : exit_status(Code::cancelled);
  if (!r.error_code.empty()) return exit_status(code_from_name(r.error_code));
  return 0;
}

void add_reindex_command(CLI::App& app, Globals& g, int& exit_code) {
  struct Args {
    std::string kb;
    int workers = 0;
    double duty = kCliIndexDuty;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "reindex", "Embed every document whose vectors are pending (resumable; Ctrl-C stops)");
  cmd->add_option("--kb", a->kb, "Only this knowledge base (default: all)");
  cmd->add_option("--workers", a->workers, "Provider calls in flight (default: automatic)")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--index-duty", a->duty,
                  "Share of the time the sweep works while searches run on the same data "
                  "directory, e.g. a server's (1: no pacing; it never rests otherwise)")
      ->check(CLI::Range(0.05, 1.0));
  cmd->callback([&g, &exit_code, a] {
    auto engine = open_engine(g);
    std::vector<std::string> kbs;
    if (!a->kb.empty())
      kbs.push_back(a->kb);
    else
      for (const auto& k : engine->list_kbs()) kbs.push_back(k.name);
    json all = json::array();
    Interruption interruption;  // one for every KB's sweep: a signal between two stops both
    for (const auto& kb : kbs) {
      auto s = run_reindex(*engine, kb, g.json, a->workers, a->duty);
      if (g.json)
        all.push_back(to_json(s.report));
      else
        print_reindex_human(s);
      if (int st = reindex_exit_status(s)) exit_code = st;
      if (s.report.cancelled) break;
    }
    if (g.json) print_json({{"reindex", all}});
  });
}

}  // namespace quarry::cli
