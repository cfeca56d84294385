// The SQLite catalog: migrations, WAL, KBs, documents, chunks, FTS5 upkeep, isolation, audit.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "catalog_fixture.h"
#include "quarry/deadline.h"
#include "quarry/error.h"

namespace quarry::catalog {
namespace {
using namespace testing_support;
using nlohmann::json;

TEST_F(CatalogTest, FreshCatalogIsAtTheLatestSchemaVersion) {
  EXPECT_EQ(cat->schema_version(), latest_schema_version());
  EXPECT_GE(latest_schema_version(), 1);
}

TEST_F(CatalogTest, MigrationsAreIdempotentAcrossReopens) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  cat.reset();
  for (int i = 0; i < 3; ++i) {
    auto again = Catalog::open(path);
    EXPECT_EQ(again->schema_version(), latest_schema_version());
    EXPECT_EQ(pragma_text(sqlite_handle(*again), "SELECT COUNT(*) FROM schema_migrations"),
              std::to_string(latest_schema_version()));
    ASSERT_EQ(again->kbs().list().size(), 1u);  // data survives re-migration
  }
}

TEST_F(CatalogTest, TwoConnectionsOpenTheSameFile) {
  auto second = Catalog::open(path);
  EXPECT_EQ(second->schema_version(), latest_schema_version());
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  EXPECT_TRUE(second->kbs().find("k").has_value());  // readers see committed writes
}

TEST_F(CatalogTest, AReadSnapshotSeesOneStateAndTheNextReadSeesNewWrites) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  auto writer = Catalog::open(path);
  {
    Catalog::ReadSnapshot snapshot(*cat);
    EXPECT_EQ(cat->kbs().stats(ref(*cat, "k")).documents, 0);
    auto d = make_doc("k", "a.md");
    writer->documents().put(ref(*writer, d.kb), d, make_chunks({"zeppelin"}),
                            who("document.add", "k", d.id));
    // Committed by another connection meanwhile: not in this snapshot.
    EXPECT_EQ(cat->kbs().stats(ref(*cat, "k")).documents, 0);
    EXPECT_FALSE(cat->documents().any(ref(*cat, "k"), {}));
    EXPECT_EQ(sqlite3_get_autocommit(sqlite_handle(*cat)), 0);
  }
  // The snapshot ended: nothing is left open, and the write is seen.
  EXPECT_NE(sqlite3_get_autocommit(sqlite_handle(*cat)), 0);
  EXPECT_EQ(cat->kbs().stats(ref(*cat, "k")).documents, 1);
  EXPECT_TRUE(cat->documents().any(ref(*cat, "k"), {}));
}

TEST_F(CatalogTest, AReadSnapshotInsideABatchLeavesTheBatchInCharge) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  {
    Catalog::Batch batch(*cat);
    auto d = make_doc("k", "a.md");
    cat->documents().put(ref(*cat, d.kb), d, make_chunks({"zeppelin"}),
                         who("document.add", "k", d.id));
    { Catalog::ReadSnapshot snapshot(*cat); }
    EXPECT_EQ(sqlite3_get_autocommit(sqlite_handle(*cat)), 0);  // still the batch's transaction
    batch.commit();
  }
  EXPECT_EQ(Catalog::open(path)->kbs().stats(ref(*Catalog::open(path), "k")).documents, 1);
}

