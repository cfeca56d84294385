#!/usr/bin/env bash
# The serving benchmark with its peer in the same run: starts a real Chroma server (from the
# shared peer kit) on 127.0.0.1, runs `quarry-bench serve` against it and stops it by PID.
# Usage: bench/serve.sh [DATASET_DIR=../shared/datasets/scifact] [extra quarry-bench options]
set -euo pipefail
cd "$(dirname "$0")/.."
DATASET=${1:-../shared/datasets/scifact}
shift || true
KIT=${PEERS_KIT:-../shared/peers}
PORT=${CHROMA_BENCH_PORT:-8011}
command -v wrk >/dev/null || { echo "serve.sh: wrk is missing (scripts/setup installs it)" >&2; exit 1; }
[ -d "${PEERS_HOME:-/tmp/quarry-peers}/node_modules" ] || bash "$KIT/setup.sh" >&2
eval "$(bash "$KIT/chroma.sh" start "$PORT")"
trap 'bash "$KIT/chroma.sh" stop "$PORT" >/dev/null 2>&1 || true' EXIT
./build/quarry-bench serve --dataset "$DATASET" --chroma-url "$CHROMA_URL" "$@"
