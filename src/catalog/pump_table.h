// The embedding pump's state (SPEC §8): each deployed use case's config and run state (attempts,
// parked, queued trigger, single-flight lease), its tombstones, usage entries for the spend
// budget, and the pump's settings. The app's own storage is the pump's ledger; only this is ours.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catalog/rows.h"

namespace quarry::catalog {

class PumpTable {
 public:
  virtual ~PumpTable() = default;

  virtual std::vector<PumpUseCaseRow> list() const = 0;
  virtual std::optional<PumpUseCaseRow> find(const std::string& name) const = 0;
  // Writes every row (config and state as given) and drops the use cases not among them with
  // their tombstones, in one transaction with its audit entry.
  virtual void deploy(const std::vector<PumpUseCaseRow>& rows, const AuditEntry& a) = 0;

  // Takes the use case's lease when it is free or older than `stale_before` (ms), and clears
  // its pending flag (this run serves the queued trigger). False when another run holds it.
  virtual bool claim_lease(const std::string& name, const std::string& owner, std::int64_t now,
                           std::int64_t stale_before) = 0;
  // Takes over the lease `old_owner` holds (its process is known to be gone). False when the
  // lease changed hands meanwhile.
  virtual bool take_over_lease(const std::string& name, const std::string& old_owner,
                               const std::string& owner, std::int64_t now) = 0;
  // Releases the lease with the run's outcome. A trigger that arrived during the run stays
  // pending. False when the lease was not `owner`'s any more (reclaimed as stale).
  virtual bool finish_run(const std::string& name, const std::string& owner,
                          const PumpRunEnd& end) = 0;
  // A trigger: queues a run, due now unless a retry is backing off (then at its time). A parked
  // use case gets one more attempt. False for an unknown use case.
  virtual bool trigger(const std::string& name, std::int64_t now) = 0;

  // The tombstone's (code, message), when (content hash, key) has one.
  virtual std::optional<std::pair<std::string, std::string>> tombstone(
      const std::string& name, const std::string& content_hash, const std::string& key) const = 0;
  // Keeps the newest 1,000 per use case.
  virtual void put_tombstone(const std::string& name, const std::string& content_hash,
                             const std::string& key, const std::string& code,
                             const std::string& message, std::int64_t at) = 0;
  virtual std::int64_t tombstone_count(const std::string& name) const = 0;

  // Usage entries (`kind` run: a provider batch of up to 128 chunks; embed: one query text).
  // Entries older than 400 days are dropped as new ones come. One entry per element of
  // `chunks` (its chunk count), in one transaction.
  virtual void add_usage(const std::string& name, std::int64_t at, const std::vector<int>& chunks,
                         const std::string& kind) = 0;
  // name -> (entries, chunks) since `since` (ms).
  virtual std::map<std::string, std::pair<std::int64_t, std::int64_t>> usage_since(
      std::int64_t since) const = 0;
  virtual std::int64_t usage_entries_since(std::int64_t since) const = 0;

  virtual std::optional<std::string> setting(const std::string& key) const = 0;
  virtual void set_setting(const std::string& key, const std::optional<std::string>& value,
                           const AuditEntry& a) = 0;
};

}  // namespace quarry::catalog
