#!/usr/bin/env bash
# Runs every ```python and ```js block of docs/clients.md, in order, against a real
# `quarry serve` with two KBs, an empty `handbook` (static:glove-100d embedder) and `notes` holding
# keys.md (for the README's example), so the
# client guide cannot drift from the clients. Each block runs as its own process with
# QUARRY_URL set:
#   python: $PYTHON (default python3) with PYTHONPATH=clients/python, in a scratch directory;
#   js:     node on a .mjs file in a scratch folder inside clients/js, so that
#           `import ... from "quarry-client"` resolves through the package's own "exports" and
#           `@langchain/core` from clients/js/node_modules (scripts/setup's `npm ci`).
# A block that exits non-zero fails the test, which prints the block and its output. No block
# of another language is skipped silently: any other fenced language that looks runnable
# (py, javascript, mjs) fails the test so that it gets a runner here.
#
# Usage: QUARRY_BINARY=build/quarry tests/docs/clients_examples_test.sh [path/to/clients.md]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="${QUARRY_SOURCE_DIR:-$(cd "$here/../.." && pwd)}"
doc="${1:-$source_dir/docs/clients.md}"
binary="${QUARRY_BINARY:-$source_dir/build/quarry}"
python="${PYTHON:-python3}"

[ -x "$binary" ] || { echo "FAIL: QUARRY_BINARY '$binary' is not an executable"; exit 1; }
[ -f "$doc" ] || { echo "FAIL: $doc not found"; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/quarry-client-docs.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  if [ -n "${js_dir:-}" ]; then rm -rf "$js_dir"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  if [ -f "$tmp/server.log" ]; then
    echo "--- server log (last 40 lines) ---"
    tail -n 40 "$tmp/server.log"
  fi
  exit 1
}

# Split the page into numbered block files: NNN.python, NNN.js.
mkdir -p "$tmp/blocks" "$tmp/work"
"$python" - "$doc" "$tmp/blocks" <<'PY' || fail "cannot read the blocks of $doc"
import re, sys
doc, out = sys.argv[1], sys.argv[2]
runnable = {"python": "python", "js": "js"}
unrunnable = {"py", "python3", "javascript", "mjs", "ts", "typescript"}
n = 0
for m in re.finditer(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```\s*$", open(doc).read(), re.S | re.M):
    lang, body = m.group(1), m.group(2)
    if lang in unrunnable:
        sys.exit("a ```%s block has no runner here; use ```python or ```js" % lang)
    if lang in runnable:
        n += 1
        with open("%s/%03d.%s" % (out, n, runnable[lang]), "w") as f:
            f.write(body)
print("%d runnable blocks" % n)
PY

"$binary" --data-dir "$tmp/data" kb create handbook --embedder static:glove-100d \
  >"$tmp/kb.log" 2>&1 || fail "kb create: $(cat "$tmp/kb.log")"
"$binary" --data-dir "$tmp/data" kb create notes >"$tmp/kb.log" 2>&1 \
  || fail "kb create: $(cat "$tmp/kb.log")"
# One document in `notes`, so the README's search example has a hit whose fields it prints.
printf '# Key rotation\n\nWe rotate keys every 90 days and after anyone leaves the team.\n' >"$tmp/keys.md"
"$binary" --data-dir "$tmp/data" ingest "$tmp/keys.md" --kb notes >"$tmp/kb.log" 2>&1 \
  || fail "ingest keys.md: $(cat "$tmp/kb.log")"
"$binary" --data-dir "$tmp/data" serve --port 0 --port-file "$tmp/port" >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  [ -s "$tmp/port" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "quarry serve exited"
  sleep 0.1
done
[ -s "$tmp/port" ] || fail "quarry serve did not write its port"
export QUARRY_URL="http://127.0.0.1:$(cat "$tmp/port")"
unset QUARRY_TOKEN

js_dir=""
if ls "$tmp/blocks"/*.js >/dev/null 2>&1; then
  command -v node >/dev/null || fail "docs/clients.md has js blocks and node is not installed"
  [ -d "$source_dir/clients/js/node_modules/@langchain/core" ] \
    || fail "clients/js/node_modules is missing: run scripts/setup (it runs npm ci in clients/js)"
  js_dir="$(mktemp -d "$source_dir/clients/js/.doc-run-XXXXXX")"
fi

count=0
for block in "$tmp/blocks"/*; do
  [ -e "$block" ] || continue
  count=$((count + 1))
  case "$block" in
    *.python)
      run=(env PYTHONPATH="$source_dir/clients/python" timeout 120 "$python" "$block") ;;
    *.js)
      cp "$block" "$js_dir/$(basename "$block" .js).mjs"
      run=(timeout 120 node "$js_dir/$(basename "$block" .js).mjs") ;;
  esac
  if ! (cd "$tmp/work" && "${run[@]}" </dev/null) >"$tmp/out" 2>&1; then
    echo "--- block $(basename "$block") ---"
    cat "$block"
    echo "--- output ---"
    cat "$tmp/out"
    fail "block $(basename "$block") of $doc exited non-zero"
  fi
  echo "ok $(basename "$block")"
done
[ "$count" -gt 0 ] || fail "no python or js blocks in $doc"
echo "PASS: $count blocks of $doc"
