// Knowledge bases (SPEC §1): name, config, statistics and the generations status caches key on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catalog/rows.h"

namespace quarry::catalog {

class KbTable {
 public:
  virtual ~KbTable() = default;

  // Creates the KB and its (empty) keyword index; already_exists when the name is taken.
  virtual KbRow create(const std::string& name, const std::string& config_json,
                       const AuditEntry& a) = 0;
  virtual std::optional<KbRow> find(const std::string& name) const = 0;
  // Resolves a KB for a request; throws not_found naming it.
  virtual KbRow get(const std::string& name) const = 0;
  virtual std::vector<KbRow> list() const = 0;
  virtual void update_config(const KbRef& kb, const std::string& config_json,
                             const AuditEntry& a) = 0;
  // Deletes the KB, its documents, chunks, keyword index and lifecycle rows; returns the
  // deleted document ids.
  virtual std::vector<std::string> remove(const KbRef& kb, const AuditEntry& a) = 0;
  virtual KbStats stats(const KbRef& kb) const = 0;
  // The KB's chunk count, cached per KB generation (every write bumps it), so a search can
  // report index_status without summing the KB's documents each time.
  virtual std::int64_t chunk_count(const KbRef& kb) const = 0;
  // (document generation, vector generation): the first moves with every document write, the
  // second with every lifecycle row written; status caches key on both.
  virtual std::pair<std::int64_t, std::int64_t> generations(const KbRef& kb) const = 0;
};

}  // namespace quarry::catalog
