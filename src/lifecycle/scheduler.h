// The embedding scheduler (SPEC §7): embeds what is pending — every document without vectors
// for its current content under a live revision — newest first, in batched provider calls run
// by a bounded pool of workers, through the embedding cache so unchanged chunk text is never
// embedded twice.
//
// Crash safety comes from the order of writes, not from a queue: vectors go to the store
// (upsert replaces a document's chunks, never appends), then the coordinates row is written.
// A process killed anywhere leaves at worst a document whose vectors are stored but not yet
// recorded; the next sweep embeds it again (from the cache) and replaces them — nothing lost,
// nothing duplicated.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "catalog/embed_cache.h"
#include "lifecycle/foreground.h"
#include "lifecycle/vectors.h"
#include "quarry/types.h"

namespace quarry::lifecycle {

// Cuts a document's chunks under a config from its Markdown (lifecycle::rechunk_document).
using Rechunk =
    std::function<std::vector<catalog::ChunkRow>(const catalog::DocumentRow&, const KbConfig&)>;

class Scheduler {
 public:
  // `lock_timeout_ms`: how long a commit waits for the data directory's writer lock.
  Scheduler(Vectors& vectors, catalog::EmbedCache& cache, Rechunk rechunk, int lock_timeout_ms)
      : vectors_(vectors),
        cache_(cache),
        rechunk_(std::move(rechunk)),
        lock_timeout_ms_(lock_timeout_ms) {}

  // Reconciles the KB (plan(), orphans) and embeds everything pending, the serving
  // revision's documents first, then a building revision's; cuts over when a build is
  // complete. Stops early on cancel, max_documents or a retryable provider failure (the
  // report says which); the work left stays pending.
  ReindexReport sweep(const catalog::KbRef& kb, const KbConfig& config, const ReindexOptions& o,
                      const catalog::AuditEntry& actor);

 private:
  struct Job;
  bool build_revision(const catalog::KbRef& kb, const catalog::RevisionRow& rev,
                      const ReindexOptions& o, ReindexReport& report);
  // Embeds what the cache lacks; the calling thread is one of the workers and paces itself
  // with `pacer`.
  void embed_jobs(KbVectors& v, std::vector<Job>& jobs, const ReindexOptions& o,
                  foreground::Pacer& pacer, ReindexReport& report);
  // Commits a page of jobs: their vectors, coordinates, tombstones and staged chunks.
  void commit(const catalog::KbRef& kb, const catalog::RevisionRow& rev, KbVectors& v,
              std::vector<Job>& jobs, ReindexReport& report);
  // Re-cuts documents whose chunks were cut under other chunking than the serving revision's
  // (a straggler of a cut-over, a crash between its steps). Holds the writer lock.
  int rechunk_stragglers(const catalog::KbRef& kb);

  Vectors& vectors_;
  catalog::EmbedCache& cache_;
  Rechunk rechunk_;
  int lock_timeout_ms_;
};

}  // namespace quarry::lifecycle
