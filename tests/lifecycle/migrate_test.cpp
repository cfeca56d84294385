// Moving a KB's vectors to another store (SPEC §6, `quarry kb migrate-store`): copied from the
// embedding cache, never re-embedded, counted in the target, then switched; the old store
// forgets the KB. A store change by `kb set` while vectors exist is refused, not half done.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/engine_fixture.h"
#include "numbered.h"
#include "store/vector_store.h"

namespace quarry::lifecycle::testing_support {
namespace {
using nlohmann::json;

class MigrateStore : public EngineTest {
 protected:
  void SetUp() override {
    engine->create_kb("k", R"({"embedder": {"provider": "hash:64"}})");
    a = engine->ingest_bytes("k", "a.md", "Tides follow the moon around the earth.\n", {}).doc_id;
    b = engine->ingest_bytes("k", "b.md", "Volcanoes erupt molten lava and ash.\n", {}).doc_id;
    auto r = engine->reindex("k", {});
    ASSERT_EQ(r.pending, 0);
  }

  std::string top_vector_hit(const std::string& q) {
    SearchRequest s;
    s.kb = "k";
    s.query = q;
    s.mode = Mode::vector;
    auto res = engine->search(s);
    return res.hits.empty() ? "" : res.hits[0].doc_id;
  }

  std::string a, b;
};

TEST_F(MigrateStore, CopiesFromTheCacheVerifiesAndSwitches) {
  const auto before = engine->describe_kb("k");
  ASSERT_EQ(before.vectors.stored, before.chunks);
  ASSERT_EQ(top_vector_hit("molten lava"), b);

  auto r = engine->migrate_store("k", "memory", "{}");
  EXPECT_EQ(r.from_store, "embedded");
  EXPECT_EQ(r.to_store, "memory");
  EXPECT_EQ(r.documents, 2);
  EXPECT_EQ(r.chunks, before.chunks);
  EXPECT_EQ(r.revision, before.vectors.serving_revision);

  const auto after = engine->describe_kb("k");
  EXPECT_EQ(after.config.store.id, "memory");
  EXPECT_EQ(after.revision, before.revision) << "a store is not part of the revision";
  EXPECT_EQ(after.vectors.stored, before.chunks);
  EXPECT_EQ(after.vectors.ready, 2);
  EXPECT_EQ(after.index_status.vector, "ready");
  EXPECT_EQ(top_vector_hit("molten lava"), b);
  EXPECT_EQ(top_vector_hit("tides and the moon"), a);
  // The embedded store no longer holds the KB's vectors.
  auto old = store::make_embedded_store(json::object(), store::StoreContext{canonical_data, {}});
  EXPECT_EQ(old->count(store::Scope{"k", r.revision, 64}), 0);
  // Nothing was embedded again: a sweep finds no work.
  auto sweep = engine->reindex("k", {});
  EXPECT_EQ(sweep.chunks_embedded, 0);
  EXPECT_EQ(sweep.documents, 0);
  // The audit log names the move.
  bool logged = false;
  for (const auto& e : engine->activity("k", 20)) logged = logged || e.action == "kb.migrate_store";
  EXPECT_TRUE(logged);
}

TEST_F(MigrateStore, TheOldStoreForgetsTheKb) {
  engine->migrate_store("k", "memory", "{}");
  // Back to the embedded store: it must start from nothing and end with exactly the vectors.
  auto back = engine->migrate_store("k", "embedded", "{}");
  EXPECT_EQ(back.chunks, engine->describe_kb("k").chunks);
  EXPECT_EQ(engine->describe_kb("k").vectors.stored, back.chunks);
  EXPECT_EQ(top_vector_hit("molten lava"), b);
}

TEST_F(MigrateStore, KbSetRefusesAStoreChangeThatWouldStrandVectors) {
  try {
    engine->set_kb("k", {{"store.id", "memory"}});
    ADD_FAILURE() << "store changed under stored vectors";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::conflict);
    EXPECT_NE(e.message().find("migrate-store"), std::string::npos);
  }
  EXPECT_EQ(engine->describe_kb("k").config.store.id, "embedded");
}

TEST_F(MigrateStore, RefusesWhatItCannotDoWithoutChangingAnything) {
  try {
    engine->migrate_store("k", "embedded", "{}");
    ADD_FAILURE() << "migrated onto itself";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
  }
  try {
    engine->migrate_store("k", "no-such-store", "{}");
    ADD_FAILURE() << "unknown store accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
  }
  // Without the cached vectors a move would mean re-embedding: refused, KB unchanged.
  std::filesystem::remove_all(canonical_data + "/cache");
  engine.reset();
  engine = open_engine();
  try {
    engine->migrate_store("k", "memory", "{}");
    ADD_FAILURE() << "migrated without the vectors";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::conflict);
    EXPECT_EQ(e.details().at("missing_chunks"), std::to_string(engine->describe_kb("k").chunks));
  }
  EXPECT_EQ(engine->describe_kb("k").config.store.id, "embedded");
  EXPECT_EQ(engine->describe_kb("k").vectors.stored, engine->describe_kb("k").chunks);
  EXPECT_EQ(top_vector_hit("molten lava"), b);
}

