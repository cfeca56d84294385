// The use-case schema of SPEC §8: strict, ranges, budgets under `none`, cron fields, sources.
#include <gtest/gtest.h>

#include <filesystem>

#include "pump/source.h"
#include "pump/use_case.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::pump {
namespace {
using nlohmann::json;

json minimal() {
  return {{"source",
           {{"type", "sql"},
            {"driver", "sqlite"},
            {"path", "/tmp/app.db"},
            {"pending", "SELECT id, body AS content FROM t LIMIT $1"},
            {"store_chunk", "INSERT INTO c VALUES ($1, $2, $3)"}}}};
}

// The error's field detail, or "" when parsing succeeded.
std::string refused(const json& j) {
  try {
    parse_use_case("notes", j, "notes.json", "/apps");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument) << e.message();
    EXPECT_NE(e.message().find("notes.json"), std::string::npos) << e.message();
    return e.details().count("field") ? e.details().at("field") : "?";
  }
  return "";
}

TEST(UseCase, DefaultsFollowTheSpec) {
  auto uc = parse_use_case("notes", minimal(), "notes.json", "/apps");
  EXPECT_EQ(uc.chunking.profile, "none");
  EXPECT_FALSE(uc.chunking.max_tokens);
  EXPECT_EQ(uc.batch_size, 100);
  EXPECT_EQ(uc.timeout_ms, 30000);
  EXPECT_EQ(uc.revision, 0);
  EXPECT_TRUE(uc.on.empty());
  EXPECT_EQ(uc.sql.path, "/tmp/app.db");
  // A round trip through the stored form changes nothing, revisions included.
  auto again = parse_use_case("notes", use_case_to_json(uc), "notes", "");
  EXPECT_EQ(use_case_to_json(again), use_case_to_json(uc));
  EXPECT_EQ(config_revision(again), config_revision(uc));
}

TEST(UseCase, UnknownKeysAndBadValuesNameTheField) {
  auto with = [](const char* key, json v) {
    json j = minimal();
    j[key] = std::move(v);
    return j;
  };
  EXPECT_EQ(refused(with("colour", "red")), "colour");
  EXPECT_EQ(refused(with("batch_size", 0)), "batch_size");
  EXPECT_EQ(refused(with("batch_size", 1001)), "batch_size");
  EXPECT_EQ(refused(with("timeout_ms", 999)), "timeout_ms");
  EXPECT_EQ(refused(with("chunking", "words")), "chunking");
  EXPECT_EQ(refused(with("max_tokens", 256)), "max_tokens");  // refused under `none`
  EXPECT_EQ(refused(with("on", 5)), "on");
  json prose = with("chunking", "prose");
  prose["max_tokens"] = 15;
  EXPECT_EQ(refused(prose), "max_tokens");
  prose["max_tokens"] = 100;
  prose["overlap_tokens"] = 51;  // more than half
  EXPECT_EQ(refused(prose), "overlap_tokens");
  prose["overlap_tokens"] = 50;
  EXPECT_EQ(refused(prose), "");
  json src = minimal();
  src["source"]["color"] = 1;
  EXPECT_EQ(refused(src), "source.color");
  src = minimal();
  src["source"].erase("pending");
  EXPECT_EQ(refused(src), "source.pending");
  src = minimal();
  src["source"]["driver"] = "postgres";
  EXPECT_EQ(refused(src), "source.dsn_secret");
  src["source"].erase("path");
  src["source"]["dsn_secret"] = "APP_DSN";
  EXPECT_EQ(refused(src), "");
  src["source"]["type"] = "ftp";
  EXPECT_EQ(refused(src), "source.type");
}

TEST(UseCase, CronHasFiveValidFields) {
  auto cron = [](const char* expr) {
    json j = minimal();
    j["cron"] = expr;
    return refused(j);
  };
  EXPECT_EQ(cron("*/15 * * * *"), "");
  EXPECT_EQ(cron("0 3 * * 1-5"), "");
  EXPECT_EQ(cron("5,35 0-23/2 1 1,6,12 0"), "");
  EXPECT_EQ(cron("* * * *"), "cron");
  EXPECT_EQ(cron("* * * * * *"), "cron");
  EXPECT_EQ(cron("60 * * * *"), "cron");
  EXPECT_EQ(cron("* 24 * * *"), "cron");
  EXPECT_EQ(cron("* * 0 * *"), "cron");
  EXPECT_EQ(cron("*/0 * * * *"), "cron");
  EXPECT_EQ(cron("5-1 * * * *"), "cron");
  EXPECT_EQ(cron("a * * * *"), "cron");
}

