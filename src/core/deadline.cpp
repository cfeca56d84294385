// include/quarry/deadline.h: the calling thread's deadline. The hot check reads two trivially
// constructed thread-locals (no TLS initialisation guard), so a thread without a scope pays one
// load and a branch; the message parts live apart and are read only to throw or to hand over.
#include "quarry/deadline.h"

#include <string>

#include "quarry/error.h"

namespace quarry {
namespace {

using Clock = std::chrono::steady_clock;

thread_local bool tl_active = false;
thread_local Clock::time_point tl_at{};
thread_local std::chrono::milliseconds tl_budget{0};

std::string& tl_what() {
  thread_local std::string what;
  return what;
}

std::string& tl_raise() {
  thread_local std::string raise;
  return raise;
}

void install(const Deadline& d) {
  tl_active = d.active;
  tl_at = d.at;
  tl_budget = d.budget;
  tl_what() = d.what;
  tl_raise() = d.raise;
}

}  // namespace

Deadline current_deadline() {
  Deadline d;
  if (!tl_active) return d;
  d.active = true;
  d.at = tl_at;
  d.budget = tl_budget;
  d.what = tl_what();
  d.raise = tl_raise();
  return d;
}

ScopedDeadline::ScopedDeadline(std::chrono::milliseconds budget, std::string what,
                               std::string raise)
    : saved_(current_deadline()) {
  Deadline d;
  d.active = true;
  d.at = Clock::now() + budget;
  d.budget = budget;
  d.what = what.empty() ? "this request" : std::move(what);
  d.raise = std::move(raise);
  // The earliest deadline wins: an inner scope never extends the outer one.
  if (!saved_.active || d.at < saved_.at) install(d);
}

ScopedDeadline::ScopedDeadline(const Deadline& inherited) : saved_(current_deadline()) {
  if (inherited.active && (!saved_.active || inherited.at < saved_.at)) install(inherited);
}

ScopedDeadline::~ScopedDeadline() {
  install(saved_);
}

bool deadline_passed() noexcept {
  return tl_active && Clock::now() >= tl_at;
}

void check_deadline() {
  if (!deadline_passed()) return;
  const std::string ms = std::to_string(tl_budget.count());
  throw Error(Code::timeout,
              tl_what() + " took longer than its limit of " + ms +
                  " ms; narrow the query or the filter (fewer conditions, a more selective "
                  "filter, a smaller top_k or max_matches), or raise " +
                  tl_raise(),
              {{"limit_ms", ms}});
}

}  // namespace quarry
