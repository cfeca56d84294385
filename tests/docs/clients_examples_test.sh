#!/usr/bin/env bash
# Runs every ```python and ```js block of docs/clients.md, in order, against a real
# `quarry serve` with an empty KB `handbook` (static:glove-100d embedder), so the client guide
# cannot drift from the clients. Each block runs as its own process, in one shared working
# directory, with QUARRY_URL set:
#   python: $PYTHON (default python3) with PYTHONPATH=clients/python;
#   js:     node --input-type=module, where `import ... from "quarry-client"` resolves to
#           clients/js (a node_modules link in the working directory; NODE_PATH for require).
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

# `import ... from "quarry-client"` from the working directory finds clients/js.
if ls "$tmp/blocks"/*.js >/dev/null 2>&1; then
  command -v node >/dev/null || fail "docs/clients.md has js blocks and node is not installed"
  [ -d "$source_dir/clients/js" ] || fail "docs/clients.md has js blocks and clients/js is missing"
  mkdir -p "$tmp/work/node_modules"
  ln -s "$source_dir/clients/js" "$tmp/work/node_modules/quarry-client"
fi

count=0
for block in "$tmp/blocks"/*; do
  [ -e "$block" ] || continue
  count=$((count + 1))
  case "$block" in
    *.python)
      run=(env PYTHONPATH="$source_dir/clients/python" timeout 120 "$python" "$block") ;;
    *.js)
      run=(env NODE_PATH="$tmp/work/node_modules" timeout 120 node --input-type=module) ;;
  esac
  if ! (cd "$tmp/work" && "${run[@]}" <"$block") >"$tmp/out" 2>&1; then
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
