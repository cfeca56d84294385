// Shared CLI plumbing: global options, JSON rendering of the public types, errors, progress.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "quarry/engine.h"
#include "wire/wire.h"

namespace quarry::cli {

struct Globals {
  std::string data_dir;
  bool json = false;
  int lock_timeout_ms = 10000;
};

// Opens the engine for the global options (surface "cli").
std::unique_ptr<Engine> open_engine(const Globals& g);

// Prints `j` (pretty) on stdout.
void print_json(const nlohmann::json& j);

using wire::error_json;

// True when stdout/stderr is a terminal (progress bars, colours).
bool stderr_is_tty();

// A one-line progress bar on stderr ("<prefix>[####......] done/total <suffix>"), redrawn at
// most every 100 ms and erased when done reaches total. Callers draw it only on a terminal.
class ProgressBar {
 public:
  void draw(const std::string& prefix, std::size_t done, std::size_t total,
            const std::string& suffix);
  // Erases the bar (if one is drawn) before a line goes to stdout on the same terminal; the
  // next draw puts it back.
  void clear();

 private:
  std::chrono::steady_clock::time_point last_{};
  bool drawn_ = false;
};

using wire::to_json;
// "vectors: 10/12 documents ready, 2 pending; serving revision ..." (nothing without vectors).
void print_vectors_human(const KbInfo& k);

// The exit status when a batch had failures (documented in docs/cli.md).
constexpr int kExitPartialFailure = 20;

}  // namespace quarry::cli
