// A token-bucket limiter in requests per minute and tokens per minute (SPEC §5), with the clock
// and the sleep injectable so tests check timing without waiting for it.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>

namespace quarry::net {

using Millis = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  virtual void sleep_for(Millis d) = 0;
};

// The real steady clock and std::this_thread::sleep_for.
std::shared_ptr<Clock> system_clock();

// Both buckets start full and hold at most one minute's allowance, so a quiet client may burst
// up to its per-minute limits and is then paced at the steady rate. A limit <= 0 means none.
//
// acquire() reserves first and waits afterwards: the bucket may go negative, and the caller
// sleeps until its share has refilled. Reservations are therefore served in arrival order and a
// later caller waits behind an earlier one instead of starving it.
class RateLimiter {
 public:
  RateLimiter(double requests_per_minute, double tokens_per_minute,
              std::shared_ptr<Clock> clock = system_clock());

  // Blocks until one request costing `tokens` may go. A cost above a full bucket is charged as
  // a full bucket: the request still goes (after waiting for the bucket to fill) rather than
  // never.
  void acquire(std::size_t tokens);

  // The wait acquire(tokens) would impose, with the reservation made; for callers that sleep
  // their own way. acquire() = clock.sleep_for(reserve(tokens)).
  Millis reserve(std::size_t tokens);

  double requests_per_minute() const { return rpm_; }
  double tokens_per_minute() const { return tpm_; }

 private:
  void refill(std::chrono::steady_clock::time_point now);

  double rpm_, tpm_;
  std::shared_ptr<Clock> clock_;
  std::mutex mu_;
  double requests_ = 0, tokens_ = 0;  // current levels; negative while reservations are owed
  std::chrono::steady_clock::time_point last_;
};

}  // namespace quarry::net