TEST(UseCase, RevisionFollowsChunkingCounterAndEmbedder) {
  auto uc = parse_use_case("notes", minimal(), "notes.json", "");
  const std::string r = revision(uc, "hash|64");
  EXPECT_EQ(r.size(), 16u);
  EXPECT_NE(revision(uc, "hash|128"), r);
  auto bumped = uc;
  bumped.revision = 1;
  EXPECT_NE(revision(bumped, "hash|64"), r);
  EXPECT_NE(config_revision(bumped), config_revision(uc));
  auto batched = uc;  // settings that do not change vectors leave it alone
  batched.batch_size = 7;
  batched.timeout_ms = 5000;
  batched.description.assign(1, 'x');  // not = "x": g++ 12 -O3's false -Wrestrict (PR 105651)
  EXPECT_EQ(revision(batched, "hash|64"), r);
}

TEST(UseCase, RelativeSqlitePathsResolveAgainstTheFolder) {
  json j = minimal();
  j["source"]["path"] = "data/app.db";
  EXPECT_EQ(parse_use_case("notes", j, "notes.json", "/apps/x").sql.path, "/apps/x/data/app.db");
  // A folder given relative to the deploying shell: absolute, so the server finds it.
  EXPECT_EQ(parse_use_case("notes", j, "notes.json", "apps/x").sql.path,
            (std::filesystem::current_path() / "apps/x/data/app.db").string());
}

TEST(UseCase, VectorTypeDetection) {
  EXPECT_TRUE(uses_vector_type("INSERT INTO t VALUES ($1, $3::vector)"));
  EXPECT_TRUE(uses_vector_type("insert into t values ($1, $3 :: VECTOR)"));
  EXPECT_TRUE(uses_vector_type("CAST($3 AS vector(384))"));
  EXPECT_FALSE(uses_vector_type("INSERT INTO t VALUES ($1, $7::real[])"));
  EXPECT_FALSE(uses_vector_type("SELECT to_tsvector(body) FROM t"));
  EXPECT_FALSE(uses_vector_type("SELECT $1::vectors"));
}

}  // namespace
}  // namespace quarry::pump

namespace quarry::pump {
namespace {

TEST(UseCaseYaml, ReadsTheSameUseCaseAsJson) {
  quarry::testing::TempDir dir;
  quarry::testing::write_file(dir.path() / "notes.yaml", R"(# support notes
description: "notes: the app's"
chunking: prose
max_tokens: 128
on: [note.created, note.updated]
cron: "*/15 * * * *"
batch_size: 50
revision: 2
source:
  type: sql
  driver: sqlite
  path: app.db
  pending: >-
    SELECT id, body AS content FROM notes
    ORDER BY id LIMIT $1
  store_chunk: INSERT INTO c VALUES ($1, $2, $3)
)");
  auto uc = load_use_case_file((dir.path() / "notes.yaml").string());
  EXPECT_EQ(uc.name, "notes");
  EXPECT_EQ(uc.description, "notes: the app's");
  EXPECT_EQ(uc.chunking.profile, "prose");
  EXPECT_EQ(uc.chunking.max_tokens, 128);
  EXPECT_EQ(uc.on, (std::vector<std::string>{"note.created", "note.updated"}));
  EXPECT_EQ(uc.cron, "*/15 * * * *");
  EXPECT_EQ(uc.batch_size, 50);
  EXPECT_EQ(uc.revision, 2);
  EXPECT_EQ(uc.sql.pending, "SELECT id, body AS content FROM notes ORDER BY id LIMIT $1");
  EXPECT_EQ(uc.sql.path, (dir.path() / "app.db").string());
}

TEST(UseCaseYaml, ErrorsNameTheFileAndLineOrKey) {
  quarry::testing::TempDir dir;
  auto refused = [&](const std::string& text) -> std::string {
    quarry::testing::write_file(dir.path() / "bad.yml", text);
    try {
      load_use_case_file((dir.path() / "bad.yml").string());
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::invalid_argument);
      EXPECT_NE(e.message().find("bad.yml"), std::string::npos) << e.message();
      return e.message();
    }
    return "";
  };
  const std::string src =
      "source: {type: sql, driver: sqlite, path: a.db, pending: 'SELECT 1', store_chunk: 'x'}\n";
  EXPECT_NE(refused("batch_size: [1\n" + src).find("line"), std::string::npos);
  EXPECT_NE(refused("batch_size: '100'\n" + src).find("batch_size"), std::string::npos);
  EXPECT_NE(refused("colour: red\n" + src).find("colour"), std::string::npos);
  EXPECT_NE(refused("a: &x 1\nb: *x\n" + src).find("aliases"), std::string::npos);
  EXPECT_NE(refused("batch_size: 1\nbatch_size: 2\n" + src).find("twice"), std::string::npos);
  EXPECT_EQ(refused("batch_size: 100\n" + src), "");
}

}  // namespace
}  // namespace quarry::pump
