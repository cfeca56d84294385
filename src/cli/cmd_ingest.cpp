// quarry ingest PATH... --kb NAME
#include <iostream>

#include "cli/commands.h"
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

    IngestReport total;
    for (const auto& path : a->paths) {
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
        r.items.push_back(std::move(failed));
      }
      total.added += r.added;
      total.updated += r.updated;
      total.unchanged += r.unchanged;
      total.failed += r.failed;
      total.bytes += r.bytes;
      total.took_ms += r.took_ms;
      for (auto& i : r.items) total.items.push_back(std::move(i));
    }
    // One file that failed is that file's error; a batch with failures is a partial failure.
    if (total.items.size() == 1 && total.failed == 1) {
      const auto& i = total.items.front();
      exit_code = exit_status(code_from_name(i.code));
    } else if (total.failed > 0) {
      exit_code = kExitPartialFailure;
    }
    // Keyword indexing has committed; vectors follow now (--wait) or in the next sweep.
    std::optional<ReindexReport> sweep;
    if (a->wait) {
      sweep = run_reindex(*engine, a->kb, g.json);
      if (exit_code == 0) exit_code = reindex_exit_status(*sweep);
    }
    if (g.json) {
      json out = to_json(total);
      if (sweep) out["vectors"] = to_json(*sweep);
      print_json(out);
      return;
    }
    for (const auto& i : total.items) {
      if (i.status == "failed")
        std::cout << "failed     " << i.path << "  [" << i.code << "] " << i.message << "\n";
      else if (!a->quiet && i.status != "unchanged")
        std::cout << (i.status == "added" ? "added      " : "updated    ") << i.path << "  ("
                  << i.doc_id << ", " << i.chunks << " chunks)\n";
      for (const auto& w : i.warnings) std::cout << "  warning: " << i.path << ": " << w << "\n";
    }
    std::cout << total.added << " added, " << total.updated << " updated, " << total.unchanged
              << " unchanged, " << total.failed << " failed  (" << total.bytes / 1024 << " KiB in "
              << static_cast<long>(total.took_ms) << " ms)\n";
    if (sweep) print_reindex_human(*sweep);
  });
}

}  // namespace quarry::cli
