// The index lifecycle's rows (SPEC §1, §7): a KB's revisions (vector spaces), the coordinates of
// what a store holds per document and revision, permanent failures (tombstones) and a building
// revision's staged chunks.
//
// Pending work is never stored: a document is pending under a revision exactly when it has no
// coordinates for its current content hash and no tombstone for it, so a crash at any point
// leaves a state from which the next sweep knows what to do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/rows.h"

namespace quarry::catalog {

class RevisionTable {
 public:
  virtual ~RevisionTable() = default;

  virtual std::vector<RevisionRow> list(const KbRef& kb) const = 0;
  virtual std::optional<RevisionRow> in_state(const KbRef& kb, const std::string& state) const = 0;
  // Inserts or replaces the row (keyed by kb + revision).
  virtual void put(const KbRef& kb, const RevisionRow& r) = 0;
  // Forgets a revision: its row, coordinates and tombstones (its vectors are the store's).
  virtual void remove(const KbRef& kb, const std::string& revision) = 0;
  // The cut-over, in one transaction: `building` serves and the serving revision becomes
  // previous; with `adopt_chunking` set, every document's staged chunks of `building` (for its
  // current content) become its chunks, cut under `adopt_chunking`.
  virtual void cut_over(const KbRef& kb, const std::string& building,
                        const std::string& adopt_chunking) = 0;

  // Records that the store now holds `c.chunk_count` vectors of the document under
  // c.revision, and clears a tombstone of the same document and revision.
  virtual void put_coordinates(const KbRef& kb, const CoordinatesRow& c) = 0;
  virtual std::vector<CoordinatesRow> coordinates_of(const KbRef& kb,
                                                     const std::string& doc_id) const = 0;
  virtual void delete_coordinates(const KbRef& kb, const std::string& doc_id) = 0;
  // Records that the vectors of `revision` now live in store `store_id` (a store migration).
  virtual void move_coordinates(const KbRef& kb, const std::string& revision,
                                const std::string& store_id) = 0;
  // Documents whose coordinates remain though the document is gone (their vectors must go).
  virtual std::vector<std::string> orphaned_coordinates(const KbRef& kb) const = 0;

  // Up to `limit` documents of `kb` without coordinates for their current content under
  // `revision` and not tombstoned for it, newest first. With `after`, only documents after it
  // in that order (a sweep's cursor: each page starts where the last one ended instead of
  // walking past every document already done, which made a sweep quadratic in the KB); with
  // `updated_since` (ms), only documents written since then.
  virtual std::vector<PendingDocument> pending(const KbRef& kb, const std::string& revision,
                                               int limit, const PendingDocument* after = nullptr,
                                               std::int64_t updated_since = -1) const = 0;
  // Counts for the KB (or the documents matching `filter`): ready/failed under `revision`,
  // stale = not ready under `revision` but with current vectors under `older` ("" for none).
  // Cost is linear in the KB's documents: cache it on KbTable::generations().
  virtual VectorCounts counts(const KbRef& kb, const std::string& revision,
                              const std::string& older, const core::Filter& filter = {}) const = 0;

  virtual void put_failure(const KbRef& kb, const FailureRow& f) = 0;
  virtual std::vector<FailureRow> failures(const KbRef& kb, const std::string& revision,
                                           int limit = 1000) const = 0;

  // Blue-green chunking: a building revision's own chunks of a document (for its content).
  virtual void put_staged_chunks(const KbRef& kb, const std::string& revision,
                                 const std::string& doc_id, const std::string& content_sha256,
                                 const std::vector<ChunkRow>& chunks) = 0;
  virtual std::optional<std::vector<ChunkRow>> staged_chunks(
      const KbRef& kb, const std::string& revision, const std::string& doc_id,
      const std::string& content_sha256) const = 0;
};

}  // namespace quarry::catalog
