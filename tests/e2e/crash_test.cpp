// SPEC §7: a sweep killed (SIGKILL) at any point never loses or duplicates a vector, and the
// next one converges. Each round kills `quarry reindex` after a random delay — mid-page,
// mid-commit, mid-cut-over — and checks what the next process sees; new blue-green builds
// (embedder dimensions or chunking changing) keep giving the sweeps work.
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "kill_rounds.h"
#include "numbered.h"

namespace quarry::e2e {
using quarry::testing::numbered;
namespace {

class CrashTest : public ::testing::Test {
 protected:
  quarry::testing::TempDir dir;
  Cli cli{dir};

  static std::vector<std::string> reindex(const std::string& data_dir) {
    return {"--data-dir", data_dir, "reindex", "--kb", "crash", "--workers", "1"};
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
    quarry::testing::write_file(docs + numbered("/d", i) + ".md",
                                numbered("# Note ", i) + "\n\nunique token zq" + std::to_string(i) +
                                    " and shared words about crashes.\n");
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
  waitpid(spawn_quiet(reindex(calib.string())), &calib_status, 0);
  const auto sweep_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_TRUE(WIFEXITED(calib_status) && WEXITSTATUS(calib_status) == 0);

  // Kill until 50 sweeps have died mid-run (kill_rounds.h: rounds whose sweep finished first do
  // not count).
  KillRounds killer(sweep_ms, 20261130);
  const int dims[] = {64, 48, 32, 40};
  int next_dims = 1, kills = 0, builds = 0, rounds = 0;
  for (; kills < 50 && rounds < 300; ++rounds) {
    auto before = vectors();
    if (before["vectors"]["pending"] == 0 && before["vectors"]["building_revision"].is_null()) {
      // Nothing left to do: a new embedder, or new chunking (staged chunks swapped in at the
      // cut-over), starts a blue-green build.
      const std::string change = builds % 2 == 0
                                     ? numbered("embedder.provider=hash:", dims[next_dims++ % 4])
                                     : numbered("chunking.max_tokens=", 256 + 64 * (builds % 4));
      auto set = cli.json({"kb", "set", "crash", change});
      ASSERT_EQ(set.status, 0) << set.out << set.err;
      ++builds;
    }
    if (killer.round(reindex(cli.data_dir()))) ++kills;

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
        {"search", numbered("zq", i), "--kb", "crash", "--mode", "hybrid", "--top-k", "1"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(r.json["hits"].size(), 1u);
    EXPECT_EQ(r.json["hits"][0]["filename"], numbered("d", i) + ".md");
  }
}

}  // namespace
}  // namespace quarry::e2e
