// The pump's triggers and spend (SPEC §8): cron schedules, events, manual triggers on parked
// and backing-off use cases, the server's scheduler running what they queue (and continuing a
// run stopped at the 20-batch cap), and the monthly spend budget with its usage entries.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include "catalog/catalog.h"
#include "core/util.h"
#include "embed/provider.h"
#include "pump/cron.h"
#include "pump/pump.h"
#include "pump/scheduler.h"
#include "pump/sqlite_app.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::pump {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

// ms of a UTC date and time.
std::int64_t utc(int y, int mon, int d, int h, int min) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = min;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000;
}

Code cron_error(const std::string& expr) {
  try {
    Cron::parse(expr, "x.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.details().at("field"), "cron");
    return e.code();
  }
  return Code::ok;
}

TEST(Cron, FieldsListsRangesAndSteps) {
  auto c = Cron::parse("*/15 9-17 * * 1-5", "x.json");
  EXPECT_TRUE(c.matches(utc(2026, 12, 1, 9, 0)));  // a Tuesday
  EXPECT_TRUE(c.matches(utc(2026, 12, 1, 17, 45)));
  EXPECT_FALSE(c.matches(utc(2026, 12, 1, 17, 46)));
  EXPECT_FALSE(c.matches(utc(2026, 12, 1, 18, 0)));
  EXPECT_FALSE(c.matches(utc(2026, 12, 6, 10, 0)));                           // a Sunday
  EXPECT_EQ(c.next_after(utc(2026, 12, 4, 17, 45)), utc(2026, 12, 7, 9, 0));  // Fri -> Mon

  auto lists = Cron::parse("5,10/20 0 1 1,7 *", "x.json");  // 10/20: 10, 30, 50
  for (int m : {5, 10, 30, 50}) EXPECT_TRUE(lists.matches(utc(2027, 7, 1, 0, m))) << m;
  EXPECT_FALSE(lists.matches(utc(2027, 7, 1, 0, 20)));
  EXPECT_FALSE(lists.matches(utc(2027, 8, 1, 0, 5)));

  // Sunday is 0 and 7.
  EXPECT_TRUE(Cron::parse("0 0 * * 7", "x.json").matches(utc(2026, 12, 6, 0, 0)));
  EXPECT_TRUE(Cron::parse("0 0 * * 0", "x.json").matches(utc(2026, 12, 6, 0, 0)));
}

TEST(Cron, BothDayFieldsRestrictedMatchEither) {
  auto c = Cron::parse("0 12 13 * 5", "x.json");     // the 13th, or any Friday
  EXPECT_TRUE(c.matches(utc(2026, 12, 13, 12, 0)));  // a Sunday the 13th
  EXPECT_TRUE(c.matches(utc(2026, 12, 4, 12, 0)));   // Friday the 4th
  EXPECT_FALSE(c.matches(utc(2026, 12, 5, 12, 0)));
  // One restricted: both must hold ("*/2" in the day field counts as restricted).
  EXPECT_FALSE(Cron::parse("0 12 13 * *", "x.json").matches(utc(2026, 12, 4, 12, 0)));
  EXPECT_EQ(Cron::parse("0 0 29 2 *", "x.json").next_after(utc(2026, 12, 1, 0, 0)),
            utc(2028, 2, 29, 0, 0));
  EXPECT_EQ(Cron::parse("0 0 31 2 *", "x.json").next_after(utc(2026, 12, 1, 0, 0)), -1);
}

TEST(Cron, BadExpressionsNameTheField) {
  for (const char* bad : {"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *",
                          "* * * 13 *", "* * * * 8", "5-1 * * * *", "*/0 * * * *", "a * * * *",
                          "1,,2 * * * *", "1, * * * *", "*/61 * * * *", "-1 * * * *"})
    EXPECT_EQ(cron_error(bad), Code::invalid_argument) << "'" << bad << "'";
}

class PumpTriggers : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(apps());
    app_ = std::make_unique<App>(apps() / "app.db");
    cat_ = catalog::Catalog::open((data_.path() / "catalog.db").string());
    pump_ = std::make_unique<Pump>(data_.path().string(), *cat_, secret());
  }
  static SecretLookup secret() {
    return [](const std::string&) { return std::string(); };
  }
  fs::path apps() const { return data_.path() / "apps"; }
  void write(const std::string& name, const json& j) {
    quarry::testing::write_file(apps() / (name + ".json"), j.dump(2));
  }
  void deploy() { pump_->deploy(apps().string(), "hash:64", catalog::AuditEntry{}); }
  catalog::PumpUseCaseRow row(const std::string& name) { return *cat_->pump().find(name); }
  // Takes the deploy's trigger off a use case, as a finished run would.
  void settle(const std::string& name) {
    const auto now = core::now_ms();
    ASSERT_TRUE(cat_->pump().claim_lease(name, "test", now, now - kLeaseStaleMs));
    ASSERT_TRUE(cat_->pump().finish_run(name, "test", catalog::PumpRunEnd{}));
  }
  template <class Pred>
  bool eventually(Pred p, int ms = 20000) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      if (p()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return p();
  }

  quarry::testing::TempDir data_;
  std::unique_ptr<App> app_;
  std::unique_ptr<catalog::Catalog> cat_;
  std::unique_ptr<Pump> pump_;
};

