#!/usr/bin/env bash
# Runs every ```sh block of docs/rest.md, in order, against a real `quarry serve`, so the REST
# guide cannot drift from the server. Each block runs in its own `bash -euo pipefail` with
# QUARRY_URL and TOKEN (an admin token's secret) set, and `quarry` on the PATH with QUARRY_HOME
# the server's data directory, in one shared working directory; a block
# that exits non-zero fails the test, which prints the block and its output.
#
# Usage: QUARRY_BINARY=build/quarry tests/docs/rest_examples_test.sh [path/to/rest.md]
# Exit status: 0 pass, 1 fail, 77 skipped (curl or jq missing; the examples use both).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="${QUARRY_SOURCE_DIR:-$(cd "$here/../.." && pwd)}"
doc="${1:-$source_dir/docs/rest.md}"
openapi="$source_dir/docs/openapi.json"
binary="${QUARRY_BINARY:-$source_dir/build/quarry}"

for tool in curl jq sqlite3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (the examples in docs/rest.md use it)"
    exit 77
  fi
done
[ -x "$binary" ] || { echo "FAIL: QUARRY_BINARY '$binary' is not an executable"; exit 1; }
[ -f "$doc" ] || { echo "FAIL: $doc not found"; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/quarry-rest-docs.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ -z "${KEEP_TMP:-}" ]; then rm -rf "$tmp"; else echo "kept $tmp"; fi
}
trap cleanup EXIT

# True while the server runs (an exited child that is not reaped yet is a zombie: not running).
alive() {
  kill -0 "$server_pid" 2>/dev/null || return 1
  [ -r "/proc/$server_pid/stat" ] || return 0
  local state
  state="$(sed 's/^.*) //' "/proc/$server_pid/stat" | cut -d' ' -f1)"
  [ "$state" != Z ]
}

fail() {
  echo "FAIL: $*"
  if [ -f "$tmp/server.log" ]; then
    echo "--- server log (last 40 lines) ---"
    tail -n 40 "$tmp/server.log"
  fi
  exit 1
}

# An admin token, created on the data directory before the server starts.
"$binary" --data-dir "$tmp/data" --json token create --name docs --scope admin >"$tmp/token.json" \
  || fail "quarry token create: $(cat "$tmp/token.json")"
TOKEN="$(jq -er .secret "$tmp/token.json")" || fail "no secret in: $(cat "$tmp/token.json")"

"$binary" --data-dir "$tmp/data" serve --port 0 --port-file "$tmp/port" --require-token \
  >"$tmp/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 300); do
  [ -s "$tmp/port" ] && break
  alive || fail "the server exited before it wrote $tmp/port"
  sleep 0.1
done
[ -s "$tmp/port" ] || fail "the server wrote no port file within 30 s"
port="$(tr -d '[:space:]' <"$tmp/port")"
[[ "$port" =~ ^[0-9]+$ ]] || fail "port file holds '$port', not a port number"
QUARRY_URL="http://127.0.0.1:$port"
# The pump's examples deploy use cases with the CLI on the server's data directory.
QUARRY_HOME="$tmp/data"
PATH="$(cd "$(dirname "$binary")" && pwd):$PATH"
export QUARRY_URL TOKEN QUARRY_HOME PATH

# The server serves this very document at /openapi.json.
curl -sS --fail-with-body "$QUARRY_URL/api/v1/openapi.json" >"$tmp/served-openapi.json" \
  || fail "GET /api/v1/openapi.json: $(cat "$tmp/served-openapi.json")"
if ! diff <(jq -S . "$openapi") <(jq -S . "$tmp/served-openapi.json") >"$tmp/openapi.diff"; then
  head -n 40 "$tmp/openapi.diff"
  fail "GET /api/v1/openapi.json differs from docs/openapi.json (the binary embeds it at build time: rebuild)"
fi

# Split the ```sh blocks out of the guide, in order.
mkdir -p "$tmp/blocks" "$tmp/work"
awk -v dir="$tmp/blocks" '
  /^```sh[[:space:]]*$/ { n++; file = sprintf("%s/%03d.sh", dir, n); inblock = 1; next }
  inblock && /^```[[:space:]]*$/ { inblock = 0; close(file); next }
  inblock { print > file }
  END { if (inblock) { print "unterminated ```sh block" > "/dev/stderr"; exit 1 } }
' "$doc" || fail "cannot split $doc into blocks"

shopt -s nullglob
blocks=("$tmp"/blocks/*.sh)
[ "${#blocks[@]}" -gt 0 ] || fail "no \`\`\`sh blocks in $doc"

passed=0
for block in "${blocks[@]}"; do
  name="$(basename "$block" .sh)"
  if ! (cd "$tmp/work" && timeout 120 bash -euo pipefail "$block") >"$tmp/$name.out" 2>&1; then
    echo "--- block $name of $doc ---"
    cat "$block"
    echo "--- its output ---"
    cat "$tmp/$name.out"
    fail "block $name exited non-zero ($passed of ${#blocks[@]} blocks passed before it)"
  fi
  alive || fail "the server died during block $name"
  passed=$((passed + 1))
done

# A clean shutdown on SIGTERM.
kill -TERM "$server_pid"
for _ in $(seq 1 150); do
  alive || break
  sleep 0.1
done
if alive; then
  fail "the server did not exit within 15 s of SIGTERM"
fi
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" -eq 0 ] || fail "the server exited with status $status after SIGTERM"

echo "PASS: ${#blocks[@]} example blocks of $(basename "$doc") ran against quarry serve"
