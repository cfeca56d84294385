// The pump's run loop (SPEC §8) end to end against a real SQLite app: deploy, runs, batches,
// the 20-batch cap, tombstones and blocked runs, the failure policy, the lease, query-time
// embedding. The embedder is the deterministic `hash` provider.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "catalog/catalog.h"
#include "core/util.h"
#include "embed/bert_fixture.h"
#include "embed/provider.h"
#include "pump/pump.h"
#include "pump/sqlite_app.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::pump {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

class PumpSqlite : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(apps());
    app_ = std::make_unique<App>(apps() / "app.db");
    cat_ = catalog::Catalog::open((data_.path() / "catalog.db").string());
    pump_ = std::make_unique<Pump>(data_.path().string(), *cat_,
                                   [](const std::string&) { return std::string(); });
  }
  fs::path apps() const { return data_.path() / "apps"; }
  void write(const std::string& name, const json& j) {
    quarry::testing::write_file(apps() / (name + ".json"), j.dump(2));
  }
  DeployReport deploy(const std::string& embedder = "hash:64") {
    return pump_->deploy(apps().string(), embedder, catalog::AuditEntry{});
  }
  catalog::PumpUseCaseRow row(const std::string& name) { return *cat_->pump().find(name); }
  Code run_error(const std::string& name) {
    try {
      pump_->run(name);
    } catch (const Error& e) {
      return e.code();
    }
    return Code::ok;
  }

  quarry::testing::TempDir data_;
  std::unique_ptr<App> app_;
  std::unique_ptr<catalog::Catalog> cat_;
  std::unique_ptr<Pump> pump_;
};

TEST_F(PumpSqlite, RunEmbedsEveryPendingRowOnceUnderTheRevision) {
  app_->add_notes(1, 25);
  write("notes", use_case(10));
  auto rep = deploy();
  EXPECT_EQ(rep.deployed, std::vector<std::string>{"notes"});
  EXPECT_TRUE(row("notes").pending);  // deploy is a trigger

  auto r = pump_->run("notes");
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.processed, 25);
  EXPECT_EQ(r.batches, 3);  // 10 + 10 + a short page of 5
  EXPECT_TRUE(r.drained);
  EXPECT_EQ(r.failed + r.skipped + r.blocked, 0);
  EXPECT_EQ(r.usage_entries, 3);
  EXPECT_EQ(r.revision.size(), 16u);
  EXPECT_EQ(app_->count(), 25);
  EXPECT_EQ(app_->count("revision = '" + r.revision + "' AND seq = 0"), 25);
  auto vec = json::parse(app_->one("SELECT embedding FROM note_chunks WHERE note_id = 7"));
  ASSERT_TRUE(vec.is_array());
  EXPECT_EQ(vec.size(), 64u);
  EXPECT_EQ(app_->one("SELECT content FROM note_chunks WHERE note_id = 7"),
            "note number 7 about pumps");
  EXPECT_FALSE(row("notes").pending);
  EXPECT_GT(row("notes").last_run_at, 0);

  auto again = pump_->run("notes");  // nothing pending: the app's table is the ledger
  EXPECT_EQ(again.processed, 0);
  EXPECT_EQ(again.batches, 0);
  app_->exec("DELETE FROM note_chunks WHERE note_id = 3");
  EXPECT_EQ(pump_->run("notes").processed, 1);

  // The same text embedded by the query path lands on the stored vector, same revision.
  auto q = pump_->embed("notes", "note number 7 about pumps");
  EXPECT_EQ(q.revision, r.revision);
  ASSERT_EQ(q.embedding.size(), 64u);
  double dot = 0;
  for (std::size_t i = 0; i < 64; ++i) dot += q.embedding[i] * vec[i].get<double>();
  EXPECT_NEAR(dot, 1.0, 1e-5);
}

TEST_F(PumpSqlite, ARevisionChangeReEmbedsAndReplaces) {
  app_->add_notes(1, 12);
  write("notes", use_case(5));
  deploy();
  const auto first = pump_->run("notes").revision;
  json bumped = use_case(5);
  bumped["revision"] = 1;
  write("notes", bumped);
  deploy();
  auto r = pump_->run("notes");
  EXPECT_NE(r.revision, first);
  EXPECT_EQ(r.processed, 12);
  EXPECT_EQ(app_->count(), 12);  // replaced per document, never appended
  EXPECT_EQ(app_->count("revision = '" + r.revision + "'"), 12);
  deploy("hash:32");  // another embedder: another revision, everything pending again
  auto other = pump_->run("notes");
  EXPECT_NE(other.revision, r.revision);
  EXPECT_EQ(other.processed, 12);
  EXPECT_EQ(json::parse(app_->one("SELECT embedding FROM note_chunks LIMIT 1")).size(), 32u);
}

