// The pump against real PostgreSQL apps (issue 7): Debian's PostgreSQL 15 without pgvector (app
// tables storing vectors as real[]; a use case that needs the vector type is parked at deploy
// and spends nothing), and PGlite with pgvector (the ticket example end to end, with the
// revision-filtered search). ctest's fixture pgvector_server starts both (PGlite on
// QUARRY_TEST_PG_PORT, PostgreSQL 15 on the next port); without them these tests fail.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "catalog/catalog.h"
#include "core/util.h"
#include "pump/pump.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::pump {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

std::string dsn(int port_offset) {
  const char* port = std::getenv("QUARRY_TEST_PG_PORT");
  if (!port || !*port)
    throw std::runtime_error(
        "QUARRY_TEST_PG_PORT is not set: run through ctest, or start the servers (bash "
        "tests/store/pgvector/pg_server.sh start 18432) and export QUARRY_TEST_PG_PORT=18432");
  return "host=127.0.0.1 port=" + std::to_string(std::atoi(port) + port_offset) +
         " user=postgres dbname=postgres sslmode=disable connect_timeout=10";
}

class Db {
 public:
  explicit Db(const std::string& dsn) {
    // PGlite takes one connection at a time and notices a closed one a moment later.
    for (int attempt = 0;; ++attempt) {
      c_ = PQconnectdb(dsn.c_str());
      if (PQstatus(c_) == CONNECTION_OK) break;
      if (attempt == 50) throw std::runtime_error(PQerrorMessage(c_));
      PQfinish(c_);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    exec("DISCARD ALL");
  }
  ~Db() { PQfinish(c_); }
  void exec(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    auto st = PQresultStatus(r);
    std::string err = PQerrorMessage(c_);
    PQclear(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) throw std::runtime_error(sql + ": " + err);
  }
  std::vector<std::vector<std::string>> rows(const std::string& sql,
                                             const std::vector<std::string>& params = {}) {
    std::vector<const char*> v;
    for (const auto& p : params) v.push_back(p.c_str());
    PGresult* r = PQexecParams(c_, sql.c_str(), static_cast<int>(v.size()), nullptr, v.data(),
                               nullptr, nullptr, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
      std::string err = PQerrorMessage(c_);
      PQclear(r);
      throw std::runtime_error(sql + ": " + err);
    }
    std::vector<std::vector<std::string>> out;
    for (int i = 0; i < PQntuples(r); ++i) {
      out.emplace_back();
      for (int j = 0; j < PQnfields(r); ++j) out.back().push_back(PQgetvalue(r, i, j));
    }
    PQclear(r);
    return out;
  }
  std::string one(const std::string& sql, const std::vector<std::string>& params = {}) {
    auto r = rows(sql, params);
    return r.empty() || r[0].empty() ? "" : r[0][0];
  }

 private:
  PGconn* c_;
};

class PumpPg : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(apps());
    cat_ = catalog::Catalog::open((data_.path() / "catalog.db").string());
    pump_ = std::make_unique<Pump>(data_.path().string(), *cat_, [](const std::string& name) {
      if (name == "PG15_DSN") return dsn(1);
      if (name == "PGLITE_DSN") return dsn(0);
      return std::string();
    });
  }
  fs::path apps() const { return data_.path() / "apps"; }
  void write(const std::string& name, const json& j) {
    quarry::testing::write_file(apps() / (name + ".json"), j.dump(2));
  }
  DeployReport deploy(const std::string& embedder = "hash:64") {
    return pump_->deploy(apps().string(), embedder, catalog::AuditEntry{});
  }

  quarry::testing::TempDir data_;
  std::unique_ptr<catalog::Catalog> cat_;
  std::unique_ptr<Pump> pump_;
};

