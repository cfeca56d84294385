// SPEC §7: a sweep killed (SIGKILL) at any point never loses or duplicates a vector, and the
// next one converges. Each round kills `quarry reindex` after a random delay — mid-page,
// mid-commit, mid-cut-over — and checks what the next process sees; new blue-green builds
// (embedder dimensions or chunking changing) keep giving the sweeps work.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "cli_runner.h"

namespace quarry::e2e {
namespace {

class CrashTest : public ::testing::Test {
 protected:
  quarry::testing::TempDir dir;
  Cli cli{dir};

  pid_t spawn_reindex(const std::string& data_dir) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> args = {QUARRY_BINARY, "--data-dir", data_dir,    "reindex",
                                     "--kb",        "crash",      "--workers", "1"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, QUARRY_BINARY, &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
  }

  nlohmann::json vectors() {
    auto st = cli.json({"status", "--kb", "crash"});
    EXPECT_EQ(st.status, 0) << st.err;
    return st.json["knowledge_bases"][0];
  }
};

TEST_F(CrashTest, KilledSweepsNeverLoseOrDuplicateVectorsAndConverge) {
  constexpr int kDocs = 600;
  const std::string docs = (dir / "docs").string();
  for (int i = 0; i < kDocs; ++i)
    quarry::testing::write_file(docs + "/d" + std::to_string(i) + ".md",
                                "# Note " + std::to_string(i) + "\n\nunique token zq" +
                                    std::to_string(i) + " and shared words about crashes.\n");
  ASSERT_EQ(cli.json({"kb", "create", "crash", "--embedder", "hash:64"}).status, 0);
  auto ing = cli.json({"ingest", docs, "--kb", "crash"});
  ASSERT_EQ(ing.status, 0) << ing.err;
  ASSERT_EQ(ing.json["added"], kDocs);

  // How long one whole sweep takes here (a sanitizer build is several times slower), timed on
  // a copy: the first estimate for the kill delays below.
  const auto calib = dir / "calibration";
  std::filesystem::copy(cli.data_dir(), calib, std::filesystem::copy_options::recursive);
  const auto t0 = std::chrono::steady_clock::now();
  int calib_status = 0;
  waitpid(spawn_reindex(calib.string()), &calib_status, 0);
  const auto sweep_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_TRUE(WIFEXITED(calib_status) && WEXITSTATUS(calib_status) == 0);

  // Kill until 50 sweeps have died mid-run. A sweep's length varies (less is left late in a
  // build, the machine may be busy), so each delay is drawn up to a little past the latest length
  // seen (which grows with every kill and is reset by every sweep that finishes), and a round whose
  // sweep finished first does not count.
  std::mt19937 rng(20261130);
  long long estimate_ms = sweep_ms;
  const int dims[] = {64, 48, 32, 40};
  int next_dims = 1, kills = 0, builds = 0, rounds = 0;
  for (; kills < 50 && rounds < 300; ++rounds) {
    auto before = vectors();
    if (before["vectors"]["pending"] == 0 && before["vectors"]["building_revision"].is_null()) {
      // Nothing left to do: a new embedder, or new chunking (staged chunks swapped in at the
      // cut-over), starts a blue-green build.
      const std::string change =
          builds % 2 == 0 ? "embedder.provider=hash:" + std::to_string(dims[next_dims++ % 4])
                          : "chunking.max_tokens=" + std::to_string(256 + 64 * (builds % 4));
      auto set = cli.json({"kb", "set", "crash", change});
      ASSERT_EQ(set.status, 0) << set.out << set.err;
      ++builds;
    }
    const long long delay = std::uniform_int_distribution<long long>(
        0, std::max<long long>(1, estimate_ms * 6 / 5))(rng);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = spawn_reindex(cli.data_dir());
    int st = 0;
    bool exited = false;
    while (!exited && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(delay)) {
      exited = waitpid(pid, &st, WNOHANG) == pid;
      if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (exited) {  // finished before the kill: its length is the new estimate
      estimate_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    } else {
      ::kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      estimate_ms = estimate_ms * 11 / 10 + 1;
      if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) ++kills;
    }

    // What the next process sees: the serving revision is whole (never a duplicate: one chunk
    // per document here), and everything not ready is still pending, not lost.
    auto kb = vectors();
    const auto& v = kb["vectors"];
    ASSERT_EQ(v["documents"], kDocs);
    EXPECT_EQ(v["ready"].get<int>() + v["pending"].get<int>() + v["failed"].get<int>(), kDocs);
    EXPECT_EQ(v["failed"], 0);
    EXPECT_LE(v["stored_vectors"].get<int>(), kDocs) << "round " << rounds << ": " << v;
  }
  std::printf(
      "%d sweeps killed mid-run in %d rounds, %d blue-green builds (a first sweep: %lld "
      "ms)\n",
      kills, rounds, builds, static_cast<long long>(sweep_ms));
  EXPECT_EQ(kills, 50) << "sweeps kept finishing before the kill";
  EXPECT_GE(builds, 2);

  // Converges: one clean sweep finishes whatever was left.
  auto fin = cli.json({"reindex", "--kb", "crash"});
  ASSERT_EQ(fin.status, 0) << fin.out << fin.err;
  auto kb = vectors();
  const auto& v = kb["vectors"];
  EXPECT_EQ(v["ready"], kDocs) << v;
  EXPECT_EQ(v["pending"], 0);
  EXPECT_EQ(v["stored_vectors"], kDocs);
  EXPECT_TRUE(v["building_revision"].is_null());
  EXPECT_EQ(kb["index_status"]["vector"], "ready");
  EXPECT_EQ(kb["vectors"]["serving_revision"], kb["revision"]);
  for (int i : {0, 123, 599}) {
    auto r = cli.json(
        {"search", "zq" + std::to_string(i), "--kb", "crash", "--mode", "hybrid", "--top-k", "1"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(r.json["hits"].size(), 1u);
    EXPECT_EQ(r.json["hits"][0]["filename"], "d" + std::to_string(i) + ".md");
  }
}

}  // namespace
}  // namespace quarry::e2e
