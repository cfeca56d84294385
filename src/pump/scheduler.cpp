#include "pump/scheduler.h"

#include <chrono>
#include <cstdio>

#include "catalog/catalog.h"
#include "core/layout.h"
#include "core/util.h"
#include "pump/pump.h"
#include "quarry/error.h"

namespace quarry::pump {

Scheduler::Scheduler(SchedulerOptions o) : o_(std::move(o)) {
  if (!o_.providers) o_.providers = std::make_shared<ProviderCache>(o_.data_dir, o_.secret);
  cron_from_ = core::now_ms();
  for (int i = 0; i < std::max(1, o_.workers); ++i) workers_.emplace_back([this] { work(); });
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() {
  stop();
}

void Scheduler::poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  wake_.notify_one();
}

void Scheduler::stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_.exchange(true) && !thread_.joinable()) return;
  }
  wake_.notify_all();
  work_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
}

void Scheduler::loop() {
  std::string last_problem;
  while (!stop_.load()) {
    try {
      look(core::now_ms());
      last_problem.clear();
    } catch (const std::exception& e) {  // the catalog busy or gone: try again next tick
      cat_.reset();
      if (e.what() != last_problem)  // once, not every second
        std::fprintf(stderr, "quarry: pump scheduler: %s\n", e.what());
      last_problem = e.what();
    }
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, std::chrono::milliseconds(o_.tick_ms),
                   [this] { return poked_ || stop_.load(); });
    poked_ = false;
  }
}

void Scheduler::look(std::int64_t now) {
  if (!cat_) cat_ = catalog::Catalog::open(core::Layout{o_.data_dir}.catalog_path());
  Pump pump(o_.data_dir, *cat_, o_.secret, o_.providers);
  pump.cron_tick(cron_from_, now);
  cron_from_ = now;
  const auto due = pump.due(now);
  {
    std::lock_guard lock(mu_);
    for (const auto& name : due)
      if (busy_.insert(name).second) queue_.push_back(name);
  }
  work_cv_.notify_all();
}

void Scheduler::work() {
  while (true) {
    std::string name;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [this] { return stop_.load() || !queue_.empty(); });
      if (stop_.load()) return;
      name = queue_.front();
      queue_.pop_front();
    }
    try {
      auto cat = catalog::Catalog::open(core::Layout{o_.data_dir}.catalog_path());
      Pump pump(o_.data_dir, *cat, o_.secret, o_.providers);
      pump.run(name, &stop_);
    } catch (const Error&) {
      // Recorded on the use case (last_error, attempts, backoff or park); not_found: removed
      // by a deploy meanwhile.
    } catch (const std::exception& e) {
      std::fprintf(stderr, "quarry: pump run of %s: %s\n", name.c_str(), e.what());
    }
    ++finished_;
    {
      std::lock_guard lock(mu_);
      busy_.erase(name);
      poked_ = true;  // a re-poke (not drained) or a trigger that came during the run
    }
    wake_.notify_one();
  }
}

}  // namespace quarry::pump
