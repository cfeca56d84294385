// quarry ingest PATH... --kb NAME. Each file's line is printed as it is committed; Ctrl-C (or
// SIGTERM) stops after the document in hand with the summary, and running it again resumes.
#include <iostream>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "wire/requests.h"

namespace quarry::cli {
using nlohmann::json;

void add_ingest_command(CLI::App& app, Globals& g, int& exit_code) {
  struct Args {
    std::vector<std::string> paths;
    std::string kb, metadata;
    std::vector<std::string> include, exclude;
    bool replace = false, quiet = false, wait = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("ingest", "Convert files or folders to Markdown, chunk and index them");
  cmd->add_option("paths", a->paths, "Files or directories (directories are walked recursively)")
      ->required();
  cmd->add_option("--kb", a->kb, "Knowledge base")->required();
  cmd->add_flag("--replace", a->replace,
                "Update documents whose content changed under the same name");
  cmd->add_option("--include", a->include, "Only paths matching this glob (repeatable)");
  cmd->add_option("--exclude", a->exclude, "Skip paths matching this glob (repeatable)");
  cmd->add_option("--metadata", a->metadata, "JSON object (or @file) attached to every document");
  cmd->add_flag("--quiet,-q", a->quiet, "Only print the summary");
  cmd->add_flag("--wait", a->wait,
                "Embed the new documents before returning (else they are pending until the next "
                "`quarry reindex` or `quarry serve`)");
  cmd->callback([&g, &exit_code, a] {
    auto engine = open_engine(g);
    // The options as REST and MCP give them, decoded by the same codec.
    json body = {{"replace", a->replace}, {"include", a->include}, {"exclude", a->exclude}};
    if (!a->metadata.empty()) {
      const std::string text = read_arg_or_file(a->metadata);
      body["metadata"] = json::parse(text, nullptr, false);
      if (body["metadata"].is_discarded())
        throw Error(Code::invalid_argument, "--metadata is not valid JSON: " + text,
                    {{"field", "metadata"}});
    }
    IngestOptions o = wire::decode_ingest_options(body);
    ProgressBar bar;
    if (!g.json && stderr_is_tty())
      o.progress = [&bar](const IngestProgress& p) {
        const std::string& c = p.current;
        bar.draw("", p.done, p.total, c.size() > 40 ? "…" + c.substr(c.size() - 39) : c);
      };
    // Text output: each file's line as soon as it is committed, flushed, so that a redirected
    // output holds every committed document even if the process is killed.
    const bool quiet = a->quiet;
    if (!g.json)
      o.on_item = [&bar, quiet](const IngestItem& i) {
        if (quiet && i.status != "failed" && i.warnings.empty()) return;
        bar.clear();
        if (i.status == "failed")
          std::cout << "failed     " << i.path << "  [" << i.code << "] " << i.message << "\n";
        else if (!quiet && i.status != "unchanged")
          std::cout << (i.status == "added" ? "added      " : "updated    ") << i.path << "  ("
                    << i.doc_id << ", " << i.chunks << " chunks)\n";
        for (const auto& w : i.warnings) std::cout << "  warning: " << i.path << ": " << w << "\n";
        std::cout << std::flush;
      };
    Interruption interruption;
    o.cancel = interruption.flag();

    IngestReport total;
    std::size_t paths_not_reached = 0;
    for (std::size_t n = 0; n < a->paths.size(); ++n) {
      const auto& path = a->paths[n];
      if (interruption.requested()) {
        total.cancelled = true;
        paths_not_reached = a->paths.size() - n;
        break;
      }
      IngestReport r;
      try {
        r = engine->ingest_path(a->kb, path, o);
      } catch (const Error& e) {
        // In a batch of several paths, one that cannot be read (missing, refused) is that path's
        // failure, as a file inside a directory is: the others are still ingested. One path
        // alone stays the call's error; an error not about the path (the KB) stops the batch.
        const auto at = e.details().find("path");
        if (a->paths.size() == 1 || at == e.details().end() || at->second != path) throw;
        IngestItem failed;
        failed.path = path;
        failed.status = "failed";
        failed.code = code_name(e.code());
        failed.message = e.message();
        r.failed = 1;
        if (o.on_item) o.on_item(failed);
        r.items.push_back(std::move(failed));
      }
      total.added += r.added;
      total.updated += r.updated;
      total.unchanged += r.unchanged;
      total.failed += r.failed;
      total.bytes += r.bytes;
      total.took_ms += r.took_ms;
      total.not_reached += r.not_reached;
      total.cancelled = total.cancelled || r.cancelled;
      for (auto& i : r.items) total.items.push_back(std::move(i));
    }
    // One file that failed is that file's error; a batch with failures is a partial failure.
    if (total.items.size() == 1 && total.failed == 1) {
      const auto& i = total.items.front();
      exit_code = exit_status(code_from_name(i.code));
    } else if (total.failed > 0) {
      exit_code = kExitPartialFailure;
    }
    if (total.cancelled) exit_code = interruption.exit_status();
    // Keyword indexing has committed; vectors follow now (--wait) or in the next sweep.
    std::optional<Sweep> sweep;
    if (a->wait && !total.cancelled) {
      sweep = run_reindex(*engine, a->kb, g.json);
      if (exit_code == 0) exit_code = reindex_exit_status(*sweep);
    }
    if (g.json) {
      json out = to_json(total);
      if (total.cancelled) {
        out["cancelled"] = true;
        out["not_reached"] = total.not_reached;
        out["paths_not_reached"] = paths_not_reached;
      }
      if (sweep) out["vectors"] = to_json(sweep->report);
      print_json(out);
      return;
    }
    bar.clear();
    std::cout << total.added << " added, " << total.updated << " updated, " << total.unchanged
              << " unchanged, " << total.failed << " failed  (" << total.bytes / 1024 << " KiB in "
              << static_cast<long>(total.took_ms) << " ms)\n";
    if (total.cancelled) {
      std::cout << interruption.name() << ": the documents above are committed";
      if (total.not_reached) std::cout << "; " << total.not_reached << " files not reached";
      if (paths_not_reached)
        std::cout << (total.not_reached ? ", " : "; ") << paths_not_reached << " paths not started";
      std::cout << "\n  run the same command again to resume (committed files come back "
                   "unchanged)\n";
    }
    if (sweep) print_reindex_human(*sweep);
  });
}

}  // namespace quarry::cli
