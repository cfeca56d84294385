// Bearer tokens of the server (SPEC §10): rows keyed by id, found by the hash of their secret
// (the secret itself is never stored). Creating and revoking are audited in their transaction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/rows.h"

namespace quarry::catalog {

class TokenTable {
 public:
  virtual ~TokenTable() = default;

  virtual void create(const TokenRow& row, const std::string& secret_hash, const AuditEntry& a) = 0;
  virtual std::vector<TokenRow> list() const = 0;
  virtual std::optional<TokenRow> find_by_hash(const std::string& secret_hash) const = 0;
  // False when no valid token has that id.
  virtual bool revoke(const std::string& id, const AuditEntry& a) = 0;
};

}  // namespace quarry::catalog