// Ctrl-C during `kb migrate-store` (the CLI sets `cancel`): the copy stops after the page in
// hand, the target is emptied of what was copied, the KB still serves from where it was, and
// running it again completes the move.
TEST_F(MigrateStore, CancelledAfterAPageLeavesTheKbAsItWasAndTheNextRunCompletes) {
  for (int i = 0; i < 450; ++i)  // three pages of 200 documents
    engine->ingest_bytes("k", quarry::testing::numbered("n", i) + ".md",
                         "Note " + std::to_string(i) + " on rivers and stones.\n", {});
  ASSERT_EQ(engine->reindex("k", {}).pending, 0);
  engine->migrate_store("k", "memory", "{}");
  const auto before = engine->describe_kb("k");
  ASSERT_EQ(before.config.store.id, "memory");

  std::atomic<bool> cancel{false};
  std::vector<std::int64_t> pages;
  StoreMigrationOptions o;
  o.cancel = &cancel;
  o.progress = [&](std::int64_t done, std::int64_t total) {
    pages.push_back(done);
    EXPECT_EQ(total, 452);
    cancel.store(true);  // as the signal handler does, between two pages
  };
  try {
    engine->migrate_store("k", "embedded", "{}", o);
    ADD_FAILURE() << "a cancelled migration completed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::cancelled);
    EXPECT_NE(e.message().find("nothing changed"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("run the same command again"), std::string::npos) << e.message();
  }
  EXPECT_EQ(pages, std::vector<std::int64_t>{200}) << "stopped after the first page";
  const auto after = engine->describe_kb("k");
  EXPECT_EQ(after.config.store.id, "memory");
  EXPECT_EQ(after.vectors.stored, before.vectors.stored);
  EXPECT_EQ(after.vectors.ready, 452);
  EXPECT_EQ(top_vector_hit("molten lava"), b);
  auto target = store::make_embedded_store(json::object(), store::StoreContext{canonical_data, {}});
  EXPECT_EQ(target->count(store::Scope{"k", before.vectors.serving_revision, 64}), 0)
      << "the target keeps nothing of a stopped copy";

  std::vector<std::int64_t> resumed;
  StoreMigrationOptions again;
  again.progress = [&](std::int64_t done, std::int64_t) { resumed.push_back(done); };
  auto r = engine->migrate_store("k", "embedded", "{}", again);
  EXPECT_EQ(resumed, (std::vector<std::int64_t>{200, 400, 452}));
  EXPECT_EQ(r.documents, 452);
  EXPECT_EQ(r.chunks, before.chunks);
  EXPECT_EQ(engine->describe_kb("k").config.store.id, "embedded");
  EXPECT_EQ(top_vector_hit("molten lava"), b);
}

}  // namespace
}  // namespace quarry::lifecycle::testing_support