TEST_F(PumpSqlite, DeployKeepsRunStateDropsRemovedFilesAndNeverTouchesTheApp) {
  app_->add_notes(1, 3);
  write("notes", use_case(10));
  write("other", use_case(10));
  deploy();
  pump_->run("notes");
  const auto ran = row("notes").last_run_at;
  ASSERT_GT(ran, 0);
  fs::remove(apps() / "other.json");
  write("notes", use_case(7));
  auto rep = deploy();
  EXPECT_EQ(rep.removed, std::vector<std::string>{"other"});
  EXPECT_FALSE(cat_->pump().find("other"));
  EXPECT_EQ(row("notes").last_run_at, ran);
  EXPECT_EQ(json::parse(row("notes").config_json)["batch_size"], 7);
  EXPECT_EQ(app_->count(), 3);

  // One bad file fails the whole deploy, naming the file and key; nothing changes.
  json bad = use_case(10);
  bad["batchsize"] = 3;
  write("broken", bad);
  try {
    deploy();
    FAIL() << "deployed a use case with an unknown key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(e.message().find("broken.json"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("batchsize"), std::string::npos) << e.message();
  }
  EXPECT_FALSE(cat_->pump().find("broken"));
  EXPECT_EQ(json::parse(row("notes").config_json)["batch_size"], 7);
}

TEST_F(PumpSqlite, YamlFilesDeployAndOneNameCannotBeDefinedTwice) {
  app_->add_notes(1, 4);
  quarry::testing::write_file(apps() / "notes.yaml",
                              "batch_size: 3\nsource:\n  type: sql\n  driver: sqlite\n"
                              "  path: app.db\n  pending: " +
                                  use_case(3)["source"]["pending"].dump() + "\n  store_chunk: " +
                                  use_case(3)["source"]["store_chunk"].dump() + "\n");
  deploy();
  auto r = pump_->run("notes");
  EXPECT_EQ(r.processed, 4);
  EXPECT_EQ(r.batches, 2);
  write("notes", use_case(3));  // notes.json beside notes.yaml
  try {
    deploy();
    FAIL() << "two files defined one use case";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(e.message().find("two files"), std::string::npos) << e.message();
  }
}

TEST_F(PumpSqlite, TheTwentyBatchCapLeavesTheRestQueued) {
  app_->add_notes(1, 25);
  write("notes", use_case(1));
  deploy();
  auto r = pump_->run("notes");
  EXPECT_EQ(r.batches, 20);
  EXPECT_EQ(r.processed, 20);
  EXPECT_FALSE(r.drained);
  EXPECT_TRUE(row("notes").pending);  // re-poked itself
  auto rest = pump_->run("notes");
  EXPECT_EQ(rest.processed, 5);
  EXPECT_TRUE(rest.drained);
  EXPECT_FALSE(row("notes").pending);
}

TEST_F(PumpSqlite, UnembeddableRowsAreTombstonedReReportedAndBlockTheRun) {
  app_->add_notes(1, 5);
  app_->add_notes(6, 6, " ");  // white space only: no_content (three texts, three tombstones)
  app_->add_notes(7, 7, "  ");
  app_->add_notes(8, 8, "   ");
  write("notes", use_case(10));
  deploy();
  auto r = pump_->run("notes");
  EXPECT_EQ(r.processed, 5);
  EXPECT_EQ(r.failed, 3);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_EQ(r.blocked, 0);  // the batch had embeddable rows
  EXPECT_EQ(app_->one("SELECT code FROM note_failures WHERE note_id = 6"), "no_content");
  EXPECT_EQ(app_->one("SELECT skipped FROM note_failures WHERE note_id = 6"), "0");

  // The app's query does not exclude them: the next run re-reports them, embeds nothing.
  auto again = pump_->run("notes");
  EXPECT_EQ(again.processed, 0);
  EXPECT_EQ(again.failed, 0);
  EXPECT_EQ(again.skipped, 3);
  EXPECT_EQ(again.blocked, 3);
  EXPECT_EQ(again.usage_entries, 0);
  EXPECT_EQ(app_->one("SELECT skipped FROM note_failures WHERE note_id = 7"), "1");
  auto listed = pump_->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].tombstoned, 3);
  EXPECT_EQ(listed[0].row.last_skipped, 3);
  EXPECT_FALSE(listed[0].row.pending);  // a blocked run does not re-poke itself
  EXPECT_FALSE(listed[0].row.parked);

  // Editing the content gives the row another chance.
  app_->exec("UPDATE notes SET body = 'now with words' WHERE id = 6");
  app_->exec("DELETE FROM note_failures");
  EXPECT_EQ(pump_->run("notes").processed, 1);
}

