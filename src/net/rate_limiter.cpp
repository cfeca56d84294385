#include "net/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace quarry::net {
namespace {

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  void sleep_for(Millis d) override {
    if (d.count() > 0) std::this_thread::sleep_for(d);
  }
};

// Milliseconds until a bucket at `level` (negative: owed) refills to zero at `per_minute`.
double owed_ms(double level, double per_minute) {
  if (per_minute <= 0 || level >= 0) return 0;
  return -level / (per_minute / 60000.0);
}

}  // namespace

std::shared_ptr<Clock> system_clock() {
  static auto clock = std::make_shared<SystemClock>();
  return clock;
}

RateLimiter::RateLimiter(double requests_per_minute, double tokens_per_minute,
                         std::shared_ptr<Clock> clock)
    : rpm_(requests_per_minute), tpm_(tokens_per_minute), clock_(std::move(clock)) {
  requests_ = std::max(0.0, rpm_);
  tokens_ = std::max(0.0, tpm_);
  last_ = clock_->now();
}

void RateLimiter::refill(std::chrono::steady_clock::time_point now) {
  double elapsed_ms = std::chrono::duration<double, std::milli>(now - last_).count();
  if (elapsed_ms <= 0) return;
  last_ = now;
  if (rpm_ > 0) requests_ = std::min(rpm_, requests_ + elapsed_ms * rpm_ / 60000.0);
  if (tpm_ > 0) tokens_ = std::min(tpm_, tokens_ + elapsed_ms * tpm_ / 60000.0);
}

Millis RateLimiter::reserve(std::size_t tokens) {
  std::lock_guard<std::mutex> lk(mu_);
  refill(clock_->now());
  double wait = 0;
  if (rpm_ > 0) {
    requests_ -= 1;
    wait = std::max(wait, owed_ms(requests_, rpm_));
  }
  if (tpm_ > 0) {
    tokens_ -= std::min(static_cast<double>(tokens), tpm_);
    wait = std::max(wait, owed_ms(tokens_, tpm_));
  }
  return Millis(static_cast<Millis::rep>(std::ceil(wait)));
}

void RateLimiter::acquire(std::size_t tokens) {
  Millis wait = reserve(tokens);
  if (wait.count() > 0) clock_->sleep_for(wait);
}

}  // namespace quarry::net
