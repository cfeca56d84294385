#include "lifecycle/foreground.h"

#include <algorithm>
#include <thread>

namespace quarry::lifecycle::foreground {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> running{0};
std::atomic<std::int64_t> last_end{0};  // Clock ticks; 0: never

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

}  // namespace quarry::lifecycle::foreground
