// The activity log (SPEC §10): one row per write, written in the write's own transaction by the
// table that writes; this interface reads it and appends events outside any other write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/rows.h"

namespace quarry::catalog {

class AuditLog {
 public:
  virtual ~AuditLog() = default;

  // Newest first; `kb` "" = every KB; ids below `before_id` (0 = from the newest).
  virtual std::vector<AuditRow> list(int limit, const std::string& kb = "",
                                     std::int64_t before_id = 0) const = 0;
  virtual void append(const AuditEntry& a) = 0;
};

}  // namespace quarry::catalog
