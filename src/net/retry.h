// When and how long to retry an outbound call (SPEC §5): exponential backoff with full jitter,
// Retry-After honoured, 429/5xx and transport failures retried, client errors never.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "net/http_client.h"
#include "net/rate_limiter.h"

namespace quarry::net {

struct RetryOptions {
  int max_retries = 5;     // attempts = max_retries + 1
  Millis base_delay{500};  // backoff ceiling for retry n is min(max, base * 2^n)
  Millis max_delay{30000};
  // A Retry-After longer than this is not waited out: the call fails (rate_limited) with the
  // server's wait in the details, so a request is not held hostage for an hour.
  Millis max_retry_after{120000};
};

// Statuses worth another attempt: 408, 425, 429 and every 5xx except 501/505 (which will not
// change). 400/401/403/404/422 and other 4xx mean the request itself is wrong.
bool is_retryable_status(long status);

// A Retry-After value: delta-seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT"),
// relative to `now`. nullopt when absent or unparsable; a date in the past is zero.
std::optional<Millis> parse_retry_after(const std::string& value,
                                        std::chrono::system_clock::time_point now);

struct RetryOutcome {
  HttpResponse response;  // the last response (retryable or not); status 0 if none
  int attempts = 0;
  bool gave_up_on_retry_after = false;  // stopped because Retry-After exceeded max_retry_after
  Millis retry_after{0};                // the last Retry-After seen, if any
};

class RetryPolicy {
 public:
  using Sleeper = std::function<void(Millis)>;
  using Jitter = std::function<double()>;  // uniform in [0, 1)
  using WallClock = std::function<std::chrono::system_clock::time_point()>;

  explicit RetryPolicy(RetryOptions opts = {}, Sleeper sleep = {}, Jitter jitter = {},
                       WallClock wall = {});

  // The full-jitter delay before retry number `retry` (0-based): uniform [0, ceiling).
  Millis backoff(int retry) const;

  // Calls `attempt` until it returns a non-retryable response or retries run out. A thrown
  // quarry::Error with details["transport"] (timeout, unreachable) is retried likewise and
  // rethrown when retries run out; any other exception propagates at once.
  RetryOutcome run(const std::function<HttpResponse()>& attempt) const;

  const RetryOptions& options() const { return opts_; }

 private:
  RetryOptions opts_;
  Sleeper sleep_;
  Jitter jitter_;
  WallClock wall_;
};

}  // namespace quarry::net