TEST_F(PumpSqlite, ContractViolationsParkAtOnce) {
  app_->add_notes(1, 25);
  write("notes", use_case(10, false, /*limit=*/false));  // forgot LIMIT $1: 25 rows for 10
  deploy();
  EXPECT_EQ(run_error("notes"), Code::contract_violation);
  auto r = row("notes");
  EXPECT_TRUE(r.parked);
  EXPECT_FALSE(r.pending);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.last_error.rfind("contract_violation: ", 0), 0u) << r.last_error;
  EXPECT_NE(r.last_error.find("LIMIT $1"), std::string::npos) << r.last_error;
  EXPECT_EQ(app_->count(), 0);  // nothing embedded, nothing paid

  json not_a_query = use_case(10);
  not_a_query["source"]["pending"] = "UPDATE notes SET body = body WHERE id = $1 AND $2 = $2";
  write("notes", not_a_query);
  deploy();  // a trigger: one more attempt (still parked until it succeeds)
  EXPECT_TRUE(row("notes").parked);
  EXPECT_TRUE(row("notes").pending);
  EXPECT_EQ(run_error("notes"), Code::contract_violation);
  EXPECT_NE(row("notes").last_error.find("no result set"), std::string::npos);

  json missing_table = use_case(10);
  missing_table["source"]["store_chunk"] = "INSERT INTO nowhere VALUES ($1)";
  write("notes", missing_table);
  deploy();
  EXPECT_EQ(run_error("notes"), Code::contract_violation);
  EXPECT_TRUE(row("notes").parked);
  EXPECT_EQ(app_->count(), 0);
}

TEST_F(PumpSqlite, RetryableFailuresBackOffThenPark) {
  json uc = use_case(10);
  uc["source"]["path"] = "missing.db";  // the pump never creates an app's database
  write("notes", uc);
  deploy();
  std::int64_t backoff_ms = 20000;
  for (int attempt = 1; attempt <= 4; ++attempt) {
    const auto before = core::now_ms();
    EXPECT_EQ(run_error("notes"), Code::engine_unavailable);
    auto r = row("notes");
    EXPECT_EQ(r.attempts, attempt);
    EXPECT_FALSE(r.parked);
    EXPECT_TRUE(r.pending);
    EXPECT_GE(r.next_run_at, before + backoff_ms);
    EXPECT_LE(r.next_run_at, core::now_ms() + backoff_ms);
    backoff_ms *= 2;  // 20, 40, 80, 160 s
  }
  EXPECT_EQ(run_error("notes"), Code::engine_unavailable);
  EXPECT_TRUE(row("notes").parked);  // the fifth consecutive failure
  EXPECT_EQ(row("notes").attempts, 5);
  EXPECT_FALSE(row("notes").pending);

  // The app's database appears: the next trigger's attempt succeeds and resets the count.
  App real(apps() / "missing.db");
  real.add_notes(1, 2);
  deploy();
  EXPECT_EQ(pump_->run("notes").processed, 2);
  EXPECT_EQ(row("notes").attempts, 0);
  EXPECT_FALSE(row("notes").parked);
  EXPECT_EQ(row("notes").last_error, "");
}

TEST_F(PumpSqlite, OneRunAtATimeAndNoTriggerIsLost) {
  app_->add_notes(1, 3);
  write("notes", use_case(10));
  deploy();
  const auto now = core::now_ms();
  ASSERT_TRUE(cat_->pump().claim_lease("notes", "another-process", now, now - kLeaseStaleMs));
  auto r = pump_->run("notes");
  EXPECT_EQ(r.status, "already_running");
  EXPECT_EQ(app_->count(), 0);
  EXPECT_TRUE(row("notes").pending);  // the trigger waits for the running run's end
  catalog::PumpRunEnd end;
  ASSERT_TRUE(cat_->pump().finish_run("notes", "another-process", end));
  EXPECT_TRUE(row("notes").pending);  // still queued after that run ended

  // A lease older than 30 minutes belongs to a crashed run: reclaimed.
  ASSERT_TRUE(cat_->pump().claim_lease("notes", "crashed", now - kLeaseStaleMs - 1000,
                                       now - 2 * kLeaseStaleMs));
  EXPECT_EQ(pump_->run("notes").processed, 3);
  EXPECT_FALSE(cat_->pump().finish_run("notes", "crashed", end));  // its lease is gone

  // A lease whose process died on this machine is taken over at once; a live one is not.
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  app_->exec("DELETE FROM note_chunks WHERE note_id = 2");
  const std::string dead = std::string(host) + ":" + std::to_string(child) + ":ab";
  ASSERT_TRUE(cat_->pump().claim_lease("notes", dead, core::now_ms(), 0));
  EXPECT_EQ(pump_->run("notes").processed, 1);
  const std::string alive = std::string(host) + ":" + std::to_string(getpid()) + ":cd";
  ASSERT_TRUE(cat_->pump().claim_lease("notes", alive, core::now_ms(), 0));
  EXPECT_EQ(pump_->run("notes").status, "already_running");
}

