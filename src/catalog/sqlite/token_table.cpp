// Bearer tokens of the server (SPEC §10): rows keyed by id, looked up by the SHA-256 of the
// secret. Creating and revoking a token are audited in the same transaction.
#include <optional>
#include <string>
#include <vector>

#include "catalog/sqlite/tables.h"
#include "catalog/sqlite/writes.h"
#include "core/util.h"

namespace quarry::catalog {

namespace {
constexpr const char* kTokenColumns = "id, name, scope, kbs, created_at, COALESCE(revoked_at, 0)";

TokenRow read_token(const Stmt& s) {
  TokenRow t;
  t.id = s.str(0);
  t.name = s.str(1);
  t.scope = s.str(2);
  t.kbs_json = s.str(3);
  t.created_at = s.i64(4);
  t.revoked_at = s.i64(5);
  return t;
}
}  // namespace

void SqliteTokenTable::create(const TokenRow& row, const std::string& secret_hash,
                              const AuditEntry& a) {
  Transaction tx(db_);
  Stmt(*stmts_,
       "INSERT INTO tokens(id, name, scope, kbs, secret_hash, created_at) VALUES(?, ?, ?, ?, ?, ?)")
      .bind(1, row.id)
      .bind(2, row.name)
      .bind(3, row.scope)
      .bind(4, row.kbs_json)
      .bind(5, secret_hash)
      .bind(6, row.created_at)
      .exec();
  write_audit(db_, a);
  tx.commit();
}

std::vector<TokenRow> SqliteTokenTable::list() const {
  Stmt s(*stmts_, std::string("SELECT ") + kTokenColumns + " FROM tokens ORDER BY id");
  std::vector<TokenRow> out;
  while (s.step()) out.push_back(read_token(s));
  return out;
}

std::optional<TokenRow> SqliteTokenTable::find_by_hash(const std::string& secret_hash) const {
  Stmt s(*stmts_, std::string("SELECT ") + kTokenColumns +
                      " FROM tokens WHERE secret_hash = ? AND revoked_at IS NULL");
  s.bind(1, secret_hash);
  if (!s.step()) return std::nullopt;
  return read_token(s);
}

bool SqliteTokenTable::revoke(const std::string& id, const AuditEntry& a) {
  Transaction tx(db_);
  Stmt u(*stmts_, "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL");
  u.bind(1, core::now_ms()).bind(2, id).exec();
  if (sqlite3_changes(db_) == 0) return false;
  write_audit(db_, a);
  tx.commit();
  return true;
}

}  // namespace quarry::catalog
