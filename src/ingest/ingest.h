// The ingest pipeline (SPEC §2, §7): bytes -> converter -> Markdown -> chunker -> catalog.
// Synchronous up to keyword indexing; one catalog transaction per document.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "chunk/chunking.h"
#include "convert/converter.h"
#include "ingest/staging.h"
#include "quarry/types.h"

namespace quarry::ingest {

// One write to one KB (resolved by the caller, under the writer lock).
struct WriteContext {
  const Layout& layout;
  catalog::Catalog& catalog;
  const catalog::KbRef& kb;
  const convert::Registry& converters;
  const chunk::Chunking& chunking;  // how this KB's documents are cut now
  catalog::AuditEntry audit;        // actor + surface; action/target filled per write
};

// Throws Error(payload_too_large) when `bytes` exceeds limits.max_upload_bytes.
void check_upload_size(const KbConfig& config, const std::string& kb, const std::string& name,
                       std::int64_t bytes);

// Validates and merges metadata JSON; applies the KB's subject rule (SPEC §1). Returns the
// canonical metadata text and sets subject key/value on `row`.
std::string prepare_metadata(const KbConfig& config, const std::string& metadata_json,
                             catalog::DocumentRow& row);

// Ingests one upload under the identity rules of §2.4. Throws quarry::Error on failure.
// `batch_chunks` accumulates chunks across a call for the per-call limit.
IngestItem ingest_document(const WriteContext& ctx, const KbConfig& config,
                           const std::string& filename, const std::string& bytes,
                           const IngestOptions& opts, std::int64_t* batch_chunks);

// A document's chunks cut as `chunking` says, from its Markdown on disk, the document untouched
// (blue-green chunking builds them beside the serving ones; reconciliation re-cuts stragglers).
std::vector<catalog::ChunkRow> rechunk_document(const Layout& layout,
                                                const chunk::Chunking& chunking,
                                                const catalog::DocumentRow& row);

// Re-chunks and rewrites an existing document from a new Markdown body (edit) or a fresh
// conversion (reconvert); `raw` is non-null only when the raw file changes too.
catalog::DocumentRow rewrite_document(const WriteContext& ctx, catalog::DocumentRow row,
                                      const std::string& markdown_body, const std::string* raw,
                                      const std::string& action);

}  // namespace quarry::ingest
