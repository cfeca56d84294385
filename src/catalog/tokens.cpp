// Bearer tokens of the server (SPEC §10): rows keyed by id, looked up by the SHA-256 of the
// secret. Creating and revoking a token are audited in the same transaction.
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/sqlite.h"
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

void Catalog::create_token(const TokenRow& row, const std::string& secret_hash,
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
  log_event(a);
  tx.commit();
}

std::vector<TokenRow> Catalog::list_tokens() const {
  Stmt s(*stmts_, std::string("SELECT ") + kTokenColumns + " FROM tokens ORDER BY id");
  std::vector<TokenRow> out;
  while (s.step()) out.push_back(read_token(s));
  return out;
}

std::optional<TokenRow> Catalog::find_token_by_hash(const std::string& secret_hash) const {
  Stmt s(*stmts_, std::string("SELECT ") + kTokenColumns +
                      " FROM tokens WHERE secret_hash = ? AND revoked_at IS NULL");
  s.bind(1, secret_hash);
  if (!s.step()) return std::nullopt;
  return read_token(s);
}

bool Catalog::revoke_token(const std::string& id, const AuditEntry& a) {
  Transaction tx(db_);
  Stmt u(*stmts_, "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL");
  u.bind(1, core::now_ms()).bind(2, id).exec();
  if (sqlite3_changes(db_) == 0) return false;
  log_event(a);
  tx.commit();
  return true;
}

std::vector<AuditRow> Catalog::list_audit_before(int limit, const std::string& kb,
                                                 std::int64_t before_id) const {
  Stmt s(*stmts_,
         "SELECT id, at, actor, surface, action, kb, target, details FROM audit"
         " WHERE (? = '' OR kb = ?) AND (? = 0 OR id < ?) ORDER BY id DESC LIMIT ?");
  s.bind(1, kb).bind(2, kb).bind(3, before_id).bind(4, before_id).bind(5, limit);
  std::vector<AuditRow> out;
  while (s.step()) {
    AuditRow r;
    r.id = s.i64(0);
    r.at = s.i64(1);
    r.actor = s.str(2);
    r.surface = s.str(3);
    r.action = s.str(4);
    r.kb = s.str(5);
    r.target = s.str(6);
    r.details_json = s.str(7);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace quarry::catalog
