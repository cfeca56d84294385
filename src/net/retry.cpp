#include "net/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <random>
#include <thread>

#include "quarry/error.h"

namespace quarry::net {
namespace {

double default_jitter() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

bool is_transport_error(const Error& e) {
  return e.details().count("transport") > 0;
}

}  // namespace

bool is_retryable_status(long status) {
  if (status == 408 || status == 425 || status == 429) return true;
  return status >= 500 && status <= 599 && status != 501 && status != 505;
}

std::optional<Millis> parse_retry_after(const std::string& raw,
                                        std::chrono::system_clock::time_point now) {
  std::string v = raw;
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  v.erase(v.begin(), std::find_if(v.begin(), v.end(), not_space));
  v.erase(std::find_if(v.rbegin(), v.rend(), not_space).base(), v.end());
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), ::isdigit)) {
    if (v.size() > 9) return Millis(999999999LL * 1000);  // absurd, but still "wait"
    return Millis(std::stoll(v) * 1000);
  }
  // HTTP-date: the IMF-fixdate form and the two obsolete ones RFC 9110 still asks us to accept.
  for (const char* fmt :
       {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %d %H:%M:%S %Y"}) {
    std::tm tm{};
    const char* end = strptime(v.c_str(), fmt, &tm);
    if (!end || *end != '\0') continue;
    auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
    auto d = std::chrono::duration_cast<Millis>(when - now);
    return std::max(d, Millis(0));
  }
  return std::nullopt;
}

RetryPolicy::RetryPolicy(RetryOptions opts, Sleeper sleep, Jitter jitter, WallClock wall)
    : opts_(opts), sleep_(std::move(sleep)), jitter_(std::move(jitter)), wall_(std::move(wall)) {
  if (!sleep_)
    sleep_ = [](Millis d) {
      if (d.count() > 0) std::this_thread::sleep_for(d);
    };
  if (!jitter_) jitter_ = default_jitter;
  if (!wall_) wall_ = [] { return std::chrono::system_clock::now(); };
}

Millis RetryPolicy::backoff(int retry) const {
  // base * 2^retry, computed in double so a large retry count saturates instead of overflowing.
  double ceiling = static_cast<double>(opts_.base_delay.count()) * std::pow(2.0, retry);
  ceiling = std::min(ceiling, static_cast<double>(opts_.max_delay.count()));
  double r = std::clamp(jitter_(), 0.0, 1.0);
  return Millis(static_cast<Millis::rep>(ceiling * r));
}

RetryOutcome RetryPolicy::run(const std::function<HttpResponse()>& attempt) const {
  RetryOutcome out;
  for (int retry = 0;; ++retry) {
    ++out.attempts;
    bool last = retry >= opts_.max_retries;
    try {
      out.response = attempt();
    } catch (const Error& e) {
      if (!is_transport_error(e) || last) throw;
      sleep_(backoff(retry));
      continue;
    }
    if (!is_retryable_status(out.response.status) || last) return out;
    Millis delay = backoff(retry);
    if (auto ra = parse_retry_after(out.response.header("retry-after"), wall_())) {
      out.retry_after = *ra;
      if (*ra > opts_.max_retry_after) {
        out.gave_up_on_retry_after = true;
        return out;
      }
      delay = *ra;  // the server knows when it will have room; jitter would only guess worse
    }
    sleep_(delay);
  }
}

}  // namespace quarry::net