TEST_F(CatalogTest, WalModeIsOn) {
  EXPECT_EQ(pragma_text(sqlite_handle(*cat), "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(pragma_text(sqlite_handle(*cat), "PRAGMA foreign_keys"), "1");
}

TEST_F(CatalogTest, CreateListDeleteKb) {
  auto a = cat->kbs().create("alpha", R"({"description":"A"})", who("kb.create", "alpha", "alpha"));
  cat->kbs().create("beta", "{}", who("kb.create", "beta", "beta"));
  EXPECT_EQ(a.name, "alpha");
  EXPECT_EQ(a.config_json, R"({"description":"A"})");
  auto kbs = cat->kbs().list();
  ASSERT_EQ(kbs.size(), 2u);
  EXPECT_EQ(kbs[0].name, "alpha");
  EXPECT_EQ(kbs[1].name, "beta");
  EXPECT_NE(kbs[0].id, kbs[1].id);

  try {
    cat->kbs().create("alpha", "{}", who("kb.create", "alpha", "alpha"));
    FAIL() << "duplicate KB created";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::already_exists);
  }

  auto d = make_doc("alpha", "a.md");
  cat->documents().put(ref(*cat, d.kb), d, make_chunks({"alpha text"}),
                       who("document.add", "alpha", d.id));
  auto deleted = cat->kbs().remove(ref(*cat, "alpha"), who("kb.delete", "alpha", "alpha"));
  EXPECT_EQ(deleted, std::vector<std::string>{d.id});
  EXPECT_FALSE(cat->kbs().find("alpha").has_value());
  ASSERT_EQ(cat->kbs().list().size(), 1u);
  EXPECT_EQ(pragma_text(sqlite_handle(*cat), "SELECT COUNT(*) FROM chunks"), "0");
  EXPECT_EQ(pragma_text(sqlite_handle(*cat), "SELECT COUNT(*) FROM documents"), "0");
  try {
    cat->kbs().get("alpha");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
  }
  expect_integrity(*cat);
}

TEST_F(CatalogTest, RecreatedKbStartsEmpty) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  auto d = make_doc("k", "a.md");
  cat->documents().put(ref(*cat, d.kb), d, make_chunks({"zeppelin"}),
                       who("document.add", "k", d.id));
  cat->kbs().remove(ref(*cat, "k"), who("kb.delete", "k", "k"));
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  EXPECT_TRUE(search_ids(*cat, "k", "zeppelin").empty());
  EXPECT_EQ(cat->kbs().stats(ref(*cat, "k")).documents, 0);
  expect_integrity(*cat);
}

TEST_F(CatalogTest, UpdateKbConfig) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  cat->kbs().update_config(ref(*cat, "k"), R"({"revision":3})", who("kb.set", "k", "k"));
  EXPECT_EQ(cat->kbs().get("k").config_json, R"({"revision":3})");
  EXPECT_THROW(cat->kbs().update_config(ref(*cat, "nope"), "{}", who("kb.set", "nope", "nope")),
               Error);
}

TEST_F(CatalogTest, PutDocumentRoundTripsRowAndChunks) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  auto d = make_doc("k", "dir/a.md", R"({"lang":"en"})");
  d.subject_key = "contact_id";
  d.subject_value = "c1";
  auto chunks = make_chunks({"first chunk", "second chunk"});
  chunks[1].parent_chunk = chunks[0].chunk_id;
  chunks[1].heading_path = {"A", "B"};
  cat->documents().put(ref(*cat, d.kb), d, chunks, who("document.add", "k", d.id));

  auto got = cat->documents().find(ref(*cat, "k"), d.id);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->filename, "dir/a.md");
  EXPECT_EQ(got->metadata_json, R"({"lang":"en"})");
  EXPECT_EQ(got->subject_key, "contact_id");
  EXPECT_EQ(got->subject_value, "c1");
  EXPECT_EQ(got->chunk_count, 2);
  EXPECT_EQ(got->body_offset, 50);
  auto by_name = cat->documents().find_by_filename(ref(*cat, "k"), "dir/a.md");
  ASSERT_TRUE(by_name.has_value());
  EXPECT_EQ(by_name->id, d.id);

  auto stored = cat->documents().chunks_of(ref(*cat, "k"), d.id);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].text, "first chunk");
  EXPECT_EQ(stored[1].text, "second chunk");
  EXPECT_EQ(stored[1].parent_chunk, chunks[0].chunk_id);
  EXPECT_EQ(stored[1].heading_path, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(stored[1].offset, chunks[1].offset);
  EXPECT_EQ(stored[1].length, chunks[1].length);
  EXPECT_EQ(stored[0].chunk_id, chunks[0].chunk_id);
}

TEST_F(CatalogTest, RePutReplacesChunksAndLeavesNoStalePostings) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  auto d = make_doc("k", "a.md");
  cat->documents().put(ref(*cat, d.kb), d,
                       make_chunks({"ancient walrus", "walrus tusks", "more walrus"}),
                       who("document.add", "k", d.id));
  ASSERT_EQ(search_ids(*cat, "k", "walrus").size(), 3u);

  auto d2 = d;
  d2.updated_at += 1;
  cat->documents().put(ref(*cat, d2.kb), d2, make_chunks({"modern penguin"}),
                       who("document.update", "k", d.id));
  EXPECT_TRUE(search_ids(*cat, "k", "walrus").empty());
  EXPECT_TRUE(search_ids(*cat, "k", "ancient").empty());
  EXPECT_EQ(search_ids(*cat, "k", "penguin"), std::vector<std::string>{d.id});
  auto chunks = cat->documents().chunks_of(ref(*cat, "k"), d.id);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].text, "modern penguin");
  EXPECT_EQ(cat->documents().find(ref(*cat, "k"), d.id)->chunk_count, 1);
  EXPECT_EQ(cat->kbs().stats(ref(*cat, "k")).documents, 1);
  EXPECT_EQ(cat->kbs().stats(ref(*cat, "k")).chunks, 1);
  expect_integrity(*cat);
}

