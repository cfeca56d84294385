// The pgvector store's transaction handle (pgvector_store.h): BEGIN on construction, ROLLBACK
// unless committed, on one pooled connection held for its whole life.
#include "quarry/error.h"
#include "store/pgvector/pgvector_store.h"

namespace quarry::store::pgvector {

PgTransaction::PgTransaction(PgPool::Lease lease) : lease_(std::move(lease)) {
  exec(lease_.get(), "BEGIN");
}

PgTransaction::~PgTransaction() {
  if (open_ && PQstatus(lease_.get()) == CONNECTION_OK) PQclear(PQexec(lease_.get(), "ROLLBACK"));
}

void PgTransaction::commit() {
  if (!open_) throw Error(Code::invalid_argument, "the pgvector transaction is already closed");
  open_ = false;
  exec(lease_.get(), "COMMIT");
}

void PgTransaction::rollback() {
  if (!open_) return;
  open_ = false;
  exec(lease_.get(), "ROLLBACK");
}

}  // namespace quarry::store::pgvector
