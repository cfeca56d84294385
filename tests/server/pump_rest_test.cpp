// The pump over REST (SPEC §8, §9): the status listing, `_run`, `_embed` (text embedded exactly
// as sent, with the revision), events that the server's scheduler carries out, 402 when the
// spend budget is used up, and permissions decided before the use case is looked up.
#include <chrono>
#include <filesystem>

#include "catalog/catalog.h"
#include "pump/pump.h"
#include "pump/sqlite_app.h"
#include "server_fixture.h"

namespace quarry::testing {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

class PumpRest : public ServerTest {
 protected:
  fs::path apps() const { return dir / "apps"; }
  std::unique_ptr<pump::App> app;

  // Deploys one use case over the app's notes (batch 10, listening to note.created).
  void SetUp() override {
    fs::create_directories(apps());
    fs::create_directories(data);
    app = std::make_unique<pump::App>(apps() / "app.db");
    app->add_notes(1, 5);
    json uc = pump::use_case(10);
    uc["on"] = {"note.created"};
    write_file(apps() / "notes.json", uc.dump());
    with_pump([&](pump::Pump& p) { p.deploy(apps().string(), "hash:64", {}); });
  }

  void with_pump(const std::function<void(pump::Pump&)>& f) {
    auto cat = catalog::Catalog::open(data + "/catalog.db");
    pump::Pump p(data, *cat, [](const std::string&) { return std::string(); });
    f(p);
  }