TEST_F(PumpPg, Postgres15AppStoresVectorsAsRealArrays) {
  Db db(dsn(1));
  db.exec("DROP SCHEMA IF EXISTS pump_real CASCADE; CREATE SCHEMA pump_real");
  db.exec("CREATE TABLE pump_real.docs (id bigserial PRIMARY KEY, title text, body text)");
  db.exec(
      "CREATE TABLE pump_real.doc_chunks (doc_id bigint REFERENCES pump_real.docs ON DELETE "
      "CASCADE, seq int, embedding real[] NOT NULL, content text, revision text, meta jsonb, "
      "PRIMARY KEY (doc_id, seq))");
  db.exec(
      "INSERT INTO pump_real.docs (title, body) SELECT 'doc ' || g, 'body of document ' || g "
      "|| ' about pumps and valves' FROM generate_series(1, 130) g");
  write("docs",
        {{"batch_size", 50},
         {"source",
          {{"type", "sql"},
           {"driver", "postgres"},
           {"dsn_secret", "PG15_DSN"},
           {"pending",
            "SELECT d.id, d.title || ': ' || d.body AS content, json_build_object('title', "
            "d.title) AS metadata FROM pump_real.docs d WHERE NOT EXISTS (SELECT 1 FROM "
            "pump_real.doc_chunks c WHERE c.doc_id = d.id AND c.revision = $2) ORDER BY d.id "
            "LIMIT $1"},
           {"delete_document", "DELETE FROM pump_real.doc_chunks WHERE doc_id = $1"},
           {"store_chunk",
            "INSERT INTO pump_real.doc_chunks (doc_id, seq, embedding, content, revision, meta) "
            "VALUES ($1, $2, $7::real[], $4, $5, $6::jsonb)"}}}});
  auto rep = deploy();
  EXPECT_TRUE(rep.parked.empty());  // real[] needs no pgvector
  auto r = pump_->run("docs");
  EXPECT_EQ(r.processed, 130);
  EXPECT_EQ(r.batches, 3);
  EXPECT_EQ(db.one("SELECT count(*) FROM pump_real.doc_chunks WHERE revision = $1", {r.revision}),
            "130");
  EXPECT_EQ(db.one("SELECT DISTINCT array_length(embedding, 1) FROM pump_real.doc_chunks"), "64");
  // The stored array is the query embedding of the same text (unit vectors: dot = 1).
  auto q = pump_->embed("docs", "doc 7: body of document 7 about pumps and valves");
  std::string arr = "{";
  for (std::size_t i = 0; i < q.embedding.size(); ++i) {
    if (i) arr += ',';
    arr += std::to_string(q.embedding[i]);
  }
  arr += "}";
  EXPECT_EQ(db.one("SELECT c.doc_id FROM pump_real.doc_chunks c, LATERAL (SELECT sum(a * b) AS "
                   "dot FROM unnest(c.embedding, $1::real[]) AS t(a, b)) s WHERE c.revision = $2 "
                   "ORDER BY s.dot DESC LIMIT 1",
                   {arr, q.revision}),
            "7");
  EXPECT_EQ(pump_->run("docs").processed, 0);
  db.exec("UPDATE pump_real.docs SET body = 'rewritten' WHERE id = 9");
  db.exec("DELETE FROM pump_real.doc_chunks WHERE doc_id = 9");
  EXPECT_EQ(pump_->run("docs").processed, 1);
  db.exec("DROP SCHEMA pump_real CASCADE");
}

TEST_F(PumpPg, ADatabaseWithoutPgvectorParksAtDeployAndSpendsNothing) {
  Db db(dsn(1));
  db.exec("DROP SCHEMA IF EXISTS pump_novec CASCADE; CREATE SCHEMA pump_novec");
  db.exec("CREATE TABLE pump_novec.t (id int PRIMARY KEY, body text)");
  db.exec("INSERT INTO pump_novec.t VALUES (1, 'one'), (2, 'two')");
  write("needs_vector",
        {{"source",
          {{"type", "sql"},
           {"driver", "postgres"},
           {"dsn_secret", "PG15_DSN"},
           {"pending", "SELECT id, body AS content FROM pump_novec.t ORDER BY id LIMIT $1"},
           {"store_chunk", "INSERT INTO pump_novec.e VALUES ($1, $2, $3::vector, $5)"}}}});
  auto rep = deploy();
  ASSERT_EQ(rep.parked.count("needs_vector"), 1u);
  EXPECT_NE(rep.parked["needs_vector"].find("pgvector is not installed"), std::string::npos);
  auto row = *cat_->pump().find("needs_vector");
  EXPECT_TRUE(row.parked);
  EXPECT_FALSE(row.pending);  // not poked: nothing will be embedded or billed
  EXPECT_NE(row.last_error.find("CREATE EXTENSION vector"), std::string::npos);
  db.exec("DROP SCHEMA pump_novec CASCADE");
}

