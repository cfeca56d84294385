// The Quarry library entry point. The CLI, and later the REST and MCP servers, are thin shells
// over this class. One Engine per data directory per process; methods are safe to call from
// one thread at a time (open one Engine per thread for parallel readers).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quarry/error.h"
#include "quarry/types.h"

namespace quarry {

struct EngineOptions {
  std::string data_dir;             // created if missing
  std::string actor;                // who, for the audit log (default: OS user)
  std::string surface = "library";  // cli | rest | mcp | library
  int lock_timeout_ms = 10000;      // wait for another writer this long, then Error(busy)
};

class Engine {
 public:
  static std::unique_ptr<Engine> open(const EngineOptions& options);
  virtual ~Engine() = default;

  // Knowledge bases (SPEC §1). Config documents are JSON text in the strict schema.
  virtual KbInfo create_kb(const std::string& name, const std::string& config_json) = 0;
  virtual std::vector<KbInfo> list_kbs() = 0;
  virtual KbInfo describe_kb(const std::string& name) = 0;
  // A change of revision (embedder, chunking, revision counter) starts a blue-green build:
  // vector queries keep being answered from the serving revision until the new one is
  // complete (SPEC §7). `cutover_immediate` switches at once and drops the old vectors.
  virtual KbInfo set_kb(const std::string& name,
                        const std::vector<std::pair<std::string, std::string>>& settings,
                        bool cutover_immediate = false) = 0;
  // What set_kb would do with the same arguments, without doing it: the same checks and errors
  // (each document is chunked under new chunking, as set_kb does before it commits), the
  // resulting config and whether it re-embeds or re-cuts (a dry run; nothing is written).
  virtual KbChangePlan plan_kb_change(
      const std::string& name, const std::vector<std::pair<std::string, std::string>>& settings,
      bool cutover_immediate = false) = 0;
  virtual void delete_kb(const std::string& name) = 0;

  // Moves the KB's vectors to another store (id and settings as in the config's `store`)
  // without re-embedding, verifies the count, then switches (SPEC §6). Refused while a
  // blue-green build runs, and when the embedding cache no longer holds every vector.
  virtual StoreMigrationReport migrate_store(const std::string& kb, const std::string& store_id,
                                             const std::string& store_settings_json,
                                             const StoreMigrationOptions& options = {}) = 0;

  // Ingestion (SPEC §2). A file or a directory (recursive); per-file errors go in the report.
  virtual IngestReport ingest_path(const std::string& kb, const std::string& path,
                                   const IngestOptions& opts) = 0;
  // One upload held in memory. Throws on error.
  virtual IngestItem ingest_bytes(const std::string& kb, const std::string& filename,
                                  const std::string& bytes, const IngestOptions& opts) = 0;

  // Documents.
  virtual DocumentPage list_documents(const std::string& kb, const std::string& cursor, int limit,
                                      const std::string& filter_json = "") = 0;
  virtual Document get_document(const std::string& kb, const std::string& id) = 0;
  // The Markdown body (front matter stripped) of a document.
  virtual std::string read_markdown(const std::string& kb, const std::string& id) = 0;
  // The document's chunks in order, with their offsets into that body.
  virtual std::vector<ChunkInfo> list_chunks(const std::string& kb, const std::string& id) = 0;
  virtual Document edit_document(const std::string& kb, const std::string& id,
                                 const std::string& markdown) = 0;
  virtual Document reconvert_document(const std::string& kb, const std::string& id) = 0;
  virtual void delete_document(const std::string& kb, const std::string& id) = 0;
  // Deletes every document whose metadata matches the filter (e.g. one §1 subject).
  virtual std::vector<std::string> delete_where(const std::string& kb,
                                                const std::string& filter_json) = 0;

  // Index lifecycle (SPEC §7). Ingest and edits commit the keyword index and leave vectors
  // pending; reindex() reconciles the KB (drops vectors of deleted documents, collects the
  // revision a cut-over left) and embeds everything pending, newest first, until done,
  // cancelled or a provider fails (the report says which). Safe to kill at any point.
  virtual ReindexReport reindex(const std::string& kb, const ReindexOptions& opts) = 0;

  // Retrieval (SPEC §4).
  virtual SearchResponse search(const SearchRequest& request) = 0;
  virtual GrepResponse grep(const GrepRequest& request) = 0;

  // Activity log (SPEC §10), newest first; `kb` "" = every KB; `before_id` pages (0 = newest).
  virtual std::vector<ActivityEntry> activity(const std::string& kb, int limit,
                                              std::int64_t before_id = 0) = 0;

  // Server tokens (SPEC §10). `kbs` empty = every KB. The secret comes back once.
  virtual NewToken create_token(const std::string& name, const std::string& scope,
                                const std::vector<std::string>& kbs) = 0;
  virtual std::vector<TokenInfo> list_tokens() = 0;
  virtual void revoke_token(const std::string& id) = 0;
  // The valid token whose secret this is, or nothing.
  virtual std::optional<TokenInfo> authenticate(const std::string& secret) = 0;

  // Who the following calls are made by, for the audit log (a server reuses one Engine for
  // many callers: it sets the caller before each request).
  virtual void set_identity(const std::string& actor, const std::string& surface) = 0;

  virtual const std::string& data_dir() const = 0;
};

}  // namespace quarry