  json use_case_status() {
    auto l = get("/pump/use-cases");
    EXPECT_EQ(l.status, 200) << l.body;
    return l.json["use_cases"][0];
  }
};

TEST_F(PumpRest, RunListAndEmbed) {
  server::ServeOptions o;
  o.pump = false;  // runs only when asked here
  start(o);
  auto before = get("/pump/use-cases");
  ASSERT_EQ(before.status, 200) << before.body;
  EXPECT_FALSE(before.json["scheduler"].get<bool>());
  ASSERT_EQ(before.json["use_cases"].size(), 1u);
  auto st = before.json["use_cases"][0];
  for (const char* k : {"use_case", "config", "revision", "config_revision", "running", "pending",
                        "next_run_at", "attempts", "tombstoned", "last_run_at", "last_error",
                        "last_failed", "last_skipped", "usage_entries"})
    EXPECT_TRUE(st.contains(k)) << k;
  EXPECT_TRUE(st["pending"].get<bool>());  // the deploy's trigger, waiting for a scheduler
  EXPECT_TRUE(st["last_run_at"].is_null());

  auto run = send_raw("POST", "/pump/use-cases/notes/_run", "", "application/json");
  ASSERT_EQ(run.status, 200) << run.body;
  EXPECT_EQ(run.json["status"], "ok");
  EXPECT_EQ(run.json["use_case"], "notes");
  EXPECT_EQ(run.json["processed"], 5);
  EXPECT_TRUE(run.json["drained"].get<bool>());
  for (const char* k : {"failed", "skipped", "blocked", "batches"})
    EXPECT_TRUE(run.json.contains(k)) << k;
  EXPECT_EQ(app->count(), 5);
  EXPECT_EQ(send("POST", "/pump/use-cases/notes/_run", {{"force", true}}).status, 400);

  st = use_case_status();
  EXPECT_FALSE(st["pending"].get<bool>());
  EXPECT_FALSE(st["last_run_at"].is_null());
  EXPECT_EQ(st["usage_entries"], 1);
  const std::string revision = st["revision"];
  EXPECT_EQ(app->count("revision = '" + revision + "'"), 5);

  auto e1 = send("POST", "/pump/use-cases/notes/_embed", {{"text", "pumps"}});
  auto e2 = send("POST", "/pump/use-cases/notes/_embed", {{"text", "  pumps\n"}});
  ASSERT_EQ(e1.status, 200) << e1.body;
  EXPECT_EQ(e1.json["revision"], revision);
  EXPECT_EQ(e1.json["embedding"].size(), 64u);
  ASSERT_EQ(e2.status, 200) << e2.body;
  with_pump([&](pump::Pump& p) {  // the same vector as the pump's own embed of the same text
    EXPECT_EQ(e2.json["embedding"], json(p.embed("notes", "  pumps\n").embedding));
  });
  for (const json& bad : {json{{"text", "  \n\t"}}, json{{"text", std::string(100001, 'a')}},
                          json::object(), json{{"text", "x"}, {"model", "y"}}}) {
    auto r = send("POST", "/pump/use-cases/notes/_embed", bad);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(error_code(r), "invalid_argument");
  }
  EXPECT_EQ(
      send("POST", "/pump/use-cases/notes/_embed", {{"text", std::string(100000, 'a')}}).status,
      200);
  EXPECT_EQ(send("POST", "/pump/use-cases/nope/_embed", {{"text", "x"}}).status, 404);
  auto missing = send_raw("POST", "/pump/use-cases/nope/_run", "", "application/json");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(error_code(missing), "not_found");

  // An event with no scheduler: queued, and the listing says so.
  auto ev = send("POST", "/events", {{"name", "note.created"}});
  ASSERT_EQ(ev.status, 202) << ev.body;
  EXPECT_EQ(ev.json["triggered"], json::array({"notes"}));
  EXPECT_TRUE(use_case_status()["pending"].get<bool>());
  EXPECT_EQ(send("POST", "/events", {{"name", "other"}}).json["triggered"], json::array());
  EXPECT_EQ(send("POST", "/events", {{"name", "has space"}}).status, 400);
  EXPECT_EQ(send("POST", "/events", json::object()).status, 400);
}

TEST_F(PumpRest, TheServerRunsWhatEventsAndDeploysQueue) {
  start();  // with the scheduler: the deploy's trigger runs at once
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (app->count() < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(app->count(), 5);
  EXPECT_TRUE(get("/pump/use-cases").json["scheduler"].get<bool>());

  app->add_notes(6, 8);
  auto ev = send("POST", "/events", {{"name", "note.created"}});
  ASSERT_EQ(ev.status, 202) << ev.body;
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (app->count() < 8 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(app->count(), 8);
}

TEST_F(PumpRest, TheSpendBudgetAnswers402) {
  with_pump([](pump::Pump& p) { p.set_budget(0, {}); });
  server::ServeOptions o;
  o.pump = false;
  start(o);
  auto run = send_raw("POST", "/pump/use-cases/notes/_run", "", "application/json");
  EXPECT_EQ(run.status, 402) << run.body;
  EXPECT_EQ(error_code(run), "budget_exhausted");
  auto emb = send("POST", "/pump/use-cases/notes/_embed", {{"text", "x"}});
  EXPECT_EQ(emb.status, 402);
  auto st = use_case_status();
  EXPECT_TRUE(st["parked"].get<bool>());
  EXPECT_EQ(get("/pump/use-cases").json["spend"]["monthly_budget"], 0);
  EXPECT_EQ(app->count(), 0);
}

class PumpRestAuth : public PumpRest {
 protected:
  std::string reader, writer, limited;
  void SetUp() override {
    PumpRest::SetUp();
    auto e = engine();
    reader = e->create_token("dashboard", "read", {}).secret;
    writer = e->create_token("app", "write", {}).secret;
    limited = e->create_token("team-a", "admin", {"alpha"}).secret;
    server::ServeOptions o;
    o.require_token = true;
    o.pump = false;
    start(o);
  }
};

TEST_F(PumpRestAuth, PermissionsComeBeforeTheLookup) {
  EXPECT_EQ(get("/pump/use-cases", "").status, 401);
  EXPECT_EQ(get("/pump/use-cases", reader).status, 200);
  // Read may not spend, whether or not the use case exists: same answer.
  for (const char* name : {"notes", "nope"}) {
    auto run = send_raw("POST", std::string("/pump/use-cases/") + name + "/_run", "",
                        "application/json", reader);
    EXPECT_EQ(run.status, 403) << name;
    EXPECT_EQ(run.json["error"]["details"]["required_scope"], "write");
    auto emb =
        send("POST", std::string("/pump/use-cases/") + name + "/_embed", {{"text", "x"}}, reader);
    EXPECT_EQ(emb.status, 403) << name;
    // A token limited to some KBs reaches no use case, not even with admin scope.
    auto lim = send_raw("POST", std::string("/pump/use-cases/") + name + "/_run", "",
                        "application/json", limited);
    EXPECT_EQ(lim.status, 403) << name;
    EXPECT_EQ(error_code(lim), "forbidden");
  }
  EXPECT_EQ(get("/pump/use-cases", limited).status, 403);
  EXPECT_EQ(send("POST", "/events", {{"name", "note.created"}}, reader).status, 403);
  EXPECT_EQ(send("POST", "/events", {{"name", "note.created"}}, limited).status, 403);
  EXPECT_EQ(app->count(), 0);

  EXPECT_EQ(send_raw("POST", "/pump/use-cases/nope/_run", "", "application/json", writer).status,
            404);
  EXPECT_EQ(send("POST", "/events", {{"name", "note.created"}}, writer).status, 202);
  auto run = send_raw("POST", "/pump/use-cases/notes/_run", "", "application/json", writer);
  EXPECT_EQ(run.status, 200) << run.body;
  EXPECT_EQ(app->count(), 5);
}

}  // namespace
}  // namespace quarry::testing
