// The embedding pump's rows (SPEC §8): deployed use cases with their run state and lease, and
// the tombstones of rows that cannot be embedded (newest 1,000 per use case).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/sqlite/tables.h"
#include "catalog/sqlite/writes.h"

namespace quarry::catalog {

namespace {
constexpr const char* kColumns =
    "name, config, config_revision, embedder, deployed_at, attempts, parked, pending, "
    "next_run_at, last_run_at, last_error, last_failed, last_skipped, lease_owner, lease_at";

PumpUseCaseRow read_row(const Stmt& s) {
  PumpUseCaseRow r;
  r.name = s.str(0);
  r.config_json = s.str(1);
  r.config_revision = s.str(2);
  r.embedder = s.str(3);
  r.deployed_at = s.i64(4);
  r.attempts = static_cast<int>(s.i64(5));
  r.parked = s.i64(6) != 0;
  r.pending = s.i64(7) != 0;
  r.next_run_at = s.i64(8);
  r.last_run_at = s.i64(9);
  r.last_error = s.str(10);
  r.last_failed = static_cast<int>(s.i64(11));
  r.last_skipped = static_cast<int>(s.i64(12));
  r.lease_owner = s.str(13);
  r.lease_at = s.i64(14);
  return r;
}
}  // namespace

std::vector<PumpUseCaseRow> SqlitePumpTable::list() const {
  Stmt s(*stmts_, std::string("SELECT ") + kColumns + " FROM pump_use_cases ORDER BY name");
  std::vector<PumpUseCaseRow> out;
  while (s.step()) out.push_back(read_row(s));
  return out;
}

std::optional<PumpUseCaseRow> SqlitePumpTable::find(const std::string& name) const {
  Stmt s(*stmts_, std::string("SELECT ") + kColumns + " FROM pump_use_cases WHERE name = ?");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_row(s);
}

void SqlitePumpTable::deploy(const std::vector<PumpUseCaseRow>& rows, const AuditEntry& a) {
  Transaction tx(db_);
  std::set<std::string> keep;
  for (const auto& r : rows) {
    keep.insert(r.name);
    Stmt(*stmts_, std::string("INSERT OR REPLACE INTO pump_use_cases(") + kColumns +
                      ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(1, r.name)
        .bind(2, r.config_json)
        .bind(3, r.config_revision)
        .bind(4, r.embedder)
        .bind(5, r.deployed_at)
        .bind(6, r.attempts)
        .bind(7, r.parked ? 1 : 0)
        .bind(8, r.pending ? 1 : 0)
        .bind(9, r.next_run_at)
        .bind(10, r.last_run_at)
        .bind(11, r.last_error)
        .bind(12, r.last_failed)
        .bind(13, r.last_skipped)
        .bind(14, r.lease_owner)
        .bind(15, r.lease_at)
        .exec();
  }
  std::vector<std::string> gone;
  {
    Stmt s(*stmts_, "SELECT name FROM pump_use_cases");
    while (s.step())
      if (!keep.count(s.str(0))) gone.push_back(s.str(0));
  }
  for (const auto& name : gone) {
    Stmt(*stmts_, "DELETE FROM pump_use_cases WHERE name = ?").bind(1, name).exec();
    Stmt(*stmts_, "DELETE FROM pump_tombstones WHERE use_case = ?").bind(1, name).exec();
  }
  write_audit(db_, a);
  tx.commit();
}

bool SqlitePumpTable::claim_lease(const std::string& name, const std::string& owner,
                                  std::int64_t now, std::int64_t stale_before) {
  Stmt s(*stmts_,
         "UPDATE pump_use_cases SET lease_owner = ?, lease_at = ?, pending = 0 "
         "WHERE name = ? AND (lease_owner = '' OR lease_at < ?)");
  s.bind(1, owner).bind(2, now).bind(3, name).bind(4, stale_before).exec();
  return sqlite3_changes(db_) == 1;
}

bool SqlitePumpTable::take_over_lease(const std::string& name, const std::string& old_owner,
                                      const std::string& owner, std::int64_t now) {
  Stmt s(*stmts_,
         "UPDATE pump_use_cases SET lease_owner = ?, lease_at = ?, pending = 0 "
         "WHERE name = ? AND lease_owner = ?");
  s.bind(1, owner).bind(2, now).bind(3, name).bind(4, old_owner).exec();
  return sqlite3_changes(db_) == 1;
}

bool SqlitePumpTable::finish_run(const std::string& name, const std::string& owner,
                                 const PumpRunEnd& e) {
  Stmt s(*stmts_,
         "UPDATE pump_use_cases SET attempts = ?, parked = ?, "
         "pending = CASE WHEN ? THEN 1 ELSE pending END, next_run_at = ?, last_run_at = ?, "
         "last_error = ?, last_failed = ?, last_skipped = ?, lease_owner = '', lease_at = 0 "
         "WHERE name = ? AND lease_owner = ?");
  s.bind(1, e.attempts)
      .bind(2, e.parked ? 1 : 0)
      .bind(3, e.repoke ? 1 : 0)
      .bind(4, e.next_run_at)
      .bind(5, e.last_run_at)
      .bind(6, e.last_error)
      .bind(7, e.last_failed)
      .bind(8, e.last_skipped)
      .bind(9, name)
      .bind(10, owner)
      .exec();
  return sqlite3_changes(db_) == 1;
}

bool SqlitePumpTable::trigger(const std::string& name, std::int64_t now) {
  Stmt(*stmts_,
       "UPDATE pump_use_cases SET pending = 1, next_run_at = CASE WHEN parked = 0 AND attempts > "
       "0 AND pending = 1 AND next_run_at > ?1 THEN next_run_at ELSE ?1 END WHERE name = ?2")
      .bind(1, now)
      .bind(2, name)
      .exec();
  return sqlite3_changes(db_) == 1;
}

std::optional<std::pair<std::string, std::string>> SqlitePumpTable::tombstone(
    const std::string& name, const std::string& content_hash, const std::string& key) const {
  Stmt s(*stmts_,
         "SELECT code, message FROM pump_tombstones WHERE use_case = ? AND content_hash = ? AND "
         "revision = ?");
  s.bind(1, name).bind(2, content_hash).bind(3, key);
  if (!s.step()) return std::nullopt;
  return std::make_pair(s.str(0), s.str(1));
}

void SqlitePumpTable::put_tombstone(const std::string& name, const std::string& content_hash,
                                    const std::string& key, const std::string& code,
                                    const std::string& message, std::int64_t at) {
  Transaction tx(db_);
  Stmt(*stmts_,
       "INSERT OR REPLACE INTO pump_tombstones(use_case, content_hash, revision, code, message, "
       "at) VALUES(?, ?, ?, ?, ?, ?)")
      .bind(1, name)
      .bind(2, content_hash)
      .bind(3, key)
      .bind(4, code)
      .bind(5, message)
      .bind(6, at)
      .exec();
  Stmt(*stmts_,
       "DELETE FROM pump_tombstones WHERE use_case = ?1 AND rowid NOT IN (SELECT rowid FROM "
       "pump_tombstones WHERE use_case = ?1 ORDER BY at DESC, rowid DESC LIMIT 1000)")
      .bind(1, name)
      .exec();
  tx.commit();
}

std::int64_t SqlitePumpTable::tombstone_count(const std::string& name) const {
  Stmt s(*stmts_, "SELECT COUNT(*) FROM pump_tombstones WHERE use_case = ?");
  s.bind(1, name);
  s.step();
  return s.i64(0);
}

}  // namespace quarry::catalog

namespace quarry::catalog {

void SqlitePumpTable::add_usage(const std::string& name, std::int64_t at,
                                const std::vector<int>& chunks, const std::string& kind) {
  Transaction tx(db_);
  for (int n : chunks)
    Stmt(*stmts_, "INSERT INTO pump_usage(use_case, at, chunks, kind) VALUES(?, ?, ?, ?)")
        .bind(1, name)
        .bind(2, at)
        .bind(3, n)
        .bind(4, kind)
        .exec();
  constexpr std::int64_t kKeepMs = 400LL * 24 * 3600 * 1000;
  Stmt(*stmts_, "DELETE FROM pump_usage WHERE at < ?").bind(1, at - kKeepMs).exec();
  tx.commit();
}

std::map<std::string, std::pair<std::int64_t, std::int64_t>> SqlitePumpTable::usage_since(
    std::int64_t since) const {
  Stmt s(*stmts_,
         "SELECT use_case, COUNT(*), COALESCE(SUM(chunks), 0) FROM pump_usage WHERE at >= ? "
         "GROUP BY use_case");
  s.bind(1, since);
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> out;
  while (s.step()) out[s.str(0)] = {s.i64(1), s.i64(2)};
  return out;
}

std::int64_t SqlitePumpTable::usage_entries_since(std::int64_t since) const {
  Stmt s(*stmts_, "SELECT COUNT(*) FROM pump_usage WHERE at >= ?");
  s.bind(1, since);
  s.step();
  return s.i64(0);
}

std::optional<std::string> SqlitePumpTable::setting(const std::string& key) const {
  Stmt s(*stmts_, "SELECT value FROM pump_settings WHERE key = ?");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return s.str(0);
}

void SqlitePumpTable::set_setting(const std::string& key, const std::optional<std::string>& value,
                                  const AuditEntry& a) {
  Transaction tx(db_);
  if (value)
    Stmt(*stmts_, "INSERT OR REPLACE INTO pump_settings(key, value) VALUES(?, ?)")
        .bind(1, key)
        .bind(2, *value)
        .exec();
  else
    Stmt(*stmts_, "DELETE FROM pump_settings WHERE key = ?").bind(1, key).exec();
  write_audit(db_, a);
  tx.commit();
}

}  // namespace quarry::catalog
