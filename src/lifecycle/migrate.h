// Moving a KB's vectors to another store without re-embedding (SPEC §6, `quarry kb
// migrate-store`). The serving revision's vectors are rebuilt in the target store from the
// embedding cache (the vectors the provider returned, keyed by embedder identity and text), the
// target's count is checked against the catalog's coordinates, and only then does the KB switch:
// config, revision row and coordinates in one transaction. The old store's vectors of the KB go
// last. A failure before the switch leaves the KB as it was (and the target emptied of it).
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "catalog/embed_cache.h"
#include "lifecycle/vectors.h"
#include "quarry/types.h"

namespace quarry::lifecycle {

// The caller holds the writer lock. `target` is `current` with another store.
StoreMigrationReport migrate_store(Vectors& vectors, catalog::Catalog& cat,
                                   catalog::EmbedCache& cache, const catalog::KbRef& kb,
                                   const KbConfig& current, const KbConfig& target,
                                   const catalog::AuditEntry& audit,
                                   const StoreMigrationOptions& options = {});

}  // namespace quarry::lifecycle
