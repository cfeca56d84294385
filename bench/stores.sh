#!/usr/bin/env bash
# External stores through Quarry's VectorStore port beside the same server called directly, in
# one run (issue 6: the store's own overhead should stay within 10% of the direct call).
#   chroma:   a fresh Chroma 1.0 server (tests/store/chroma/chroma_server.sh); the store with 64
#             documents per upsert_many (the scheduler's page) and 5,000 (the direct peers'
#             batch); direct peers: bench/chroma_direct.mjs (the store's very records: upsert
#             with metadata) and the shared kit's bench_chroma_http.mjs (ids and vectors only).
#   pgvector: a fresh in-memory PGlite + pgvector 0.8 (tests/store/pgvector/pg_server.sh) per row:
#             the store (64 documents per upsert_many into a table whose HNSW index exists, as
#             a store that takes writes at any time must have it); two hand-written libpq peers
#             (bench/pg_direct.h) on the same table layout and index, 64 rows per INSERT:
#             `same_sql` sends the store's query statements (BEGIN; SET LOCAL ...; query;
#             COMMIT), `plain` a prepared SELECT under a session-level SET; and the kit's
#             bench_pgvector (bulk INSERT, then CREATE INDEX).
#   qdrant:   no Qdrant server runs here; not measured.
# Usage: bench/stores.sh [20k|100k] [chroma] [pgvector]   (default: both stores)
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-20k}
shift || true
STORES=${*:-chroma pgvector}
N=$([ "$SIZE" = 100k ] && echo 100000 || echo 20000)
KIT=${PEERS_KIT:-../shared/peers}
PEERS_HOME=${PEERS_HOME:-/tmp/quarry-peers}
[ -d "$PEERS_HOME/node_modules" ] && [ -x "$PEERS_HOME/bin/bench_pgvector" ] ||
  bash "$KIT/setup.sh" >&2
HNSW='"ef_search": 64'

chroma() {
  local port=${CHROMA_BENCH_PORT:-18021}
  bash tests/store/chroma/chroma_server.sh start "$port" >&2
  trap 'bash tests/store/chroma/chroma_server.sh stop '"$port"' >/dev/null 2>&1 || true' RETURN
  local pid
  pid=$(cat "${TMPDIR:-/tmp}/quarry-chroma-test-$port/pid")
  echo "## chroma"
  for batch in 64 5000; do
    ./build/quarry-bench ann --n "$N" --data "$PEERS_HOME/data" --batch "$batch" --store chroma \
      --store-settings "{\"url\": \"http://127.0.0.1:$port\", \"allow_private\": true, \"max_neighbors\": 16, \"ef_construction\": 200, $HNSW}" |
      grep '^| quarry'
  done
  echo
  echo "direct: bench/chroma_direct.mjs $SIZE (same server; the store's records: upsert + metadata)"
  PEERS_HOME=$PEERS_HOME node bench/chroma_direct.mjs "$SIZE" "url=http://127.0.0.1:$port" "pid=$pid" |
    grep '^RESULT'
  echo "direct: bench_chroma_http.mjs $SIZE (same server, same HNSW settings; ids + vectors only)"
  PEERS_HOME=$PEERS_HOME node "$PEERS_HOME/bench/bench_chroma_http.mjs" "$SIZE" \
    "url=http://127.0.0.1:$port" "pid=$pid" cfg=bench | grep '^RESULT'
}

pg_start() {  # a fresh in-memory PGlite on $1
  bash tests/store/pgvector/pg_server.sh stop-pglite "$1" >/dev/null 2>&1 || true
  bash tests/store/pgvector/pg_server.sh start-pglite "$1" >&2
}

pgvector() {
  local port=${PG_BENCH_PORT:-18451}
  export QUARRY_BENCH_PG_DSN="host=127.0.0.1 port=$port user=postgres dbname=postgres sslmode=disable"
  trap 'bash tests/store/pgvector/pg_server.sh stop-pglite '"$port"' >/dev/null 2>&1 || true' RETURN
  echo "## pgvector (each row on a fresh server)"
  pg_start "$port"
  ./build/quarry-bench ann --n "$N" --data "$PEERS_HOME/data" --store pgvector --store-settings \
    "{\"dsn_secret\": \"QUARRY_BENCH_PG_DSN\", \"pool_size\": 1, \"m\": 16, \"ef_construction\": 200, $HNSW}" |
    grep '^| quarry'
  for mode in same_sql plain; do
    pg_start "$port"
    ./build/quarry-bench ann --n "$N" --data "$PEERS_HOME/data" --store pgvector-direct \
      --store-settings "{\"dsn_secret\": \"QUARRY_BENCH_PG_DSN\", \"mode\": \"$mode\"}" |
      grep '^| pgvector direct'
  done
  pg_start "$port"
  local pid
  pid=$(cat "${TMPDIR:-/tmp}/quarry-pg-test-$port/pid")
  echo "direct: the kit's bench_pgvector $N (INSERT 100 rows per statement, then CREATE INDEX)"
  "$PEERS_HOME/bin/bench_pgvector" "$QUARRY_BENCH_PG_DSN" "$PEERS_HOME/data" "$N" M=16 efC=200 \
    ef=64 exact=0 "server_pid=$pid" | grep '^RESULT'
}

for s in $STORES; do
  "$s"
  echo
done
