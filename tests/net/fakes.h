// Injected time for the net tests: a clock that only moves when someone sleeps on it, and a
// sleeper that records the delays a retry policy asked for instead of waiting them out.
#pragma once

#include <mutex>
#include <vector>

#include "net/rate_limiter.h"

namespace quarry::testing {

class FakeClock : public net::Clock {
 public:
  std::chrono::steady_clock::time_point now() override {
    std::lock_guard<std::mutex> lk(mu_);
    return t_;
  }
  void sleep_for(net::Millis d) override {
    std::lock_guard<std::mutex> lk(mu_);
    t_ += d;
    slept_ += d;
  }
  void advance(net::Millis d) {
    std::lock_guard<std::mutex> lk(mu_);
    t_ += d;
  }
  net::Millis slept() {
    std::lock_guard<std::mutex> lk(mu_);
    return slept_;
  }

 private:
  std::mutex mu_;
  std::chrono::steady_clock::time_point t_{};
  net::Millis slept_{0};
};

struct RecordingSleeper {
  std::shared_ptr<std::vector<net::Millis>> delays = std::make_shared<std::vector<net::Millis>>();
  void operator()(net::Millis d) const { delays->push_back(d); }
};

}  // namespace quarry::testing
