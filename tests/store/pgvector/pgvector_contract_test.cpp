// The store contract suite (tests/store/contract_test.cpp, unchanged) against a real pgvector
// (PGlite + pgvector 0.8 over the wire protocol), for both tenancy modes and for IVFFlat, plus
// what only a real server shows: the transaction handle, reconnects, the table layout of each
// tenancy, filter edge cases pushed down as SQL, and the missing-extension error against
// Debian's PostgreSQL 15 (no pgvector).
//
// The servers come from ctest's fixture (CMakeLists.txt: pgvector_server) and their port from
// QUARRY_TEST_PG_PORT (or DSNs from QUARRY_TEST_PG_DSN / QUARRY_TEST_PG15_DSN). Without them every
// test here FAILS: a skipped integration test reads as a passing one. Each test gets a schema of
// its own.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <thread>

#include "core/util.h"
#include "quarry/error.h"
#include "store/pgvector/pgvector_store.h"
#include "remote_store_util.h"
#include "store_contract.h"

namespace quarry::store::contract {
namespace {
using nlohmann::json;

// QUARRY_TEST_PG_DSN / QUARRY_TEST_PG15_DSN when set, else derived from QUARRY_TEST_PG_PORT (what
// ctest sets: PGlite on it, PostgreSQL 15 on the next port).
std::string test_dsn(const char* var, int port_offset) {
  if (const char* v = std::getenv(var); v && *v) return v;
  const char* port = std::getenv("QUARRY_TEST_PG_PORT");
  if (!port || !*port)
    throw std::runtime_error(
        std::string("neither ") + var +
        " nor QUARRY_TEST_PG_PORT is set: run these tests through ctest (its fixture starts the "
        "servers), or start them (bash tests/store/pgvector/pg_server.sh start 18432) and export "
        "QUARRY_TEST_PG_PORT=18432");
  return "host=127.0.0.1 port=" + std::to_string(std::atoi(port) + port_offset) +
         " user=postgres dbname=postgres sslmode=disable connect_timeout=10";
}
std::string pg_dsn() {
  return test_dsn("QUARRY_TEST_PG_DSN", 0);
}
std::string pg15_dsn() {
  return test_dsn("QUARRY_TEST_PG15_DSN", 1);
}

StoreContext ctx_for(const std::string& dsn) {
  return StoreContext{"", [dsn](const std::string& name) {
                        if (name != "pg-dsn") throw Error(Code::not_found, "no secret " + name);
                        return dsn;
                      }};
}

std::string fresh_schema() {
  std::string s = "qt_" + core::new_ulid();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

json base_settings(json extra = json::object()) {
  // PGlite serves one connection: the pool must make do with one.
  json s = {{"dsn_secret", "pg-dsn"}, {"schema", fresh_schema()}, {"pool_size", 1}};
  s.update(extra);
  return s;
}

std::unique_ptr<pgvector::PgvectorStore> fresh_pg(json extra = json::object()) {
  auto store = pgvector::make_pgvector_store(base_settings(std::move(extra)), ctx_for(pg_dsn()));
  store->check();  // a clear failure when no server answers
  return store;
}

std::unique_ptr<VectorStore> pg_row_filter(const std::filesystem::path&) {
  return fresh_pg({{"tenancy", "row_filter"}});
}
std::unique_ptr<VectorStore> pg_collection(const std::filesystem::path&) {
  return fresh_pg({{"tenancy", "collection"}});
}
std::unique_ptr<VectorStore> pg_ivfflat(const std::filesystem::path&) {
  return fresh_pg({{"index", "ivfflat"}, {"lists", 4}, {"probes", 1}});
}

INSTANTIATE_TEST_SUITE_P(Pgvector, StoreContract,
                         ::testing::Values(StoreUnderTest{"pgvector_row_filter", pg_row_filter},
                                           StoreUnderTest{"pgvector_collection", pg_collection},
                                           StoreUnderTest{"pgvector_ivfflat", pg_ivfflat}),
                         StoreUnderTest::name_of);

// A second client for looking at the server behind the store's back. PGlite serves one
// connection at a time: open it only while the store holds none (pool idle connections count),
// so tests that use it build the store with a fresh pool afterwards or close this first.
struct Psql {
  explicit Psql(const std::string& dsn) {
    for (int attempt = 0; attempt < 20; ++attempt) {  // PGlite frees the last one asynchronously
      c = PQconnectdb(dsn.c_str());
      if (PQstatus(c) == CONNECTION_OK) return;
      PQfinish(c);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw std::runtime_error("cannot connect to " + dsn);
  }
  ~Psql() { PQfinish(c); }
  std::string scalar(const std::string& sql) {
    PGresult* r = PQexec(c, sql.c_str());
    std::string out = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0
                          ? PQgetvalue(r, 0, 0)
                          : std::string("ERROR: ") + PQerrorMessage(c);
    PQclear(r);
    return out;
  }
  PGconn* c;
};

TEST(PgvectorStoreIT, MissingExtensionIsANamedErrorAndRunsNoDdl) {
  const std::string schema = fresh_schema();
  json settings = {{"dsn_secret", "pg-dsn"}, {"schema", schema}, {"pool_size", 1}};
  try {
    StoreRegistry::builtin().create("pgvector", settings, ctx_for(pg15_dsn()));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::engine_unavailable);
    EXPECT_NE(e.message().find("database 'postgres'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("'vector' extension"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("CREATE EXTENSION vector"), std::string::npos) << e.message();
    EXPECT_EQ(e.details().at("database"), "postgres");
  }
  auto lazy = pgvector::make_pgvector_store(settings, ctx_for(pg15_dsn()));
  EXPECT_FALSE(lazy->is_available());
  EXPECT_THROW(lazy->count(Scope{"kb", "r1", 4}), Error);
  EXPECT_THROW(lazy->upsert(Scope{"kb", "r1", 4}, doc("a", 1)), Error);
  lazy.reset();
  Psql psql(pg15_dsn());
  EXPECT_EQ(psql.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = '" + schema + "'"), "0");
  EXPECT_EQ(psql.scalar("SELECT count(*) FROM pg_extension WHERE extname = 'vector'"), "0");
}

TEST(PgvectorStoreIT, RegistryBuildsAWorkingStoreAndCapabilitiesFollowTenancy) {
  auto s = StoreRegistry::builtin().create("pgvector", base_settings({{"tenancy", "collection"}}),
                                           ctx_for(pg_dsn()));
  EXPECT_EQ(s->id(), "pgvector");
  EXPECT_EQ(s->capabilities().tenancy, "collection");
  EXPECT_TRUE(s->capabilities().metadata_filter);
  EXPECT_FALSE(s->capabilities().embeds_on_write);
  EXPECT_TRUE(s->is_available());
  auto r = pgvector::make_pgvector_store(base_settings(), ctx_for(pg_dsn()));
  EXPECT_EQ(r->capabilities().tenancy, "row_filter");
}

TEST(PgvectorStoreIT, DetectsPgvector08AndItsIterativeScan) {
  auto s = fresh_pg();
  EXPECT_TRUE(pgvector::version_at_least(s->extension_version(), 0, 8)) << s->extension_version();
}

TEST(PgvectorStoreIT, TenancyDecidesTheTables) {
  for (const char* tenancy : {"row_filter", "collection"}) {
    json settings = base_settings({{"tenancy", tenancy}});
    const std::string schema = settings["schema"];
    {
      auto s = pgvector::make_pgvector_store(settings, ctx_for(pg_dsn()));
      for (const char* kb : {"kb1", "kb2"})
        for (const char* rev : {"r1", "r2"}) s->upsert(Scope{kb, rev, 4}, doc("d", 2));
      EXPECT_EQ(s->count(Scope{"kb1", "r1", 4}), 2);
    }  // the store's connection closes: PGlite serves one at a time
    Psql psql(pg_dsn());
    std::string tables =
        psql.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = '" +
                    schema + "' AND table_name <> 'quarry_scopes'");
    EXPECT_EQ(tables, std::string(tenancy) == "row_filter" ? "2" : "4") << tenancy;
    EXPECT_EQ(psql.scalar("SELECT count(*) FROM pg_indexes WHERE schemaname = '" + schema +
                          "' AND indexdef LIKE '%USING hnsw%'"),
              std::string(tenancy) == "row_filter" ? "2" : "4");
  }
}

TEST(PgvectorStoreIT, DeletingAKbDropsTablesNobodyUses) {
  json settings = base_settings({{"tenancy", "row_filter"}});
  const std::string schema = settings["schema"];
  {
    auto s = pgvector::make_pgvector_store(settings, ctx_for(pg_dsn()));
    s->upsert(Scope{"kb1", "r1", 4}, doc("d", 1));
    s->upsert(Scope{"kb2", "r1", 4}, doc("d", 1));
    s->upsert(Scope{"kb1", "r2", 4}, doc("d", 1));
    EXPECT_EQ(s->delete_kb("kb1"), 2);
    EXPECT_EQ(s->count(Scope{"kb2", "r1", 4}), 1);
  }
  Psql psql(pg_dsn());
  EXPECT_EQ(psql.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = '" +
                        schema + "' AND table_name <> 'quarry_scopes'"),
            "1");  // r1 is still used by kb2; r2's table went
}

TEST(PgvectorStoreIT, TheCallersTransactionIsJoined) {
  auto s = fresh_pg();
  Scope scope{"kb", "r1", 4};
  s->upsert(scope, doc("kept", 1));
  {
    auto txn = s->begin_transaction();
    s->upsert(scope, doc("a", 3), txn.get());
    EXPECT_EQ(s->delete_document("kb", "kept", txn.get()), 1);
    txn->rollback();
  }
  EXPECT_EQ(s->count(scope), 1);
  EXPECT_TRUE(s->has(scope, "kept"));
  {
    auto txn = s->begin_transaction();
    s->upsert(scope, doc("a", 3), txn.get());
    // A brand-new scope created inside the transaction commits with it.
    s->upsert(Scope{"kb", "r9", 4}, doc("b", 1), txn.get());
    txn->commit();
  }
  EXPECT_EQ(s->count(scope), 4);
  {
    auto txn = s->begin_transaction();
    s->upsert(Scope{"kb", "r7", 4}, doc("c", 1), txn.get());
  }  // rolled back: the table and its registry row are gone, and nothing was cached
  EXPECT_EQ(s->count(Scope{"kb", "r7", 4}), 0);
  EXPECT_EQ(s->upsert(Scope{"kb", "r7", 4}, doc("c", 1)).written, 1);
  EXPECT_EQ(s->count(Scope{"kb", "r7", 4}), 1);
}

TEST(PgvectorStoreIT, ReconnectsAfterABrokenConnection) {
  auto s = fresh_pg();
  Scope scope{"kb", "r1", 4};
  s->upsert(scope, doc("a", 2));
  s->pool_for_test().break_idle_connections_for_test();
  EXPECT_EQ(s->count(scope), 2);  // the first try hits the dead socket, the retry reconnects
  s->pool_for_test().break_idle_connections_for_test();
  EXPECT_EQ(s->upsert(scope, doc("b", 1)).written, 1);
  EXPECT_EQ(s->count(scope), 3);
}

TEST(PgvectorStoreIT, LargeDocumentsSpanInsertBatchesAndShrinkCleanly) {
  auto s = fresh_pg({{"batch_rows", 7}});
  Scope scope{"kb", "r1", 4};
  EXPECT_EQ(s->upsert(scope, doc("big", 50)).written, 50);
  EXPECT_EQ(s->count(scope), 50);
  EXPECT_EQ(s->upsert(scope, doc("big", 50)).skipped, 50);
  auto shrunk = s->upsert(scope, doc("big", 9, {{"v", 2}}));
  EXPECT_EQ(shrunk.skipped, 9);
  EXPECT_EQ(s->count(scope), 9);
  EXPECT_EQ(docs_matching(*s, scope, R"({"v": 2})"), std::set<std::string>{"big"});
  EXPECT_EQ(s->delete_document("kb", "big"), 9);
  EXPECT_EQ(s->count(scope), 0);
}

TEST(PgvectorStoreIT, MetadataEdgeCasesFilterExactlyOnTheServer) {
  auto s = fresh_pg();
  Scope scope{"kb", "r1", 4};
  s->upsert(scope, doc("int", 1, {{"a", 1}, {"o", {{"b", "x"}}}, {"s", "b"}}));
  s->upsert(scope, doc("float", 1, {{"a", 1.0}, {"o", "flat"}, {"s", "B"}}));
  s->upsert(scope, doc("str", 1, {{"a", "1"}, {"s", "\xc3\xa9"}}));
  s->upsert(scope, doc("bool", 1, {{"a", true}}));
  s->upsert(scope, doc("null", 1, {{"a", nullptr}}));
  s->upsert(scope, doc("array", 1, {{"a", {1, 2}}, {"o", {{{"b", "x"}}}}}));
  s->upsert(scope, doc("big", 1, {{"a", 9007199254740993LL}}));
  s->upsert(scope, doc("none", 1));
  Scope other{"kb", "r2", 4};
  s->upsert(other, doc("huge", 1, {{"h", 1152921504606846976.0}}));  // 2^60 as a double
  using Set = std::set<std::string>;
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": 1})"), (Set{"int", "float"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$ne": 1}})"),
            (Set{"str", "bool", "null", "array", "big", "none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": null})"), (Set{"null"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$exists": false}})"), (Set{"none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$in": ["1", true, null]}})"),
            (Set{"str", "bool", "null"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$nin": [1, "1"]}})"),
            (Set{"bool", "null", "array", "big", "none"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$gte": 0.5}})"), (Set{"int", "float", "big"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": 9007199254740992})"), Set{});  // exact integers
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$gt": 9007199254740992}})"), Set{"big"});
  EXPECT_EQ(docs_matching(*s, scope, R"({"o.b": "x"})"), (Set{"int"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"o.0.b": "x"})"), Set{});  // no array indexing
  EXPECT_EQ(docs_matching(*s, scope, R"({"o": {"$exists": true}})"),
            (Set{"int", "float", "array"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": {"$in": []}})"), Set{});
  // Strings order bytewise, as std::string does: "B" < "b" < "é".
  EXPECT_EQ(docs_matching(*s, scope, R"({"s": {"$gt": "a"}})"), (Set{"int", "str"}));
  EXPECT_EQ(docs_matching(*s, scope, R"({"s": {"$lt": "b"}})"), (Set{"float"}));
  // Integral doubles beyond 2^53 compare exactly with integers, as the reference does.
  EXPECT_EQ(docs_matching(*s, other, R"({"h": 1152921504606846976})"), Set{"huge"});
  EXPECT_EQ(docs_matching(*s, other, R"({"h": {"$lt": 1152921504606846977}})"), Set{"huge"});
  EXPECT_EQ(docs_matching(*s, other, R"({"h": {"$gt": 1152921504606846975}})"), Set{"huge"});
  // A value that looks like SQL stays a value.
  EXPECT_EQ(docs_matching(*s, scope, R"({"a": "x' OR 1=1 --"})"), Set{});
}

}  // namespace
}  // namespace quarry::store::contract
