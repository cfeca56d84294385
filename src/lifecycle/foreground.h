// Foreground activity of this process, so that background sweeps can pace themselves (SPEC §7:
// queries keep their latency while a revision builds). Searches and greps mark themselves; a
// sweep that sees one running, or one within the last moment, cuts its work into small pieces
// and rests between them so that it works at most its duty share of the time
// (ReindexOptions::foreground_duty, foreground::Pacer). The same idea as
// PostgreSQL's cost-based vacuum delay: background work yields to the queries, on any machine,
// at the price of a slower sweep while queries arrive.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace quarry::lifecycle::foreground {

// Marks a query for its lifetime.
class Query {
 public:
  Query();
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
};

// True while a query runs, or when one ended less than `window` ago.
bool busy(std::chrono::milliseconds window);

// Rests for `seconds` (at most 2 s), in short steps that end early when `cancel` is set.
// Returns the seconds rested.
double rest(double seconds, const std::atomic<bool>* cancel);

// Paces one thread of background work: call step() between small pieces of it (a document
// read, a chunk embedded, a page committed). While this process answers
// queries, each stretch of work of at least a quantum (0.2 ms) is followed by a rest that makes
// the thread's share of the time `duty`. Fine steps spread the work thinly: every query
// overlaps a sliver of it, instead of one query in 1/duty overlapping a whole page of it, which
// is what set the p99 (docs/benchmarks.md). duty outside (0, 1): never rests.
class Pacer {
 public:
  Pacer(double duty, const std::atomic<bool>* cancel);
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;
  // Pacing is on and a query runs or ran in the last 100 ms: the caller should cut its work
  // into small pieces.
  bool active() const;
  void step();
  double rested_s() const { return rested_; }

 private:
  double duty_;
  const std::atomic<bool>* cancel_;
  std::chrono::steady_clock::time_point since_;  // start of the current stretch of work
  double rested_ = 0;
  double owed_ = 0;  // seconds of rest due (negative: rested more than due)
};

}  // namespace quarry::lifecycle::foreground
