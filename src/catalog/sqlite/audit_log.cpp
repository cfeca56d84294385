// The activity log (audit_log.h) in SQLite: the audit table, newest first.
#include "catalog/sqlite/tables.h"
#include "catalog/sqlite/writes.h"

namespace quarry::catalog {

std::vector<AuditRow> SqliteAuditLog::list(int limit, const std::string& kb,
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

void SqliteAuditLog::append(const AuditEntry& a) {
  write_audit(db_, a);
}

}  // namespace quarry::catalog