// The seed's ticket example, on a real pgvector: the app's pending query is its watermark, the
// pump stores through the app's statements, and the app searches with the revision filter.
TEST_F(PumpPg, TicketExampleEndToEndOnPgvector) {
  // PGlite serves one connection at a time: the test's own connections are short-lived, never
  // open while the pump holds one.
  auto sql = [](const std::string& statements) { Db(dsn(0)).exec(statements); };
  auto query = [](const std::string& q, const std::vector<std::string>& params = {}) {
    return Db(dsn(0)).rows(q, params);
  };
  sql("CREATE EXTENSION IF NOT EXISTS vector");
  sql("DROP SCHEMA IF EXISTS pump_tickets CASCADE; CREATE SCHEMA pump_tickets");
  sql("CREATE TABLE pump_tickets.tickets (id serial PRIMARY KEY, subject text NOT NULL, body "
      "text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())");
  sql("CREATE TABLE pump_tickets.ticket_embeddings (ticket_id integer NOT NULL REFERENCES "
      "pump_tickets.tickets(id) ON DELETE CASCADE, seq integer NOT NULL DEFAULT 0, embedding "
      "vector(64) NOT NULL, content text NOT NULL, revision text NOT NULL, embedded_at "
      "timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (ticket_id, seq))");
  const char* subjects[] = {"printer jams on page two",  "cannot log in after reset",
                            "invoice shows wrong total", "dark mode hides the cursor",
                            "export to csv loses rows",  "password reset email never arrives"};
  for (const char* s : subjects)
    sql(std::string("INSERT INTO pump_tickets.tickets (subject, body) VALUES ('") + s +
        "', 'details: " + s + "')");
  json uc = {
      {"description", "support tickets"},
      {"chunking", "none"},
      {"on", {"ticket.created"}},
      {"batch_size", 100},
      {"revision", 1},
      {"source",
       {{"type", "sql"},
        {"driver", "postgres"},
        {"dsn_secret", "PGLITE_DSN"},
        {"pending",
         "SELECT t.id, t.subject || ' ' || t.body AS content FROM pump_tickets.tickets t LEFT "
         "JOIN pump_tickets.ticket_embeddings e ON e.ticket_id = t.id AND e.seq = 0 WHERE "
         "e.ticket_id IS NULL OR e.embedded_at < t.updated_at OR e.revision <> $2 ORDER BY t.id "
         "LIMIT $1"},
        {"delete_document", "DELETE FROM pump_tickets.ticket_embeddings WHERE ticket_id = $1"},
        {"store_chunk",
         "INSERT INTO pump_tickets.ticket_embeddings (ticket_id, seq, embedding, content, "
         "revision) VALUES ($1, $2, $3::vector, $4, $5)"}}}};
  write("tickets", uc);
  auto rep = deploy();
  EXPECT_TRUE(rep.parked.empty());  // pgvector is there
  auto run = [&] { return pump_->run("tickets").processed; };
  EXPECT_EQ(run(), 6);
  EXPECT_EQ(run(), 0);  // the query is the watermark

  const std::string search =
      "SELECT t.id FROM pump_tickets.ticket_embeddings e JOIN pump_tickets.tickets t ON t.id = "
      "e.ticket_id WHERE e.revision = $2 ORDER BY e.embedding <=> $1::vector LIMIT 3";
  auto ask = [&](const std::string& text) {
    auto q = pump_->embed("tickets", text);
    return query(search, {json(q.embedding).dump(), q.revision});
  };
  auto hits = ask("password reset email never arrives details: password reset email never arrives");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0][0], "6");

  // An edited ticket is pending again (updated_at past embedded_at) and re-embedded alone.
  sql("UPDATE pump_tickets.tickets SET subject = 'printer prints blank pages', updated_at = "
      "clock_timestamp() + interval '1 second' WHERE id = 1");
  EXPECT_EQ(run(), 1);

  // A new revision (the author's counter): until the pump re-embeds, the revision filter makes
  // the search answer nothing rather than compare vectors of two revisions.
  uc["revision"] = 2;
  write("tickets", uc);
  deploy();
  EXPECT_TRUE(ask("printer prints blank pages").empty());
  EXPECT_EQ(run(), 6);
  hits = ask("printer prints blank pages details: printer jams on page two");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0][0], "1");
  EXPECT_EQ(query("SELECT count(*) FROM pump_tickets.ticket_embeddings")[0][0], "6");
  sql("DROP SCHEMA pump_tickets CASCADE");
}

}  // namespace
}  // namespace quarry::pump
