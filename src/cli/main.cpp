// `quarry`: the command-line shell over the library. Exit statuses: 0 ok, the code's status
// for an error (docs/cli.md), 20 when a batch finished with failures.
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "quarry/error.h"

namespace {

std::string default_data_dir() {
  if (const char* h = std::getenv("QUARRY_HOME"); h && *h) return h;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.quarry";
  return ".quarry";
}

// The first word on the command line after `command` (after the program name when empty) that
// is neither an option nor a global option's value: the word a user meant as a command.
std::string first_word_after(int argc, char** argv, const std::string& command) {
  int i = 1;
  if (!command.empty()) {
    while (i < argc && command != argv[i]) ++i;
    ++i;  // past the command itself
  }
  for (; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--data-dir" || a == "--lock-timeout") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] != '-') return std::string(a);
  }
  return {};
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
  cli::add_completion_command(app, g, exit_code);
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
    // The help to read is that of the deepest command the parse reached (`quarry kb create`).
    std::string command = "quarry";
    CLI::App* at = &app;
    while (!at->get_subcommands().empty()) {
      at = at->get_subcommands().front();
      command += " " + at->get_name();
    }
    const std::string usage = command + " --help";
    std::string message = e.what();
    if (const auto& subs = at->get_subcommands({});
        !subs.empty() && at->get_subcommands().empty()) {
      // "A subcommand is required": say which word was not a command, and what the commands are.
      std::string names;
      for (const auto* sub : subs) names += (names.empty() ? "" : ", ") + sub->get_name();
      std::string word = first_word_after(argc, argv, at == &app ? "" : at->get_name());
      message = word.empty()
                    ? "`" + command + "` needs a command: one of " + names
                    : "unknown command '" + word + "' for `" + command + "`: one of " + names;
    }
    Error err(Code::invalid_argument, message, {{"usage", usage}});
    // A parse that failed may not have set the --json flag yet: look for it directly.
    for (int i = 1; i < argc; ++i) g.json = g.json || std::string_view(argv[i]) == "--json";
    if (g.json)
      cli::print_json(cli::error_json(err));
    else
      std::cerr << "error[invalid_argument]: " << message << "\n(run `" << usage << "`)\n";
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