TEST_F(PumpTriggers, EventsQueueTheUseCasesThatListenToThem) {
  json a = use_case(10), b = use_case(10), c = use_case(10);
  a["on"] = {"note.created", "note.updated"};
  b["on"] = {"note.created"};
  write("a", a);
  write("b", b);
  write("c", c);
  deploy();
  for (auto n : {"a", "b", "c"}) settle(n);
  EXPECT_EQ(pump_->due(core::now_ms()).size(), 0u);

  EXPECT_EQ(pump_->event("note.updated"), std::vector<std::string>{"a"});
  EXPECT_EQ(pump_->event("note.created"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(pump_->event("note.deleted").empty());
  EXPECT_TRUE(row("a").pending);
  EXPECT_FALSE(row("c").pending);
  EXPECT_EQ(pump_->due(core::now_ms()), (std::vector<std::string>{"a", "b"}));
  for (const char* bad : {"", "two words", "tab\there", "é"})
    EXPECT_EQ(quarry::testing::code_of([&] { pump_->event(bad); }), Code::invalid_argument) << bad;
  EXPECT_EQ(quarry::testing::code_of([&] { pump_->trigger("nope"); }), Code::not_found);
}

TEST_F(PumpTriggers, TriggersGiveAParkedUseCaseOneMoreAttemptAndKeepABackoff) {
  json uc = use_case(10);
  uc["on"] = {"go"};
  write("notes", uc);
  deploy();
  settle("notes");
  const auto now = core::now_ms();

  // Backing off: a trigger queues nothing sooner than the retry.
  ASSERT_TRUE(cat_->pump().claim_lease("notes", "test", now, now - kLeaseStaleMs));
  catalog::PumpRunEnd failed;
  failed.attempts = 2;
  failed.repoke = true;
  failed.next_run_at = now + 40000;
  ASSERT_TRUE(cat_->pump().finish_run("notes", "test", failed));
  EXPECT_EQ(pump_->event("go").size(), 1u);
  EXPECT_EQ(row("notes").next_run_at, now + 40000);
  EXPECT_TRUE(pump_->due(now).empty());
  EXPECT_EQ(pump_->due(now + 40000), std::vector<std::string>{"notes"});

  // Parked: the next trigger makes it due now.
  ASSERT_TRUE(cat_->pump().claim_lease("notes", "test", now, now - kLeaseStaleMs));
  catalog::PumpRunEnd parked;
  parked.attempts = 5;
  parked.parked = true;
  ASSERT_TRUE(cat_->pump().finish_run("notes", "test", parked));
  EXPECT_TRUE(pump_->due(core::now_ms()).empty());
  pump_->trigger("notes");
  EXPECT_EQ(pump_->due(core::now_ms()), std::vector<std::string>{"notes"});

  // A use case whose lease a live run holds is not due, whatever is queued.
  ASSERT_TRUE(cat_->pump().claim_lease("notes", "other-host:1:x", core::now_ms(),
                                       core::now_ms() - kLeaseStaleMs));
  pump_->trigger("notes");
  EXPECT_TRUE(pump_->due(core::now_ms()).empty());
}

TEST_F(PumpTriggers, CronFiresForAMinuteThatPassed) {
  json hourly = use_case(10), never = use_case(10);
  hourly["cron"] = "30 * * * *";
  never["cron"] = "0 0 31 2 *";
  write("hourly", hourly);
  write("never", never);
  deploy();
  settle("hourly");
  settle("never");
  EXPECT_TRUE(pump_->cron_tick(utc(2026, 12, 1, 10, 30), utc(2026, 12, 1, 11, 29)).empty());
  EXPECT_EQ(pump_->cron_tick(utc(2026, 12, 1, 11, 29), utc(2026, 12, 1, 11, 30)),
            std::vector<std::string>{"hourly"});
  EXPECT_TRUE(row("hourly").pending);
  EXPECT_FALSE(row("never").pending);
}

TEST_F(PumpTriggers, TheSchedulerRunsDeploysEventsAndContinuesPastTheBatchCap) {
  app_->add_notes(1, 230);  // 10 per batch: 20 batches, then the re-poke's 3 more
  json uc = use_case(10);
  uc["on"] = {"note.created"};
  write("notes", uc);
  deploy();

  SchedulerOptions so;
  so.data_dir = data_.path().string();
  so.secret = secret();
  so.tick_ms = 50;
  Scheduler sched(so);
  ASSERT_TRUE(eventually([&] { return app_->count() == 230; })) << app_->count();
  ASSERT_TRUE(
      eventually([&] { return !row("notes").pending && row("notes").lease_owner.empty(); }));
  // The cap stopped the first run. The scheduler counts a run once it has returned, just after
  // it released the lease: wait for the count too (under ASan it lagged the row once).
  EXPECT_TRUE(eventually([&] { return sched.runs_finished() >= 2; })) << sched.runs_finished();
  EXPECT_EQ(row("notes").attempts, 0);

  app_->add_notes(231, 235);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(app_->count(), 230);  // nothing runs without a trigger
  EXPECT_EQ(pump_->event("note.created").size(), 1u);
  sched.poke();
  EXPECT_TRUE(eventually([&] { return app_->count() == 235; })) << app_->count();
}

TEST_F(PumpTriggers, TheBudgetStopsRunsAndEmbedsAndCountsUsageEntries) {
  // 300 one-chunk notes in one batch: three provider calls of <= 128 chunks.
  app_->add_notes(1, 300);
  write("notes", use_case(300));
  deploy();
  pump_->set_budget(2, catalog::AuditEntry{});
  EXPECT_EQ(quarry::testing::code_of([&] { pump_->run("notes"); }), Code::budget_exhausted);
  auto r = row("notes");
  EXPECT_TRUE(r.parked);  // not retryable: parked at once
  EXPECT_EQ(r.last_error.rfind("budget_exhausted: ", 0), 0u) << r.last_error;
  EXPECT_EQ(app_->count(), 0);  // the batch never reached the app
  auto sp = pump_->spend();
  EXPECT_EQ(sp.used, 2);
  ASSERT_TRUE(sp.monthly_budget.has_value());
  EXPECT_EQ(*sp.monthly_budget, 2);
  EXPECT_EQ(sp.by_use_case["notes"].first, 2);
  EXPECT_EQ(sp.by_use_case["notes"].second, 256);
  EXPECT_EQ(quarry::testing::code_of([&] { pump_->embed("notes", "pumps"); }),
            Code::budget_exhausted);

  // Raised: the run finishes (3 entries), and a query embedding is one more.
  pump_->set_budget(10, catalog::AuditEntry{});
  auto run = pump_->run("notes");
  EXPECT_EQ(run.processed, 300);
  EXPECT_EQ(run.usage_entries, 3);
  EXPECT_FALSE(row("notes").parked);
  pump_->embed("notes", "pumps");
  EXPECT_EQ(pump_->spend().used, 6);
  auto listed = pump_->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].usage_entries, 6);
  EXPECT_EQ(listed[0].usage_chunks, 256 + 300 + 1);

  pump_->set_budget(std::nullopt, catalog::AuditEntry{});
  EXPECT_FALSE(pump_->spend().monthly_budget.has_value());
  EXPECT_EQ(quarry::testing::code_of([&] { pump_->set_budget(-1, catalog::AuditEntry{}); }),
            Code::invalid_argument);
  EXPECT_EQ(month_start_utc(utc(2026, 12, 31, 23, 59)), utc(2026, 12, 1, 0, 0));
}

