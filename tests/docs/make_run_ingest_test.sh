#!/usr/bin/env bash
# `make run` ingests docs/ before it serves, and stops if that ingest reports a failed file (a
# screenshot under docs/ui/ once made it exit 20). This runs the Makefile's own ingest line, as
# `make -n run` prints it, against a scratch data directory with the binary under test.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$(realpath "${QUARRY_BINARY:-build/quarry}")
BUILD=$(realpath --relative-to=. "$(dirname "$BIN")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
line=$(make -s -n run DATA="$tmp/data" BUILD="$BUILD" | grep -E '^\./.*/quarry .* ingest docs/')
[ -n "$line" ] || { echo "make -n run printed no ingest of docs/" >&2; exit 1; }
"$BIN" --data-dir "$tmp/data" kb create docs >/dev/null
eval "$line" > "$tmp/out" || { cat "$tmp/out"; echo "make run's ingest of docs/ failed: $line" >&2; exit 1; }
grep -q ' 0 failed' "$tmp/out" || { cat "$tmp/out"; exit 1; }
echo "ok: $line"
