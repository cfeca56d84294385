// The background embedding scheduler (SPEC §7) for a long-running process (the server): a
// thread with its own Engine on the data directory that reconciles every KB when it starts,
// then sweeps a KB whenever it is poked (after an ingest, an edit, a config change) and at a
// fixed interval, backing off after provider failures. Work it has not done stays pending in
// the catalog, so stopping (or killing) it loses nothing.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "quarry/engine.h"

namespace quarry {

struct IndexerOptions {
  EngineOptions engine;                            // its own Engine (one per thread)
  std::chrono::milliseconds interval{60'000};      // sweep every KB this often
  std::chrono::milliseconds min_backoff{1'000};    // after a failed sweep of a KB...
  std::chrono::milliseconds max_backoff{300'000};  // ...doubling up to this
  int workers = 0;                                 // provider calls in flight (0: auto)
  // Niceness of the indexer's threads (Linux sets it per thread; its workers inherit it):
  // background embedding yields the CPU to queries. 0 leaves it as is.
  int nice = 10;
  // The share of the time a sweep may work while the process answers searches
  // (ReindexOptions::foreground_duty); 1 turns pacing off.
  double foreground_duty = 0.25;
};

// What the indexer knows of one KB.
struct IndexerKbState {
  bool running = false;
  std::optional<ReindexProgress> progress;  // of the sweep running now
  std::optional<ReindexReport> last;        // of the last sweep
  int consecutive_failures = 0;
  std::chrono::system_clock::time_point next_attempt{};  // while backing off
};

class Indexer {
 public:
  // Starts the thread; the first thing it does is reconcile every KB.
  static std::unique_ptr<Indexer> start(const IndexerOptions& options);
  virtual ~Indexer() = default;  // stops: cancels a running sweep and joins

  // Asks for a sweep of `kb` soon (coalesced: many pokes, one sweep).
  virtual void poke(const std::string& kb) = 0;
  // Snapshot per KB, for the status API.
  virtual std::map<std::string, IndexerKbState> state() const = 0;
  // Blocks until no sweep runs or is due (KBs backing off excepted), or `timeout` passes;
  // true when idle.
  virtual bool wait_idle(std::chrono::milliseconds timeout) = 0;
  virtual void stop() = 0;
};

}  // namespace quarry