// Records what it is asked to embed.
class Recorder final : public embed::EmbeddingProvider {
 public:
  explicit Recorder(std::vector<std::string>* seen) : seen_(seen) {}
  std::string id() const override { return "recorder"; }
  std::string model() const override { return "r"; }
  int dimensions() const override { return 2; }
  int max_input_tokens() const override { return 512; }
  std::size_t count_tokens(std::string_view t) const override { return t.size() / 4 + 1; }
  std::string identity() const override { return "recorder:r:2"; }
  std::vector<embed::Vector> embed_documents(const std::vector<std::string>& texts) override {
    std::vector<embed::Vector> out;
    for (const auto& t : texts) out.push_back(embed_query(t));
    return out;
  }
  embed::Vector embed_query(const std::string& text) override {
    seen_->push_back(text);
    return {1.0f, 0.0f};
  }

 private:
  std::vector<std::string>* seen_;
};

TEST_F(PumpTriggers, QueryTextIsEmbeddedExactlyAsSent) {
  write("notes", use_case(10));
  pump_->deploy(apps().string(), "recorder:r", catalog::AuditEntry{});
  std::vector<std::string> seen;
  auto providers = std::make_shared<ProviderCache>(data_.path().string(), secret());
  providers->put("recorder:r", std::make_unique<Recorder>(&seen));
  Pump pump(data_.path().string(), *cat_, secret(), providers);
  const std::string text = "  Pumps,\tvalves\n\n  and   water \n";
  auto r = pump.embed("notes", text);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], text);
  EXPECT_EQ(r.embedding, (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(r.revision, revision(parse_use_case("notes", use_case(10), "notes", apps().string()),
                                 "recorder:r:2"));
}

}  // namespace
}  // namespace quarry::pump
