// SPEC §8: the app's storage is the ledger, so a pump run killed (SIGKILL) at any point leaves
// every row with exactly one whole set of chunks (or none, pending), never a partial or
// duplicated one, and the next runs converge; tombstones stay. `quarry pump run` is killed
// after a random delay against a SQLite app until 30 runs have died mid-run.
#include <sqlite3.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "kill_rounds.h"

namespace quarry::e2e {
namespace {

// (note id -> (chunk count, distinct revisions, max seq)) of the app's chunk table.
struct Stored {
  int notes = 0;
  bool whole = true;  // every note's seq runs 0..n-1 under one revision
  std::map<std::string, int> by_revision;
};

Stored inspect(const std::string& path) {
  sqlite3* db = nullptr;
  // Read-write: after a kill mid-transaction the hot journal is rolled back on open.
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT note_id, COUNT(*), COUNT(DISTINCT revision), MAX(seq), "
                               "MIN(revision) FROM note_chunks GROUP BY note_id",
                               -1, &s, nullptr),
            SQLITE_OK);
  Stored out;
  while (sqlite3_step(s) == SQLITE_ROW) {
    ++out.notes;
    const int n = sqlite3_column_int(s, 1);
    out.whole = out.whole && sqlite3_column_int(s, 2) == 1 && sqlite3_column_int(s, 3) == n - 1;
    out.by_revision[reinterpret_cast<const char*>(sqlite3_column_text(s, 4))] += 1;
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

class PumpCrashTest : public ::testing::Test {
 protected:
  quarry::testing::TempDir dir;
  Cli cli{dir};

  std::vector<std::string> run_args() const {
    return {"--data-dir", cli.data_dir(), "pump", "run", "notes"};
  }
};

TEST_F(PumpCrashTest, KilledRunsNeverLeavePartialOrDuplicatedChunksAndConverge) {
  constexpr int kNotes = 2000, kBlank = 5;
  const auto apps = dir / "apps";
  std::filesystem::create_directories(apps);
  const std::string app = (apps / "app.db").string();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(app.c_str(), &db), SQLITE_OK);
    std::string sql =
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);"
        "CREATE TABLE note_chunks (note_id INTEGER NOT NULL, seq INTEGER NOT NULL, embedding "
        "TEXT NOT NULL, content TEXT NOT NULL, revision TEXT NOT NULL, PRIMARY KEY (note_id, "
        "seq));"
        "CREATE TABLE note_failures (note_id INTEGER PRIMARY KEY, code TEXT, revision TEXT);"
        "BEGIN;";
    for (int i = 1; i <= kNotes; ++i) {
      std::string body;
      if (i % (kNotes / kBlank) != 0)  // every 400th note is blank: no_content
        for (int s = 0; s < 1 + i % 4; ++s)
          body += "Note " + std::to_string(i) + " sentence " + std::to_string(s) +
                  " says something about pumps, valves and water pressure. ";
      else
        body = std::string(static_cast<std::size_t>(i / (kNotes / kBlank)), ' ');
      sql += "INSERT INTO notes VALUES (" + std::to_string(i) + ", '" + body + "');";
    }
    sql += "COMMIT;";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  nlohmann::json uc = {
      {"chunking", "prose"},
      {"max_tokens", 16},
      {"overlap_tokens", 0},
      {"batch_size", 40},
      {"source",
       {{"type", "sql"},
        {"driver", "sqlite"},
        {"path", "app.db"},
        {"pending",
         "SELECT id, body AS content FROM notes n WHERE NOT EXISTS (SELECT 1 FROM note_chunks c "
         "WHERE c.note_id = n.id AND c.revision = $2) AND NOT EXISTS (SELECT 1 FROM "
         "note_failures f WHERE f.note_id = n.id AND f.revision = $2) ORDER BY id LIMIT $1"},
        {"delete_document", "DELETE FROM note_chunks WHERE note_id = $1"},
        {"store_chunk", "INSERT INTO note_chunks VALUES ($1, $2, $3, $4, $5)"},
        {"store_failure", "INSERT OR REPLACE INTO note_failures VALUES ($1, $2, $5)"}}}};
  quarry::testing::write_file(apps / "notes.json", uc.dump(2));
  auto dep = cli.json({"pump", "deploy", apps.string(), "--embedder", "hash:32"});
  ASSERT_EQ(dep.status, 0) << dep.out << dep.err;

  // How long one run takes here (sanitizer builds are slower): the kills below land from a
  // run's start to past its end.
  const auto t0 = std::chrono::steady_clock::now();
  auto first = cli.json({"pump", "run", "notes"});
  const auto run_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  ASSERT_FALSE(first.json["drained"].get<bool>()) << first.json;  // 20 batches of 40 < 2000
  const std::string revision = first.json["revision"];
  // Start over from nothing, so the kills below meet every phase of a run.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(app.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DELETE FROM note_chunks; DELETE FROM note_failures;", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }

  // Kill until 30 runs have died mid-run (kill_rounds.h: rounds whose run finished first do not
  // count).
  KillRounds killer(run_ms, 20261130);
  int kills = 0, bumps = 0, rounds = 0;
  std::string current = revision;
  auto deploy_revision = [&](int counter) {
    uc["revision"] = counter;
    quarry::testing::write_file(apps / "notes.json", uc.dump(2));
    auto d = cli.json({"pump", "deploy", apps.string(), "--embedder", "hash:32"});
    EXPECT_EQ(d.status, 0) << d.out << d.err;
    current = cli.json({"pump", "list"}).json["use_cases"][0]["revision"];
  };
  for (; kills < 30 && rounds < 200; ++rounds) {
    if (inspect(app).by_revision[current] == kNotes - kBlank)  // all done: re-embed everything
      deploy_revision(++bumps);
    if (killer.round(run_args())) ++kills;
    auto s = inspect(app);
    EXPECT_TRUE(s.whole) << "round " << rounds << ": a note with a partial set of chunks";
    EXPECT_LE(s.notes, kNotes - kBlank);
    EXPECT_LE(s.by_revision.size(), 2u);  // the previous revision and the one being built
  }
  std::printf("%d pump runs killed mid-run in %d rounds, %d re-embeds (a first run: %lld ms)\n",
              kills, rounds, bumps, static_cast<long long>(run_ms));
  EXPECT_EQ(kills, 30) << "runs kept finishing before the kill";

  // Converges: runs until drained finish what is left; the blank notes stay tombstoned.
  for (int i = 0; i < 10; ++i) {
    auto r = cli.json({"pump", "run", "notes"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    if (r.json["drained"].get<bool>()) break;
  }
  auto s = inspect(app);
  EXPECT_TRUE(s.whole);
  EXPECT_EQ(s.notes, kNotes - kBlank);
  EXPECT_EQ(s.by_revision[current], kNotes - kBlank);
  EXPECT_EQ(s.by_revision.size(), 1u);
  auto again = cli.json({"pump", "run", "notes"});
  EXPECT_EQ(again.json["processed"], 0);
  auto list = cli.json({"pump", "list"});
  ASSERT_EQ(list.status, 0);
  EXPECT_EQ(list.json["use_cases"][0]["tombstoned"].get<int>(), kBlank * (bumps + 1));
  EXPECT_FALSE(list.json["use_cases"][0]["running"].get<bool>());
  EXPECT_FALSE(list.json["use_cases"][0]["parked"].get<bool>());
}

}  // namespace
}  // namespace quarry::e2e
