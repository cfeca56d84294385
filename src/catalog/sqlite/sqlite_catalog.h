// What only the SQLite backend offers beyond the catalog port: its connection, for tests that
// check the database file itself (integrity_check, raw rows).
#pragma once

#include "catalog/catalog.h"
#include "catalog/sqlite/sqlite.h"

namespace quarry::catalog {

// The connection of a catalog opened by Catalog::open (nullptr for another backend).
sqlite3* sqlite_handle(const Catalog& c);

}  // namespace quarry::catalog
