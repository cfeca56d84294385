// Upgrades (issue 23): every data directory a released build wrote is a fixture under
// tests/fixtures/upgrade/vN/ (catalog schema vN, made by make_fixture.sh with that release:
// a keyword KB, a KB on the embedded store with a blue-green build in progress, tokens, pump
// state) with the answers that release gave. This build must open each one, migrate it, answer
// the same searches with the same results, keep tokens and pump state, and converge: finish
// the build in progress and serve the new revision.
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"

namespace quarry::e2e {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using quarry::testing::TempDir;

int schema_version(const fs::path& catalog) {
  sqlite3* db = nullptr;
  int v = -1;
  if (sqlite3_open_v2(catalog.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT MAX(version) FROM schema_migrations", -1, &st, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return v;
}

// The parts of a hit that must not change across an upgrade. A hybrid hit's fused score may:
// how much weight the vector side gets is the fusion's choice, and it became per query in
// issue 27 (docs/search.md); which hits, in which order, must stay.
json essence(const json& hits, bool with_scores = true) {
  json out = json::array();
  for (const auto& h : hits) {
    json e = {{"doc_id", h.value("doc_id", "")},
              {"chunk_id", h.value("chunk_id", "")},
              {"filename", h.value("filename", "")},
              {"offset", h.value("offset", -1)}};
    if (with_scores) e["score"] = std::round(h.value("score", 0.0) * 1e5) / 1e5;
    out.push_back(std::move(e));
  }
  return out;
}

const json* find_kb(const json& list, const std::string& name) {
  for (const auto& kb : list["knowledge_bases"])
    if (kb["name"] == name) return &kb;
  return nullptr;
}

std::vector<fs::path> fixtures() {
  std::vector<fs::path> out;
  for (const auto& e :
       fs::directory_iterator(fs::path(QUARRY_SOURCE_DIR) / "tests/fixtures/upgrade"))
    if (e.is_directory() && fs::exists(e.path() / "data.tar.gz")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Upgrade, EveryReleasedDataDirectoryOpensMigratesAndAnswersTheSame) {
  const auto all = fixtures();
  ASSERT_FALSE(all.empty()) << "no fixture under tests/fixtures/upgrade";
  int newest = 0, migrated = 0;
  for (const fs::path& fixture : all) {
    SCOPED_TRACE(fixture.filename().string());
    TempDir dir;
    const std::string untar =
        "tar -C '" + dir.path().string() + "' -xzf '" + (fixture / "data.tar.gz").string() + "'";
    ASSERT_EQ(std::system(untar.c_str()), 0);
    const int written = std::stoi(fixture.filename().string().substr(1));
    newest = std::max(newest, written);
    ASSERT_EQ(schema_version(dir / "data" / "catalog.db"), written);
    json expected;
    std::ifstream(fixture / "expected.json") >> expected;
    Cli cli(dir);

    // Opened (and migrated) by this build: the same KBs, documents and build in progress.
    auto kbs = cli.json({"kb", "list"});
    ASSERT_EQ(kbs.status, 0) << kbs.err;
    migrated = schema_version(dir / "data" / "catalog.db");
    EXPECT_GE(migrated, written);
    for (const auto& want : expected["kbs"]["knowledge_bases"]) {
      const json* got = find_kb(kbs.json, want["name"]);
      ASSERT_NE(got, nullptr) << want["name"];
      for (const char* key : {"documents", "chunks", "description", "revision"})
        EXPECT_EQ((*got)[key], want[key]) << want["name"] << " " << key;
      EXPECT_EQ((*got)["config"]["embedder"], want["config"]["embedder"]);
      EXPECT_EQ((*got)["vectors"]["serving_revision"], want["vectors"]["serving_revision"]);
      EXPECT_EQ((*got)["vectors"]["building_revision"], want["vectors"]["building_revision"]);
    }

    // The same searches, the same answers (the old revision serves until the new is built).
    for (const auto& s : expected["searches"]) {
      auto r = cli.json({"search", s["query"], "--kb", s["kb"], "--mode", s["mode"]});
      ASSERT_EQ(r.status, 0) << s.dump() << r.err;
      const bool scores = s["mode"] != "hybrid" && s["mode"] != "auto";
      EXPECT_EQ(essence(r.json["hits"], scores), essence(s["hits"], scores))
          << s["kb"] << " " << s["mode"] << " " << s["query"];
    }

    // Tokens and the pump's state are kept.
    auto tokens = cli.json({"token", "list"});
    EXPECT_EQ(tokens.json, expected["tokens"]);
    auto pump = cli.json({"pump", "list"});
    ASSERT_EQ(pump.status, 0) << pump.err;
    EXPECT_EQ(pump.json["spend"]["monthly_budget"], expected["pump"]["spend"]["monthly_budget"]);
    EXPECT_EQ(pump.json["spend"]["used"], expected["pump"]["spend"]["used"]);
    ASSERT_EQ(pump.json["use_cases"].size(), expected["pump"]["use_cases"].size());
    for (std::size_t i = 0; i < pump.json["use_cases"].size(); ++i)
      for (const char* key : {"name", "revision", "config"})
        EXPECT_EQ(pump.json["use_cases"][i][key], expected["pump"]["use_cases"][i][key]) << key;

    // Converges: the build in progress completes and its revision serves.
    auto sweep = cli.json({"reindex"});
    ASSERT_EQ(sweep.status, 0) << sweep.err;
    auto after = cli.json({"kb", "list"});
    for (const auto& want : expected["kbs"]["knowledge_bases"]) {
      const json* got = find_kb(after.json, want["name"]);
      ASSERT_NE(got, nullptr);
      const json& v = (*got)["vectors"];
      EXPECT_EQ(v["pending"], 0) << want["name"];
      EXPECT_EQ(v["building_revision"], nullptr) << want["name"];
      if (!want["vectors"]["building_revision"].is_null()) {
        EXPECT_EQ(v["serving_revision"], want["vectors"]["building_revision"]) << want["name"];
      }
    }
    for (const auto& s : expected["searches"]) {
      auto r = cli.json({"search", s["query"], "--kb", s["kb"], "--mode", s["mode"]});
      ASSERT_EQ(r.status, 0) << r.err;
      if (s["mode"] == "keyword") {  // vectors now come from the new model
        EXPECT_EQ(essence(r.json["hits"]), essence(s["hits"])) << s["query"];
      } else {
        EXPECT_FALSE(r.json["hits"].empty()) << s["mode"] << " " << s["query"];
      }
    }
  }
  // A schema change comes with its fixture, written by the build that has it.
  EXPECT_EQ(newest, migrated) << "the catalog schema is now v" << migrated
                              << ": add its fixture with `tests/fixtures/upgrade/make_fixture.sh "
                                 "build/quarry v"
                              << migrated << "`";
}

}  // namespace
}  // namespace quarry::e2e
