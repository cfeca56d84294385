#include <gtest/gtest.h>

#include <deque>

#include "fakes.h"
#include "net/rate_limiter.h"
#include "net/retry.h"
#include "quarry/error.h"

namespace quarry::net {
namespace {

using testing::FakeClock;
using testing::RecordingSleeper;

TEST(RateLimiter, BurstsUpToAMinutesRequestsThenPaces) {
  auto clock = std::make_shared<FakeClock>();
  RateLimiter lim(60, 0, clock);  // one request per second
  for (int i = 0; i < 60; ++i) lim.acquire(1);
  EXPECT_EQ(clock->slept().count(), 0);
  lim.acquire(1);
  EXPECT_EQ(clock->slept().count(), 1000);
  lim.acquire(1);
  EXPECT_EQ(clock->slept().count(), 2000);
}

TEST(RateLimiter, TokensPerMinuteLimitsByCost) {
  auto clock = std::make_shared<FakeClock>();
  RateLimiter lim(0, 600, clock);  // 10 tokens per second
  lim.acquire(300);
  lim.acquire(300);
  EXPECT_EQ(clock->slept().count(), 0);
  lim.acquire(300);  // 300 tokens owed at 10/s
  EXPECT_EQ(clock->slept().count(), 30000);
}

TEST(RateLimiter, RefillsWithElapsedTimeAndCapsAtOneMinute) {
  auto clock = std::make_shared<FakeClock>();
  RateLimiter lim(0, 600, clock);
  lim.acquire(600);
  clock->advance(Millis(3600000));  // an idle hour refills one minute's worth, not sixty
  lim.acquire(600);
  EXPECT_EQ(clock->slept().count(), 0);
  lim.acquire(60);
  EXPECT_EQ(clock->slept().count(), 6000);
}

TEST(RateLimiter, ACostAboveTheBucketStillGoes) {
  auto clock = std::make_shared<FakeClock>();
  RateLimiter lim(0, 100, clock);
  lim.acquire(100000);  // charged as a full bucket
  EXPECT_EQ(clock->slept().count(), 0);
  lim.acquire(50);
  EXPECT_EQ(clock->slept().count(), 30000);
}

TEST(RateLimiter, ReservationsQueueInArrivalOrder) {
  auto clock = std::make_shared<FakeClock>();
  RateLimiter lim(60, 0, clock);
  for (int i = 0; i < 60; ++i) lim.reserve(1);
  // Without anyone sleeping yet, each later caller is told to wait one interval longer.
  EXPECT_EQ(lim.reserve(1).count(), 1000);
  EXPECT_EQ(lim.reserve(1).count(), 2000);
  EXPECT_EQ(lim.reserve(1).count(), 3000);
}

TEST(RateLimiter, BothLimitsApplyTheStricterWins) {
  auto clock = std::make_shared<FakeClock>();
  RateLimiter lim(6000, 60, clock);  // requests plentiful, one token per second
  lim.acquire(60);
  lim.acquire(5);
  EXPECT_EQ(clock->slept().count(), 5000);
}

HttpResponse status(long s, std::map<std::string, std::string> h = {}) {
  HttpResponse r;
  r.status = s;
  r.headers = std::move(h);
  return r;
}

struct Scripted {
  std::deque<HttpResponse> replies;
  int calls = 0;
  HttpResponse operator()() {
    ++calls;
    HttpResponse r = replies.front();
    if (replies.size() > 1) replies.pop_front();
    return r;
  }
};

RetryPolicy policy(RecordingSleeper s, int retries = 5, double jitter = 0.5) {
  return RetryPolicy(RetryOptions{retries, Millis(100), Millis(1000), Millis(60000)}, s,
                     [jitter] { return jitter; });
}

TEST(RetryPolicy, NeverRetriesClientErrors) {
  for (long st : {400L, 401L, 403L, 404L, 422L}) {
    RecordingSleeper sleeper;
    Scripted s{{status(st)}};
    auto out = policy(sleeper).run(std::ref(s));
    EXPECT_EQ(s.calls, 1) << st;
    EXPECT_EQ(out.response.status, st);
    EXPECT_TRUE(sleeper.delays->empty());
  }
}

TEST(RetryPolicy, RetriesServerErrorsWithExponentialFullJitter) {
  RecordingSleeper sleeper;
  Scripted s{{status(500), status(502), status(503), status(504), status(200)}};
  auto out = policy(sleeper, 5, 0.5).run(std::ref(s));
  EXPECT_EQ(out.response.status, 200);
  EXPECT_EQ(s.calls, 5);
  // Ceilings 100, 200, 400, 800 ms; jitter 0.5 takes half of each.
  std::vector<Millis> want = {Millis(50), Millis(100), Millis(200), Millis(400)};
  EXPECT_EQ(*sleeper.delays, want);
}

TEST(RetryPolicy, BackoffIsCappedAtMaxDelay) {
  RecordingSleeper sleeper;
  auto p = policy(sleeper, 5, 0.999);
  EXPECT_LE(p.backoff(10).count(), 1000);
  EXPECT_GE(p.backoff(10).count(), 990);
  EXPECT_EQ(policy(sleeper, 5, 0.0).backoff(3).count(), 0);  // full jitter reaches zero
}

TEST(RetryPolicy, GivesUpAfterMaxRetriesAndReturnsTheLastResponse) {
  RecordingSleeper sleeper;
  Scripted s{{status(503)}};
  auto out = policy(sleeper, 2).run(std::ref(s));
  EXPECT_EQ(s.calls, 3);
  EXPECT_EQ(out.attempts, 3);
  EXPECT_EQ(out.response.status, 503);
}

TEST(RetryPolicy, HonoursRetryAfterSeconds) {
  RecordingSleeper sleeper;
  Scripted s{{status(429, {{"retry-after", "7"}}), status(200)}};
  auto out = policy(sleeper).run(std::ref(s));
  EXPECT_EQ(out.response.status, 200);
  ASSERT_EQ(sleeper.delays->size(), 1u);
  EXPECT_EQ((*sleeper.delays)[0], Millis(7000));
}

TEST(RetryPolicy, HonoursRetryAfterHttpDate) {
  RecordingSleeper sleeper;
  auto now = std::chrono::system_clock::from_time_t(1445412480);  // 2015-10-21 07:28:00 UTC
  RetryPolicy p(
      RetryOptions{3, Millis(100), Millis(1000), Millis(60000)}, sleeper, [] { return 0.5; },
      [now] { return now; });
  Scripted s{{status(503, {{"retry-after", "Wed, 21 Oct 2015 07:28:30 GMT"}}), status(200)}};
  p.run(std::ref(s));
  ASSERT_EQ(sleeper.delays->size(), 1u);
  EXPECT_EQ((*sleeper.delays)[0], Millis(30000));
}

TEST(RetryPolicy, ParsesRetryAfterForms) {
  auto now = std::chrono::system_clock::from_time_t(1445412480);
  EXPECT_EQ(parse_retry_after(" 12 ", now), Millis(12000));
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:29:00 GMT", now), Millis(60000));
  EXPECT_EQ(parse_retry_after("Wednesday, 21-Oct-15 07:29:00 GMT", now), Millis(60000));
  EXPECT_EQ(parse_retry_after("Wed Oct 21 07:29:00 2015", now), Millis(60000));
  EXPECT_EQ(parse_retry_after("Tue, 20 Oct 2015 07:28:00 GMT", now), Millis(0));  // past
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("", now), std::nullopt);
}

TEST(RetryPolicy, StopsWhenRetryAfterIsLongerThanItWaits) {
  RecordingSleeper sleeper;
  Scripted s{{status(429, {{"retry-after", "3600"}})}};
  auto out = policy(sleeper).run(std::ref(s));
  EXPECT_EQ(s.calls, 1);
  EXPECT_TRUE(out.gave_up_on_retry_after);
  EXPECT_EQ(out.retry_after, Millis(3600000));
}

TEST(RetryPolicy, RetriesTransportErrorsButNotOthers) {
  RecordingSleeper sleeper;
  int calls = 0;
  auto flaky = [&]() -> HttpResponse {
    if (++calls < 3) throw Error(Code::timeout, "slow", {{"transport", "1"}});
    return status(200);
  };
  EXPECT_EQ(policy(sleeper).run(flaky).response.status, 200);
  EXPECT_EQ(calls, 3);

  calls = 0;
  auto blocked = [&]() -> HttpResponse {
    ++calls;
    throw Error(Code::blocked_address, "no");
  };
  EXPECT_THROW(policy(sleeper).run(blocked), Error);
  EXPECT_EQ(calls, 1);

  calls = 0;
  auto down = [&]() -> HttpResponse {
    ++calls;
    throw Error(Code::engine_unavailable, "refused", {{"transport", "1"}});
  };
  EXPECT_THROW(policy(sleeper, 2).run(down), Error);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace quarry::net
