// The server's pump triggers (SPEC §8): a thread that, about once a second or when poked,
// fires cron schedules (minutes that passed since the last look, UTC; none for the time the
// server was down) and starts every use case with a queued run that is due — deploys, events,
// re-pokes after the 20-batch cap and retries backing off — on a few worker threads. A use case
// runs once at a time (the catalog lease); a trigger during its run queues the next one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pump/source.h"

namespace quarry::pump {

class ProviderCache;
}  // namespace quarry::pump
namespace quarry::catalog {
class Catalog;
}  // namespace quarry::catalog

namespace quarry::pump {

struct SchedulerOptions {
  std::string data_dir;  // where catalog.db is
  SecretLookup secret;
  std::shared_ptr<ProviderCache> providers;  // shared with the REST handlers
  int workers = 2;                           // use cases run at once
  int tick_ms = 1000;
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions o);
  ~Scheduler();  // stop()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Look now (after a trigger arrived), not at the next tick.
  void poke();
  // Ends running use cases after their batch in hand (each queues its next run) and joins.
  void stop();
  // Runs started and finished since the start (for tests and /metrics).
  std::int64_t runs_finished() const { return finished_.load(); }

 private:
  void loop();
  void work();
  void look(std::int64_t now);

  SchedulerOptions o_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> finished_{0};
  std::mutex mu_;
  std::condition_variable wake_, work_cv_;
  bool poked_ = false;
  std::deque<std::string> queue_;
  std::set<std::string> busy_;  // queued or running here
  std::int64_t cron_from_ = 0;
  std::unique_ptr<catalog::Catalog> cat_;  // the loop thread's connection
  std::thread thread_;
  std::vector<std::thread> workers_;
};

}  // namespace quarry::pump
