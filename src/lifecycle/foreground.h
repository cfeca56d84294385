// Foreground activity of this process, so that background sweeps can pace themselves (SPEC §7:
// queries keep their latency while a revision builds). Searches and greps mark themselves; a
// sweep that sees one running, or one within the last moment, rests after each page so that it
// works at most its duty share of the time (ReindexOptions::foreground_duty). The same idea as
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

}  // namespace quarry::lifecycle::foreground
