#!/usr/bin/env bash
# wrk -c50 on /api/v1/health and one keyword search, for each build given, against one data
# directory (docs/benchmarks.md, "Serving under idle, slow and busy peers").
# Usage: bench/wrk_c50.sh DATA_DIR LABEL=QUARRY_BIN [LABEL=QUARRY_BIN ...]
# DATA_DIR must hold a KB named `kb` (quarry-bench probe builds one under
# /tmp/quarry-bench-probe/data-scifact).
set -euo pipefail
DATA=$1
shift
command -v wrk >/dev/null || { echo "wrk_c50.sh: wrk is missing (scripts/setup installs it)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/kw.lua" <<'L'
wrk.method = "POST"
wrk.body = '{"query": "cancer cells mutation", "mode": "keyword"}'
wrk.headers["Content-Type"] = "application/json"
L
for pair in "$@"; do
  label=${pair%%=*}
  bin=${pair#*=}
  "$bin" --data-dir "$DATA" serve --port 0 --no-indexer --port-file "$WORK/port" > "$WORK/$label.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  port=$(cat "$WORK/port")
  rm -f "$WORK/port"
  wrk -t2 -c50 -d3s -s "$WORK/kw.lua" "http://127.0.0.1:$port/api/v1/kbs/kb/search" > /dev/null
  echo "== $label health"
  wrk --latency -t2 -c50 -d10s "http://127.0.0.1:$port/api/v1/health" | grep -E "Latency|99%|Requests/sec"
  echo "== $label keyword"
  wrk --latency -t2 -c50 -d10s -s "$WORK/kw.lua" "http://127.0.0.1:$port/api/v1/kbs/kb/search" |
    grep -E "Latency|99%|Requests/sec|Non-2xx"
  kill "$pid"
  wait "$pid" || true
done
