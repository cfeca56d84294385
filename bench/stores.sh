#!/usr/bin/env bash
# External stores through Quarry's VectorStore port beside the same server called directly, in
# one run (issue 6: the store's own overhead should stay within 10% of the direct call).
# Chroma: a fresh server from tests/store/chroma/chroma_server.sh; the direct peer is the shared
# kit's bench_chroma_http.mjs (Node fetch, batch adds) on the same data (../shared/peers).
# Usage: bench/stores.sh [20k|100k]
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-20k}
N=$([ "$SIZE" = 100k ] && echo 100000 || echo 20000)
PORT=${CHROMA_BENCH_PORT:-18021}
KIT=${PEERS_KIT:-../shared/peers}
PEERS_HOME=${PEERS_HOME:-/tmp/quarry-peers}
[ -d "$PEERS_HOME/node_modules" ] || bash "$KIT/setup.sh" >&2
bash tests/store/chroma/chroma_server.sh start "$PORT" >&2
trap 'bash tests/store/chroma/chroma_server.sh stop "$PORT" >/dev/null 2>&1 || true' EXIT
PID=$(cat "${TMPDIR:-/tmp}/quarry-chroma-test-$PORT/pid")
./build/quarry-bench ann --n "$N" --data "$PEERS_HOME/data" --store chroma --store-settings \
  "{\"url\": \"http://127.0.0.1:$PORT\", \"allow_private\": true, \"max_neighbors\": 16, \"ef_construction\": 200, \"ef_search\": 64}"
echo
echo "direct: bench_chroma_http.mjs $SIZE (same server, same HNSW settings)"
PEERS_HOME=$PEERS_HOME node "$PEERS_HOME/bench/bench_chroma_http.mjs" "$SIZE" "url=http://127.0.0.1:$PORT" "pid=$PID" cfg=bench
