// Background sweeps make way for this process's searches (docs/lifecycle.md, "Background work
// yields to queries"): while a search runs, or ended a moment ago, a sweep with a duty under 1
// rests between small pieces of its work, and says how long in its report; without searches,
// or with duty 1, it never rests. Either way every document is embedded.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "engine/engine_fixture.h"
#include "lifecycle/foreground.h"
#include "numbered.h"

namespace quarry::lifecycle::testing_support {
using quarry::testing::numbered;
namespace {

class Foreground : public EngineTest {
 protected:
  // A KB of 150 small documents: three pages of the sweep.
  void make_kb(const std::string& kb) {
    engine->create_kb(kb, R"({"embedder": "hash:64"})");
    for (int i = 0; i < 150; ++i)
      add(kb, numbered("d", i) + ".md",
          numbered("Document ", i) + " about pumps, valves and pressure number " +
              std::to_string(i * 7) + ".");
  }
  ReindexReport sweep(const std::string& kb, double duty) {
    ReindexOptions o;
    o.foreground_duty = duty;
    auto r = engine->reindex(kb, o);
    EXPECT_EQ(r.error_code, "") << r.error_message;
    EXPECT_EQ(r.documents, 150);
    EXPECT_EQ(r.pending, 0);
    return r;
  }
};

TEST_F(Foreground, ASweepRestsWhileASearchRunsAndOnlyThen) {
  make_kb("busy");
  make_kb("quiet");
  make_kb("unpaced");
  {
    foreground::Query searching;  // as a search in another thread of this process would
    EXPECT_TRUE(foreground::busy(std::chrono::milliseconds(100)));
    EXPECT_GT(sweep("busy", 0.5).rested_ms, 0);
    EXPECT_EQ(sweep("unpaced", 1.0).rested_ms, 0);  // duty 1: pacing off
  }
  EXPECT_TRUE(foreground::busy(std::chrono::seconds(60)));  // one ended just now
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(foreground::busy(std::chrono::milliseconds(100)));
  EXPECT_EQ(sweep("quiet", 0.5).rested_ms, 0);  // nobody searching: flat out
}

TEST_F(Foreground, SearchesMarkThemselves) {
  engine->create_kb("k", "{}");
  add("k", "a.md", "pumps and valves");
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_FALSE(foreground::busy(std::chrono::milliseconds(100)));
  search("k", "pumps");
  EXPECT_TRUE(foreground::busy(std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  GrepRequest g;
  g.kb = "k";
  g.pattern = "valves";
  engine->grep(g);
  EXPECT_TRUE(foreground::busy(std::chrono::seconds(60)));
}

// Busy-waits `seconds`: work, as the pacer sees it.
void work(double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
  }
}

TEST(ForegroundPacer, KeepsItsShareOfTheTimeWhileQueriesRunAndOnlyThen) {
  {
    foreground::Query searching;
    foreground::Pacer pacer(0.25, nullptr);
    EXPECT_TRUE(pacer.active());
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) {  // 50 ms of work in small pieces
      work(0.0005);
      pacer.step();
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Rests make three quarters of the time (a sleep's overshoot is credited against the next).
    EXPECT_GT(pacer.rested_s() / wall, 0.6) << pacer.rested_s() << " of " << wall;
    EXPECT_LT(pacer.rested_s() / wall, 0.9) << pacer.rested_s() << " of " << wall;

    foreground::Pacer unpaced(1.0, nullptr);  // duty 1: pacing off
    EXPECT_FALSE(unpaced.active());
    for (int i = 0; i < 20; ++i) {
      work(0.0005);
      unpaced.step();
    }
    EXPECT_EQ(unpaced.rested_s(), 0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  foreground::Pacer quiet(0.25, nullptr);  // nobody searching: flat out
  EXPECT_FALSE(quiet.active());
  for (int i = 0; i < 20; ++i) {
    work(0.0005);
    quiet.step();
  }
  EXPECT_EQ(quiet.rested_s(), 0);
}

// `quarry search` run over and over by another process (a shell loop in its own process
// group), stopped by PID when the test ends.
class SearchingProcess {
 public:
  SearchingProcess(const std::string& data, const std::string& kb) {
    const std::string loop = std::string("while :; do '") + QUARRY_BINARY + "' --data-dir '" +
                             data + "' search --kb " + kb + " pumps >/dev/null 2>&1; done";
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      execl("/bin/sh", "sh", "-c", loop.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~SearchingProcess() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  bool started() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

// Polls `p.active()` for up to `seconds`; true as soon as it is.
bool becomes_active(const foreground::Pacer& p, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (p.active()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

TEST_F(Foreground, ASweepSeesSearchesOfAnotherProcessOnItsDataDirectory) {
  engine->create_kb("k", "{}");
  add("k", "a.md", "pumps and valves");
  make_kb("s");
  auto activity = foreground::shared(data);
  ASSERT_NE(activity, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  foreground::Pacer local_only(0.25, nullptr);
  foreground::Pacer paced(0.25, nullptr, activity);
  ASSERT_FALSE(paced.active());
  {
    SearchingProcess other(data, "k");
    ASSERT_TRUE(other.started());
    EXPECT_TRUE(becomes_active(paced, 20)) << "no search of the other process was seen";
    EXPECT_FALSE(local_only.active());  // not this process's searches: only the shared stamp
    // And so a sweep here (as `quarry reindex` beside a server) rests for them.
    EXPECT_GT(sweep("s", 0.5).rested_ms, 0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(paced.active());  // the other process is gone: nothing stays stuck
}

TEST_F(Foreground, ARestEndsWhenTheSweepIsCancelled) {
  std::atomic<bool> cancel{true};
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_LT(foreground::rest(1.5, &cancel), 0.5);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

}  // namespace
}  // namespace quarry::lifecycle::testing_support
