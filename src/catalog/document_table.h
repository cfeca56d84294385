// Documents and their chunks (SPEC §1, §2): every write is one transaction with its audit row,
// and a document's chunks and keyword postings change with it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/rows.h"

namespace quarry::catalog {

class DocumentTable {
 public:
  virtual ~DocumentTable() = default;

  virtual std::optional<DocumentRow> find(const KbRef& kb, const std::string& id) const = 0;
  virtual std::optional<DocumentRow> find_by_filename(const KbRef& kb,
                                                      const std::string& filename) const = 0;
  // Ordered by id; `after` is the cursor (last id of the previous page).
  virtual std::vector<DocumentRow> list(const KbRef& kb, const std::string& after, int limit,
                                        const core::Filter& filter = {}) const = 0;
  // Every document of `kb` matching `filter`, ordered by id: only id, name and subject.
  virtual std::vector<DocumentRef> refs(const KbRef& kb, const core::Filter& filter = {}) const = 0;
  virtual std::int64_t count_matching(const KbRef& kb, const core::Filter& filter) const = 0;
  // Whether any document of `kb` matches (cheap: stops at the first; for index_status).
  virtual bool any(const KbRef& kb, const core::Filter& filter = {}) const = 0;
  virtual std::vector<ChunkRow> chunks_of(const KbRef& kb, const std::string& doc_id) const = 0;
  // Documents whose chunks were cut under another chunking than `chunking` ('' rows excepted).
  virtual std::vector<DocumentRow> chunked_otherwise(const KbRef& kb,
                                                     const std::string& chunking) const = 0;

  // Inserts or replaces the document row and all of its chunks in one transaction.
  virtual void put(const KbRef& kb, const DocumentRow& doc, const std::vector<ChunkRow>& chunks,
                   const AuditEntry& a) = 0;
  // False when the document does not exist.
  virtual bool remove(const KbRef& kb, const std::string& id, const AuditEntry& a) = 0;
  // Deletes every document whose metadata matches the (non-empty) filter; returns their ids.
  virtual std::vector<std::string> remove_where(const KbRef& kb, const core::Filter& filter,
                                                const AuditEntry& a) = 0;
  // Replaces a document's chunks (and its keyword postings) with `chunks` cut under
  // `chunking`, leaving the Markdown and the document's hashes as they are.
  virtual void replace_chunks(const KbRef& kb, const std::string& doc_id,
                              const std::string& chunking, const std::vector<ChunkRow>& chunks) = 0;
};

}  // namespace quarry::catalog
