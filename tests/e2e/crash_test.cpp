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
    std::vector<std::string> args = {QUARRY_BINARY, "--data-dir", data_dir, "reindex",
                                     "--kb",        "crash",      "--workers",    "1"};
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

  // How long one whole sweep takes here (a sanitizer build is several times slower): timed on
  // a copy, so that the kills below land anywhere from its start to just past its end.
  const auto calib = dir / "calibration";
  std::filesystem::copy(cli.data_dir(), calib, std::filesystem::copy_options::recursive);
  const auto t0 = std::chrono::steady_clock::now();
  int calib_status = 0;
  waitpid(spawn_reindex(calib.string()), &calib_status, 0);
  const auto sweep_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - t0)
                            .count();
  ASSERT_TRUE(WIFEXITED(calib_status) && WEXITSTATUS(calib_status) == 0);

  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> delay_ms(0, static_cast<int>(sweep_ms * 13 / 10) + 1);
  const int dims[] = {64, 48, 32, 40};
  int next_dims = 1, kills = 0, builds = 0;
  for (int round = 0; round < 50; ++round) {
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
    pid_t pid = spawn_reindex(cli.data_dir());
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    ::kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) ++kills;  // not one that had finished

    // What the next process sees: the serving revision is whole (never a duplicate: one chunk
    // per document here), and everything not ready is still pending, not lost.
    auto kb = vectors();
    const auto& v = kb["vectors"];
    ASSERT_EQ(v["documents"], kDocs);
    EXPECT_EQ(v["ready"].get<int>() + v["pending"].get<int>() + v["failed"].get<int>(), kDocs);
    EXPECT_EQ(v["failed"], 0);
    EXPECT_LE(v["stored_vectors"].get<int>(), kDocs) << "round " << round << ": " << v;
  }
  std::printf("%d of 50 sweeps killed mid-run, %d blue-green builds (a whole sweep: %lld ms)\n",
              kills, builds, static_cast<long long>(sweep_ms));
  EXPECT_GE(kills, 20) << "most rounds should kill a live sweep";
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