TEST_F(CatalogTest, DeleteDocumentRemovesItFromTheKeywordIndex) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  auto a = make_doc("k", "a.md");
  auto b = make_doc("k", "b.md");
  cat->documents().put(ref(*cat, a.kb), a, make_chunks({"shared marmot", "only in a"}),
                       who("document.add", "k", a.id));
  cat->documents().put(ref(*cat, b.kb), b, make_chunks({"shared marmot"}),
                       who("document.add", "k", b.id));
  EXPECT_TRUE(cat->documents().remove(ref(*cat, "k"), a.id, who("document.delete", "k", a.id)));
  EXPECT_EQ(search_ids(*cat, "k", "marmot"), std::vector<std::string>{b.id});
  EXPECT_TRUE(search_ids(*cat, "k", "only").empty());
  EXPECT_FALSE(cat->documents().find(ref(*cat, "k"), a.id).has_value());
  EXPECT_TRUE(cat->documents().chunks_of(ref(*cat, "k"), a.id).empty());
  EXPECT_FALSE(cat->documents().remove(ref(*cat, "k"), a.id, who("document.delete", "k", a.id)));
  expect_integrity(*cat);
}

TEST_F(CatalogTest, KeywordSearchNeverCrossesKbs) {
  cat->kbs().create("one", "{}", who("kb.create", "one", "one"));
  cat->kbs().create("two", "{}", who("kb.create", "two", "two"));
  std::set<std::string> in_one, in_two;
  for (int i = 0; i < 20; ++i) {
    auto d1 = make_doc("one", "doc" + std::to_string(i) + ".md");
    auto d2 = make_doc("two", "doc" + std::to_string(i) + ".md");  // same names, too
    cat->documents().put(ref(*cat, d1.kb), d1, make_chunks({"narwhal common " + std::to_string(i)}),
                         who("document.add", "one", d1.id));
    cat->documents().put(ref(*cat, d2.kb), d2, make_chunks({"narwhal common narwhal"}),
                         who("document.add", "two", d2.id));
    in_one.insert(d1.id);
    in_two.insert(d2.id);
  }
  KeywordQuery q;
  q.match = "\"narwhal\"";
  q.limit = 1000;
  auto rows = keyword_rows(*cat, "one", q);
  EXPECT_EQ(rows.size(), 20u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.doc.kb, "one");
    EXPECT_TRUE(in_one.count(r.doc.id)) << r.doc.id;
  }
  rows = keyword_rows(*cat, "two", q);
  EXPECT_EQ(rows.size(), 20u);
  for (const auto& r : rows) {
    EXPECT_EQ(r.doc.kb, "two");
    EXPECT_TRUE(in_two.count(r.doc.id)) << r.doc.id;
  }
  // by filename too
  EXPECT_EQ(cat->documents().find_by_filename(ref(*cat, "one"), "doc3.md")->kb, "one");
  EXPECT_FALSE(cat->documents().find(ref(*cat, "two"), *in_one.begin()).has_value());
  EXPECT_TRUE(cat->documents().chunks_of(ref(*cat, "two"), *in_one.begin()).empty());
  // deleting a document of one KB through the other KB's name does nothing
  EXPECT_FALSE(cat->documents().remove(ref(*cat, "two"), *in_one.begin(),
                                       who("document.delete", "two", "")));
  EXPECT_EQ(cat->kbs().stats(ref(*cat, "one")).documents, 20);
}

