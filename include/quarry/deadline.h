// Request deadlines: a time budget for the work one thread does for one caller, so that a
// hostile or unlucky request (a huge filter, a pattern over a big KB) ends with a clear error
// instead of holding a thread for minutes.
//
// A deadline belongs to the calling thread and to a scope:
//
//   {
//     quarry::ScopedDeadline d(std::chrono::milliseconds(30000), "this search");
//     auto res = engine->search(req);  // throws Error(Code::timeout) once 30 s have passed
//   }
//
// While the scope lives, the library checks the deadline wherever its work can be long: the
// SQLite statements of the catalog are interrupted by a progress handler, and the long C++ loops
// (vector and brute-force scans, grep over files, in-memory filter evaluation, result assembly)
// call check_deadline(). The error they throw is
//
//   Error(Code::timeout, "<what> took longer than its limit of N ms; narrow the query or the
//         filter (fewer conditions, a smaller top_k), or raise <raise>" (by default "the
//         server's --deadline option"; a server names the flag that set the budget),
//         {{"limit_ms", "N"}})
//
// Nothing that has already committed is undone: reads simply stop. A write interrupted by its
// deadline rolls back as a whole (the write path commits in one catalog transaction).
//
// Nested scopes keep the earliest deadline: an inner scope can shorten the budget, never extend
// it, and the outer deadline is back in force when the inner scope ends. A thread without a
// scope (the indexer's workers, the CLI, a program that never creates one) has no deadline, and
// the checks cost it one thread-local read each.
//
// Worker threads do not inherit the caller's deadline by themselves: hand them
// current_deadline() and let each open ScopedDeadline(inherited) (grep's pool does this).
//
// A server installs one scope per request around the Engine calls it makes for that request
// (the HTTP server's --deadline option); the Engine itself never creates one.
#pragma once

#include <chrono>
#include <string>

namespace quarry {

// A thread's deadline as a value, to hand to worker threads. `active` is false when the thread
// has none.
struct Deadline {
  bool active = false;
  std::chrono::steady_clock::time_point at{};
  std::chrono::milliseconds budget{0};  // the limit named in the error
  std::string what;                     // e.g. "this search"
  std::string raise;                    // what to raise, e.g. "the server's --deadline option"
};

class ScopedDeadline {
 public:
  // From now, `budget` for `what` (a short noun phrase for the error message, e.g. "this
  // search"); the error tells the caller to raise `raise` (the setting that gave the budget).
  // A budget of zero or less has already passed.
  explicit ScopedDeadline(std::chrono::milliseconds budget, std::string what = "this request",
                          std::string raise = "the server's --deadline option");
  // Adopts a deadline taken with current_deadline() on another thread (nothing when inactive).
  explicit ScopedDeadline(const Deadline& inherited);
  ~ScopedDeadline();
  ScopedDeadline(const ScopedDeadline&) = delete;
  ScopedDeadline& operator=(const ScopedDeadline&) = delete;

 private:
  Deadline saved_;  // the enclosing scope's, restored on exit
};

// This thread's deadline (inactive when there is no scope).
Deadline current_deadline();

// True when this thread has a deadline and it has passed. Never throws (for C callbacks).
bool deadline_passed() noexcept;

// Throws Error(Code::timeout) when deadline_passed(); otherwise nothing.
void check_deadline();

}  // namespace quarry