// An exception that is not one of ours still ends the run properly: lease released, counted.
TEST_F(PumpSqlite, AnUnexpectedFailureStillReleasesTheLease) {
  write("notes", use_case(10));
  deploy();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((data_.path() / "catalog.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE pump_use_cases SET config = '{'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(run_error("notes"), Code::internal);
  auto r = row("notes");
  EXPECT_EQ(r.lease_owner, "");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_TRUE(r.pending);  // retried with backoff
  EXPECT_EQ(r.last_error.rfind("internal: ", 0), 0u) << r.last_error;
}

TEST_F(PumpSqlite, ProseChunksCarryTheirIndexAndHeadingPath) {
  std::string body = "# Pumps\n\n## Valves\n\n";
  for (int i = 0; i < 60; ++i) body += "The valve number " + std::to_string(i) + " opens. ";
  app_->add_notes(1, 1, body);
  json uc = use_case(10);
  uc["chunking"] = "prose";
  uc["max_tokens"] = 64;
  write("notes", uc);
  deploy();
  auto r = pump_->run("notes");
  EXPECT_EQ(r.processed, 1);
  EXPECT_GT(r.chunks, 3);
  EXPECT_EQ(app_->count(), r.chunks);
  EXPECT_EQ(app_->one("SELECT MAX(seq) FROM note_chunks"), std::to_string(r.chunks - 1));
  auto meta = json::parse(app_->one("SELECT meta FROM note_chunks WHERE seq = 1"));
  EXPECT_EQ(meta["heading_path"], json::array({"Pumps", "Valves"}));
}

// With a model that has its own tokenizer (SPEC §3), chunks are cut in its tokens and within
// its input: a 512-token budget becomes the tiny model's 30, and no chunk is cut short.
TEST_F(PumpSqlite, ChunksAreCountedInTheModelsTokensWithinItsInput) {
  const fs::path model_dir = data_.path() / "tiny-bert";
  embed::testing_bert::make_model(model_dir, {32, 4, 1, 64, 32, "gelu", "F32", "mean", false}, 3);
  std::string body = "# Pumps\n\n";
  for (int i = 0; i < 40; ++i) body += "The pump is unable to open when the pressure rises. ";
  app_->add_notes(1, 1, body);
  json uc = use_case(10);
  uc["chunking"] = "prose";
  uc["max_tokens"] = 512;
  write("notes", uc);
  deploy("bert:" + model_dir.string());
  auto r = pump_->run("notes");
  EXPECT_EQ(r.processed, 1);
  auto model = embed::ProviderRegistry::builtin().create(
      embed::ProviderSpec::parse("bert:" + model_dir.string()), embed::ProviderContext{});
  const auto tokens = model->model_tokenizer();
  ASSERT_EQ(tokens.max_tokens, 30);
  EXPECT_GE(r.chunks, tokens.tokenizer->count(body) / 30);
  for (int seq = 0; seq < r.chunks; ++seq) {
    const std::string text =
        app_->one("SELECT content FROM note_chunks WHERE seq = " + std::to_string(seq));
    EXPECT_LE(tokens.tokenizer->count(text), 30) << text;
  }
}

TEST_F(PumpSqlite, QueryTimeEmbeddingChecksItsText) {
  write("notes", use_case(10));
  deploy();
  auto code = [&](const std::string& name, const std::string& text) {
    try {
      pump_->embed(name, text);
    } catch (const Error& e) {
      return e.code();
    }
    return Code::ok;
  };
  EXPECT_EQ(code("notes", ""), Code::invalid_argument);
  EXPECT_EQ(code("notes", " \n\t "), Code::invalid_argument);
  EXPECT_EQ(code("notes", std::string(100001, 'a')), Code::invalid_argument);
  EXPECT_EQ(code("notes", std::string(100000, 'a')), Code::ok);
  EXPECT_EQ(code("nope", "text"), Code::not_found);
  EXPECT_EQ(run_error("nope"), Code::not_found);
}

TEST_F(PumpSqlite, NoEmbedderIsAnErrorThatNamesTheFix) {
  app_->add_notes(1, 2);
  write("notes", use_case(10));
  deploy("");
  auto listed = pump_->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].revision, "");
  EXPECT_NE(listed[0].model_error.find("--embedder"), std::string::npos);
  EXPECT_EQ(run_error("notes"), Code::engine_unavailable);
  EXPECT_EQ(app_->count(), 0);
}

}  // namespace
}  // namespace quarry::pump
