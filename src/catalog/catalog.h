// The catalog (SPEC §1, §10): knowledge bases, documents, chunks, the per-KB keyword index, the
// activity log, tokens, the index lifecycle's rows and the pump's state, behind a port.
//
// A Catalog is one connection to one backend, with one transaction discipline: every write of
// a table is one transaction that writes its audit row in that same transaction (a crash leaves
// the previous state, never half a document); a write made while a Batch is open becomes part
// of the Batch's transaction (a savepoint of it); reads made while a ReadSnapshot is open see
// one state of the catalog. The tables are small types over that connection, one per table
// group (catalog/*_table.h, keyword_index.h, audit_log.h), addressed by a KbRef that a request
// resolves once (kbs().get(name)).
//
// The rest of the engine sees only these interfaces; the SQLite backend (catalog/sqlite/) is
// the one implementation today, and the only code that includes SQLite.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "catalog/audit_log.h"
#include "catalog/document_table.h"
#include "catalog/kb_table.h"
#include "catalog/keyword_index.h"
#include "catalog/pump_table.h"
#include "catalog/revision_table.h"
#include "catalog/rows.h"
#include "catalog/token_table.h"

namespace quarry::catalog {

class Catalog {
 public:
  // A transaction a backend keeps open while its owner lives: rolled back on destruction
  // unless committed (a read transaction has nothing to commit).
  class Txn {
   public:
    virtual ~Txn() = default;
    virtual void commit() = 0;
  };

  // The reads made while it lives (one search) see one snapshot and take the backend's locks
  // once. Nothing inside an outer transaction.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(const Catalog& c) : tx_(c.begin_read()) {}

   private:
    std::unique_ptr<Txn> tx_;
  };

  // Groups many writes into one transaction (each write's own becomes a savepoint of it): a
  // sweep commits a page of documents at once. Rolled back unless commit() is called.
  class Batch {
   public:
    explicit Batch(Catalog& c) : tx_(c.begin_write()) {}
    void commit() { tx_->commit(); }

   private:
    std::unique_ptr<Txn> tx_;
  };

  // Opens (creating if needed) and migrates the SQLite catalog at `path` (core::Layout names
  // it).
  static std::unique_ptr<Catalog> open(const std::string& path);
  virtual ~Catalog() = default;

  virtual KbTable& kbs() = 0;
  virtual const KbTable& kbs() const = 0;
  virtual DocumentTable& documents() = 0;
  virtual const DocumentTable& documents() const = 0;
  virtual KeywordIndex& keyword() = 0;
  virtual const KeywordIndex& keyword() const = 0;
  virtual AuditLog& audit() = 0;
  virtual const AuditLog& audit() const = 0;
  virtual TokenTable& tokens() = 0;
  virtual const TokenTable& tokens() const = 0;
  virtual RevisionTable& revisions() = 0;
  virtual const RevisionTable& revisions() const = 0;
  virtual PumpTable& pump() = 0;
  virtual const PumpTable& pump() const = 0;

  virtual int schema_version() const = 0;
  // Rows this connection has written so far (moves with every local write; status caches
  // use it to tell their own writes from other processes').
  virtual std::int64_t local_changes() const = 0;

 protected:
  virtual std::unique_ptr<Txn> begin_read() const = 0;
  virtual std::unique_ptr<Txn> begin_write() = 0;
};

}  // namespace quarry::catalog
