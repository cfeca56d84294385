// `quarry`: the command-line shell over the library. Exit statuses: 0 ok, the code's status
// for an error (docs/cli.md), 20 when a batch finished with failures.
#include <cstdlib>
#include <functional>
#include <iostream>

#include "cli/commands.h"
#include "quarry/error.h"

namespace {

std::string default_data_dir() {
  if (const char* h = std::getenv("QUARRY_HOME"); h && *h) return h;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.quarry";
  return ".quarry";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace quarry;
  cli::Globals g;
  g.data_dir = default_data_dir();
  int exit_code = 0;

  CLI::App app{"quarry: local-first knowledge-base retrieval (grep, keyword, vector, hybrid)"};
  app.name("quarry");
  app.require_subcommand(1);
  app.set_version_flag("--version", "quarry 0.1.0");
  app.add_option("--data-dir", g.data_dir, "Data directory (default: $QUARRY_HOME or ~/.quarry)");
  app.add_flag("--json", g.json, "Machine-readable JSON output");
  app.add_option("--lock-timeout", g.lock_timeout_ms, "Wait this many ms for another writer")
      ->check(CLI::Range(0, 3600000));

  cli::add_kb_commands(app, g, exit_code);
  cli::add_ingest_command(app, g, exit_code);
  cli::add_docs_commands(app, g, exit_code);
  cli::add_search_commands(app, g, exit_code);
  cli::add_status_command(app, g, exit_code);
  cli::add_model_commands(app, g, exit_code);
  cli::add_secret_commands(app, g, exit_code);
  cli::add_reindex_command(app, g, exit_code);
  cli::add_serve_command(app, g, exit_code);
  cli::add_token_commands(app, g, exit_code);
  cli::add_mcp_command(app, g, exit_code);
  cli::add_pump_commands(app, g, exit_code);
  cli::add_embed_command(app, g, exit_code);
  // Global options (--json, --data-dir, --lock-timeout) are accepted after the command too.
  std::function<void(CLI::App*)> fall = [&fall](CLI::App* a) {
    for (auto* sub : a->get_subcommands({})) {
      sub->fallthrough();
      fall(sub);
    }
  };
  fall(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    Error err(Code::invalid_argument, e.what(), {{"usage", "quarry --help"}});
    if (g.json)
      cli::print_json(cli::error_json(err));
    else
      std::cerr << "error[invalid_argument]: " << e.what() << "\n(run `quarry --help`)\n";
    return exit_status(Code::invalid_argument);
  } catch (const Error& e) {
    if (g.json)
      cli::print_json(cli::error_json(e));
    else
      std::cerr << "error[" << code_name(e.code()) << "]: " << e.message() << "\n";
    return exit_status(e.code());
  } catch (const std::exception& e) {
    Error err(Code::internal, std::string("internal error: ") + e.what());
    if (g.json)
      cli::print_json(cli::error_json(err));
    else
      std::cerr << "error[internal]: " << e.what() << "\n";
    return exit_status(Code::internal);
  }
  return exit_code;
}
