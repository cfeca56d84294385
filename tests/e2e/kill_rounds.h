// The crash tests' shared mechanics: start `quarry` quietly (stdin/stdout/stderr on /dev/null)
// and kill it with SIGKILL after a random delay, counting only kills that landed on a live
// process. A run's length varies (less is left late in the work, sanitizer builds are slower,
// the machine may be busy), so each delay is drawn up to a little past the latest length seen:
// the estimate grows with every kill and is reset by every run that finishes first.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"

namespace quarry::e2e {

// Starts QUARRY_BINARY with `args` (no output).
inline pid_t spawn_quiet(std::vector<std::string> args) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  args.insert(args.begin(), QUARRY_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, QUARRY_BINARY, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

class KillRounds {
 public:
  // `first_estimate_ms`: how long one whole run took (timed by the test).
  KillRounds(long long first_estimate_ms, unsigned seed)
      : estimate_ms_(first_estimate_ms), rng_(seed) {}

  // Runs `args` and kills it after a random delay. True when it died of the kill mid-run; false
  // when it finished first (its length becomes the new estimate).
  bool round(const std::vector<std::string>& args) {
    const long long delay = std::uniform_int_distribution<long long>(
        0, std::max<long long>(1, estimate_ms_ * 6 / 5))(rng_);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = spawn_quiet(args);
    int st = 0;
    bool exited = false;
    while (!exited && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(delay)) {
      exited = waitpid(pid, &st, WNOHANG) == pid;
      if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (exited) {
      estimate_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count();
      return false;
    }
    ::kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    estimate_ms_ = estimate_ms_ * 11 / 10 + 1;
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
  }

 private:
  long long estimate_ms_;
  std::mt19937 rng_;
};

}  // namespace quarry::e2e
