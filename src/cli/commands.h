#pragma once

#include <CLI/CLI.hpp>

#include "cli/output.h"

namespace quarry::cli {

// Each command group registers its subcommands. A callback sets `exit_code` on partial
// failure; errors are thrown as quarry::Error and rendered by main().
void add_kb_commands(CLI::App& app, Globals& g, int& exit_code);
void add_ingest_command(CLI::App& app, Globals& g, int& exit_code);
void add_docs_commands(CLI::App& app, Globals& g, int& exit_code);
void add_search_commands(CLI::App& app, Globals& g, int& exit_code);
void add_status_command(CLI::App& app, Globals& g, int& exit_code);
void add_model_commands(CLI::App& app, Globals& g, int& exit_code);   // cmd_model.cpp
void add_secret_commands(CLI::App& app, Globals& g, int& exit_code);  // cmd_secret.cpp
void add_reindex_command(CLI::App& app, Globals& g, int& exit_code);  // cmd_reindex.cpp
void add_serve_command(CLI::App& app, Globals& g, int& exit_code);    // cmd_serve.cpp
void add_token_commands(CLI::App& app, Globals& g, int& exit_code);   // cmd_token.cpp
void add_mcp_command(CLI::App& app, Globals& g, int& exit_code);      // cmd_mcp.cpp
void add_pump_commands(CLI::App& app, Globals& g, int& exit_code);    // cmd_pump.cpp
void add_embed_command(CLI::App& app, Globals& g, int& exit_code);    // cmd_embed.cpp
// quarry completion bash|zsh|fish, written from `app`'s own tree: add it after every other command.
void add_completion_command(CLI::App& app, Globals& g, int& exit_code);  // cmd_completion.cpp

// The vector sweep shared by `reindex` and `ingest --wait` (cmd_reindex.cpp): progress bar on
// a terminal, Ctrl-C or SIGTERM cancels cleanly (cli/interrupt.h): exit 130 or 143.
// `duty`: the sweep's share of the time while searches run on the same data directory (a
// server beside this command); it never rests otherwise.
inline constexpr double kCliIndexDuty = 0.25;
struct Sweep {
  ReindexReport report;
  int stop_signal = 0;  // SIGINT or SIGTERM when one cancelled it
};
Sweep run_reindex(Engine& engine, const std::string& kb, bool json_out, int workers = 0,
                  double duty = kCliIndexDuty);
void print_reindex_human(const Sweep& s);
int reindex_exit_status(const Sweep& s);

// Reads a value given as literal text, "@path" (a file) or "-" (stdin).
std::string read_arg_or_file(const std::string& v);

}  // namespace quarry::cli