TEST_F(CatalogTest, StatsArePerKb) {
  cat->kbs().create("one", "{}", who("kb.create", "one", "one"));
  cat->kbs().create("two", "{}", who("kb.create", "two", "two"));
  for (int i = 0; i < 3; ++i) {
    auto d = make_doc("one", std::to_string(i) + ".md");
    d.source_bytes = 10 + i;
    d.markdown_bytes = 100 + i;
    cat->documents().put(ref(*cat, d.kb), d, make_chunks({"x", "y"}),
                         who("document.add", "one", d.id));
  }
  auto d = make_doc("two", "t.md");
  cat->documents().put(ref(*cat, d.kb), d, make_chunks({"z"}), who("document.add", "two", d.id));
  auto s1 = cat->kbs().stats(ref(*cat, "one"));
  EXPECT_EQ(s1.documents, 3);
  EXPECT_EQ(s1.chunks, 6);
  EXPECT_EQ(s1.source_bytes, 10 + 11 + 12);
  EXPECT_EQ(s1.markdown_bytes, 100 + 101 + 102);
  auto s2 = cat->kbs().stats(ref(*cat, "two"));
  EXPECT_EQ(s2.documents, 1);
  EXPECT_EQ(s2.chunks, 1);
  cat->kbs().create("empty", "{}", who("kb.create", "empty", "empty"));
  EXPECT_EQ(cat->kbs().stats(ref(*cat, "empty")).documents, 0);
  EXPECT_EQ(cat->kbs().stats(ref(*cat, "empty")).chunks, 0);
}

TEST_F(CatalogTest, EveryWriteIsAudited) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  cat->kbs().update_config(ref(*cat, "k"), "{}", who("kb.set", "k", "k"));
  auto d = make_doc("k", "a.md", R"({"s": 1})");
  cat->documents().put(ref(*cat, d.kb), d, make_chunks({"t"}), who("document.add", "k", d.id));
  cat->documents().put(ref(*cat, d.kb), d, make_chunks({"u"}), who("document.update", "k", d.id));
  auto e = make_doc("k", "e.md", R"({"s": 2})");
  cat->documents().put(ref(*cat, e.kb), e, make_chunks({"t"}), who("document.add", "k", e.id));
  cat->documents().remove(ref(*cat, "k"), d.id, who("document.delete", "k", d.id));
  cat->documents().remove_where(ref(*cat, "k"), core::parse_filter_text(R"({"s": 2})"),
                                who("document.delete_where", "k", ""));
  cat->kbs().remove(ref(*cat, "k"), who("kb.delete", "k", "k"));

  auto rows = cat->audit().list(100);
  ASSERT_EQ(rows.size(), 8u);
  std::vector<std::string> actions;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    actions.push_back(it->action);
    EXPECT_EQ(it->actor, "tester");
    EXPECT_EQ(it->surface, "library");
    EXPECT_EQ(it->kb, "k");
    EXPECT_GT(it->at, 0);
  }
  EXPECT_EQ(actions, (std::vector<std::string>{"kb.create", "kb.set", "document.add",
                                               "document.update", "document.add", "document.delete",
                                               "document.delete_where", "kb.delete"}));
  // delete_where records what it deleted
  auto dw = std::find_if(rows.begin(), rows.end(),
                         [](const AuditRow& r) { return r.action == "document.delete_where"; });
  EXPECT_EQ(json::parse(dw->details_json)["deleted"], json::array({e.id}));
  EXPECT_EQ(cat->audit().list(100, "other").size(), 0u);
  EXPECT_EQ(cat->audit().list(2).size(), 2u);
}

TEST_F(CatalogTest, FailedWriteLeavesNoAuditRow) {
  auto d = make_doc("missing", "a.md");
  EXPECT_THROW(cat->documents().put(ref(*cat, d.kb), d, make_chunks({"x"}),
                                    who("document.add", "missing", d.id)),
               Error);
  EXPECT_TRUE(cat->audit().list(10).empty());
}

TEST_F(CatalogTest, ListDocumentsPaginatesById) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) {
    auto d = make_doc("k", std::to_string(i) + ".md");
    ids.push_back(d.id);
    cat->documents().put(ref(*cat, d.kb), d, {}, who("document.add", "k", d.id));
  }
  std::sort(ids.begin(), ids.end());
  std::vector<std::string> seen;
  std::string cursor;
  while (true) {
    auto page = cat->documents().list(ref(*cat, "k"), cursor, 3);
    if (page.empty()) break;
    EXPECT_LE(page.size(), 3u);
    for (const auto& d : page) seen.push_back(d.id);
    cursor = page.back().id;
  }
  EXPECT_EQ(seen, ids);
}

