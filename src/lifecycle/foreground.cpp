#include "lifecycle/foreground.h"

#include <algorithm>
#include <thread>

namespace quarry::lifecycle::foreground {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> running{0};
std::atomic<std::int64_t> last_end{0};  // Clock ticks; 0: never

constexpr std::chrono::milliseconds kWindow{100};  // a query this recent still counts
constexpr double kQuantum = 0.0002;                // seconds of work between rests

std::int64_t now_ticks() {
  return Clock::now().time_since_epoch().count();
}

}  // namespace

Query::Query() {
  running.fetch_add(1, std::memory_order_relaxed);
}

Query::~Query() {
  last_end.store(now_ticks(), std::memory_order_relaxed);
  running.fetch_sub(1, std::memory_order_relaxed);
}

bool busy(std::chrono::milliseconds window) {
  if (running.load(std::memory_order_relaxed) > 0) return true;
  const std::int64_t end = last_end.load(std::memory_order_relaxed);
  return end != 0 &&
         now_ticks() - end < std::chrono::duration_cast<Clock::duration>(window).count();
}

double rest(double seconds, const std::atomic<bool>* cancel) {
  const auto start = Clock::now();
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(std::min(seconds, 2.0)));
  while (Clock::now() < until && !(cancel && cancel->load())) {
    const auto step =
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(10));
    std::this_thread::sleep_for(step);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Pacer::Pacer(double duty, const std::atomic<bool>* cancel)
    : duty_(duty), cancel_(cancel), since_(Clock::now()) {}

bool Pacer::active() const {
  return duty_ > 0 && duty_ < 1 && busy(kWindow);
}

void Pacer::step() {
  if (!(duty_ > 0 && duty_ < 1)) return;
  const auto now = Clock::now();
  const double work = std::chrono::duration<double>(now - since_).count();
  if (work < kQuantum) return;
  if (busy(kWindow)) {
    // A sleep this short overshoots (the wake-up, on a VM the host's): the excess is credited
    // against the next rests, so that the share of the time stays `duty`.
    owed_ += work * (1 / duty_ - 1);
    if (owed_ > 0) {
      const double r = rest(owed_, cancel_);
      rested_ += r;
      owed_ -= r;
    }
  } else {
    owed_ = 0;
  }
  since_ = Clock::now();
}

}  // namespace quarry::lifecycle::foreground
