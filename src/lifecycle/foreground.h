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
#include <memory>
#include <string>

namespace quarry::lifecycle::foreground {

// The searches of every process on one data directory, through a small shared file
// (<data_dir>/activity, memory-mapped): each search stamps it when it starts and when it ends,
// and a sweep in another process (a `quarry reindex` beside a server) reads the latest stamp.
// Only the time is shared, never a count, so a process killed mid-search leaves nothing stuck;
// the price is that a search running longer than the window, with no other search starting or
// ending meanwhile, is not seen after the window.
class Shared {
 public:
  ~Shared();
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  void stamp();               // now
  std::int64_t last() const;  // steady-clock ticks of the latest stamp (0: never)

 private:
  friend std::shared_ptr<Shared> shared(const std::string& data_dir);
  Shared(int fd, void* map) : fd_(fd), map_(map) {}
  int fd_;
  void* map_;
};

// The data directory's shared stamp, mapped once per process; null when the file cannot be
// made (a read-only directory): then only this process's searches are seen.
std::shared_ptr<Shared> shared(const std::string& data_dir);

// Marks a query for its lifetime (and stamps `s`, if given, as it starts and ends).
class Query {
 public:
  explicit Query(Shared* s = nullptr);
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

 private:
  Shared* shared_;
};

// True while a query of this process runs, or when one ended less than `window` ago, or when
// `s` was stamped (by any process) less than `window` ago.
bool busy(std::chrono::milliseconds window, const Shared* s = nullptr);

// Rests for `seconds` (at most 2 s), in short steps that end early when `cancel` is set.
// Returns the seconds rested.
double rest(double seconds, const std::atomic<bool>* cancel);

// Paces one thread of background work: call step() between small pieces of it (a document
// read, a chunk embedded, a page committed). While this process (or, with `shared`, any
// process on the same data directory) answers queries, each stretch of work of at least a
// quantum (0.2 ms) is followed by a rest that makes the thread's share of the time `duty`.
// Fine steps spread the work thinly: every query overlaps a sliver of it, instead of one query
// in 1/duty overlapping a whole page of it, which is what set the p99 (docs/benchmarks.md).
// duty outside (0, 1): never rests.
class Pacer {
 public:
  Pacer(double duty, const std::atomic<bool>* cancel, std::shared_ptr<const Shared> shared = {});
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;
  // Pacing is on and a query runs or ran in the last 100 ms: the caller should cut its work
  // into small pieces.
  bool active() const;
  void step();
  double rested_s() const { return rested_; }
  const std::shared_ptr<const Shared>& shared() const { return shared_; }

 private:
  double duty_;
  const std::atomic<bool>* cancel_;
  std::shared_ptr<const Shared> shared_;
  std::chrono::steady_clock::time_point since_;  // start of the current stretch of work
  double rested_ = 0;
  double owed_ = 0;  // seconds of rest due (negative: rested more than due)
};

}  // namespace quarry::lifecycle::foreground