TEST_F(CatalogTest, IntegrityCheckPassesAfterManyWrites) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  std::vector<DocumentRow> docs;
  for (int i = 0; i < 30; ++i) {
    auto d = make_doc("k", std::to_string(i) + ".md", json{{"i", i}}.dump());
    cat->documents().put(ref(*cat, d.kb), d, make_chunks({"alpha " + std::to_string(i), "beta"}),
                         who("document.add", "k", d.id));
    docs.push_back(d);
  }
  for (int i = 0; i < 30; i += 3)
    cat->documents().put(ref(*cat, docs[static_cast<std::size_t>(i)].kb),
                         docs[static_cast<std::size_t>(i)], make_chunks({"gamma"}),
                         who("document.update", "k", docs[static_cast<std::size_t>(i)].id));
  for (int i = 1; i < 30; i += 3)
    cat->documents().remove(ref(*cat, "k"), docs[static_cast<std::size_t>(i)].id,
                            who("document.delete", "k", ""));
  cat->documents().remove_where(ref(*cat, "k"), core::parse_filter_text(R"({"i": {"$gte": 25}})"),
                                who("document.delete_where", "k", ""));
  expect_integrity(*cat);
  EXPECT_EQ(search_ids(*cat, "k", "gamma").size(), 9u);  // 0,3,...,24 (27 deleted by delete_where)
}

// An advanced query is the user's own FTS5 text: whatever FTS5 refuses is the user's to fix
// (invalid_argument naming the query), not an internal error ("*" once came back as a 500
// "catalog error: step: unknown special query").
TEST_F(CatalogTest, AnAdvancedQueryFts5RefusesIsInvalidArgument) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  auto d = make_doc("k", "a.md");
  cat->documents().put(ref(*cat, d.kb), d, make_chunks({"alpha beta"}),
                       who("document.add", "k", d.id));
  for (const char* text : {"*", "alpha AND", "\"unterminated", "nosuchcolumn: alpha", "(alpha"}) {
    KeywordQuery q;
    q.match = text;
    q.advanced = true;
    try {
      cat->keyword().search(ref(*cat, "k"), q);
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::invalid_argument) << text << ": " << e.message();
      EXPECT_EQ(e.details().at("field"), "query");
      EXPECT_NE(e.message().find("invalid advanced query"), std::string::npos) << e.message();
      EXPECT_EQ(e.message().find("catalog error"), std::string::npos) << e.message();
      EXPECT_EQ(e.message().find("step:"), std::string::npos) << e.message();
    }
  }
  KeywordQuery ok;
  ok.match = "alpha AND beta";
  ok.advanced = true;
  EXPECT_EQ(cat->keyword().search(ref(*cat, "k"), ok).size(), 1u);
}

// A running statement stops once the calling thread's deadline (quarry/deadline.h) has passed,
// with Error(timeout), not internal; without a deadline the same call runs to the end.
TEST_F(CatalogTest, AStatementStopsAtTheThreadsDeadline) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  {
    Catalog::Batch batch(*cat);
    for (int i = 0; i < 3000; ++i) {
      auto d = make_doc("k", std::to_string(i) + ".md", nlohmann::json{{"i", i}}.dump());
      cat->documents().put(ref(*cat, d.kb), d, make_chunks({"quokka"}),
                           who("document.add", "k", d.id));
    }
    batch.commit();
  }
  // Each document's metadata is its own, so every one is evaluated: 3000 x 10000 comparisons.
  nlohmann::json values = nlohmann::json::array();
  for (int v = 0; v < 1000; ++v) values.push_back(-v - 1);
  nlohmann::json clauses = nlohmann::json::array();
  for (int c = 0; c < 10; ++c) clauses.push_back({{"i", {{"$nin", values}}}});
  const core::Filter f = core::parse_filter(nlohmann::json{{"$and", clauses}});
  try {
    ScopedDeadline deadline(std::chrono::milliseconds(1), "this listing");
    cat->documents().list(ref(*cat, "k"), "", 10000, f);
    FAIL() << "no timeout";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::timeout) << e.message();
    EXPECT_NE(e.message().find("this listing took longer than its limit of 1 ms"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(e.details().at("limit_ms"), "1");
  }
  EXPECT_EQ(cat->documents().list(ref(*cat, "k"), "", 10000, f).size(), 3000u);
  EXPECT_EQ(cat->documents().count_matching(ref(*cat, "k"), f), 3000);
}

}  // namespace
}  // namespace quarry::catalog
