// The catalog's statement cache: statements of fixed text are prepared once per connection,
// come back reset with no bindings, never hold a read open between uses, and stay bounded.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>

#include "catalog/sqlite/sqlite.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::catalog {
namespace {

class StmtCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path = (dir.path() / "t.db").string();
    db = open_wal_database(path, "test");
    exec_sql(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)");
    exec_sql(db, "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')");
    cache = std::make_unique<StmtCache>(db);
  }
  void TearDown() override {
    cache.reset();
    sqlite3_close(db);
  }
  quarry::testing::TempDir dir;
  std::string path;
  sqlite3* db = nullptr;
  std::unique_ptr<StmtCache> cache;
};

constexpr const char* kByKey = "SELECT v FROM t WHERE k = ?";

TEST_F(StmtCacheTest, ATextIsPreparedOnceAndComesBackResetWithoutBindings) {
  constexpr const char* kFrom = "SELECT v FROM t WHERE k >= ? ORDER BY k";
  sqlite3_stmt* first = nullptr;
  {
    Stmt s(*cache, kFrom);
    first = s.raw();
    s.bind(1, 1);
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.str(0), "one");
    // Left after its first row of three: giving it back must reset it.
  }
  EXPECT_EQ(cache->size(), 1u);
  EXPECT_EQ(cache->prepared(), 1u);
  {
    Stmt s(*cache, kFrom);
    EXPECT_EQ(s.raw(), first);  // the same prepared statement, not prepared again
    EXPECT_EQ(cache->prepared(), 1u);
    EXPECT_EQ(sqlite3_stmt_busy(s.raw()), 0);
    EXPECT_FALSE(s.step());  // not "two": it starts over, and k >= NULL (no binding) is no row
  }
  // A text built at run time with the same characters finds the same statement.
  std::string built = std::string("SELECT v FROM t ") + "WHERE k >= ? ORDER BY k";
  Stmt s(*cache, built);
  EXPECT_EQ(s.raw(), first);
  EXPECT_EQ(cache->prepared(), 1u);
}

TEST_F(StmtCacheTest, ANestedUseOfTheSameTextGetsItsOwnStatement) {
  Stmt outer(*cache, "SELECT k FROM t ORDER BY k");
  ASSERT_TRUE(outer.step());
  EXPECT_EQ(outer.i64(0), 1);
  {
    Stmt inner(*cache, "SELECT k FROM t ORDER BY k");
    EXPECT_NE(inner.raw(), outer.raw());
    EXPECT_EQ(cache->prepared(), 2u);
    int n = 0;
    while (inner.step()) ++n;
    EXPECT_EQ(n, 3);
  }
  // The outer one carries on from where it was; the inner copy was not kept.
  ASSERT_TRUE(outer.step());
  EXPECT_EQ(outer.i64(0), 2);
  EXPECT_EQ(cache->size(), 1u);
}

TEST_F(StmtCacheTest, AKeptStatementHoldsNoReadAndTheNextUseSeesNewRows) {
  {
    Stmt s(*cache, "SELECT k FROM t ORDER BY k");
    ASSERT_TRUE(s.step());  // a read begun and not finished
  }
  // Nothing of this connection is mid-statement (which would hold its snapshot and keep
  // other connections' checkpoints short of the end of the log).
  for (sqlite3_stmt* st = sqlite3_next_stmt(db, nullptr); st; st = sqlite3_next_stmt(db, st))
    EXPECT_EQ(sqlite3_stmt_busy(st), 0) << sqlite3_sql(st);
  sqlite3* other = open_wal_database(path, "test");
  exec_sql(other, "INSERT INTO t VALUES (0, 'zero')");
  sqlite3_close(other);
  Stmt s(*cache, "SELECT k FROM t ORDER BY k");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.i64(0), 0);  // from the top, and with the other connection's row
}

TEST_F(StmtCacheTest, StaysBoundedAndStillAnswersPastItsLimit) {
  for (std::size_t i = 0; i < StmtCache::kMax + 20; ++i) {
    Stmt s(*cache, "SELECT v, " + std::to_string(i) + " FROM t WHERE k = 1");
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.i64(1), static_cast<std::int64_t>(i));
  }
  EXPECT_EQ(cache->size(), StmtCache::kMax);
}

TEST_F(StmtCacheTest, ABadTextThrowsAndLeavesTheCacheUsable) {
  EXPECT_THROW(Stmt(*cache, "SELECT nope FROM nowhere"), Error);
  Stmt s(*cache, kByKey);
  s.bind(1, 1);
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.str(0), "one");
}

}  // namespace
}  // namespace quarry::catalog
