#!/usr/bin/env bash
# What `make run` tells a new user to try works against the server it starts: its recipe (as
# `make -n run` prints it, from the KB it creates to `quarry serve`) runs against a scratch data
# directory, and every `curl` and `quarry` line it prints under "try:" must answer 200 (exit 0)
# with at least one hit. getting-started.md's note on the demo's KB names a path of that server.
# Release pass only: the recipe's KB uses the default model, which `make model` builds there.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$(realpath "${QUARRY_BINARY:-build/quarry}")
BUILD=$(realpath --relative-to=. "$(dirname "$BIN")")
tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The recipe from the KB set-up on (what comes before builds the binary and the model).
make -s -n run DATA="$tmp/data" BUILD="$BUILD" PORT="$port" | sed -n '/kb describe docs/,$p' > "$tmp/recipe"
grep -q ' serve --port ' "$tmp/recipe" || { cat "$tmp/recipe"; echo "make -n run shows no serve" >&2; exit 1; }
grep -v ' serve --port ' "$tmp/recipe" > "$tmp/setup.sh"
bash -e "$tmp/setup.sh" > "$tmp/setup.out" 2>&1 || { cat "$tmp/setup.out"; echo "make run's set-up failed" >&2; exit 1; }
grep -q ' 0 failed' "$tmp/setup.out" || { cat "$tmp/setup.out"; echo "make run's ingest reported failures" >&2; exit 1; }

serve=$(grep ' serve --port ' "$tmp/recipe")
eval "$serve" > "$tmp/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/kbs" && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log"; echo "the server exited" >&2; exit 1; }
  sleep 0.2
done

# The lines the recipe prints under "try:", as the user sees them.
sed -n 's/^echo "  \(.*\)"$/\1/p' "$tmp/recipe" | sed 's/\\"/"/g' > "$tmp/tries"
[ "$(grep -c . "$tmp/tries")" -ge 3 ] || { cat "$tmp/tries"; echo "make run suggests too little to try" >&2; exit 1; }
failed=0
while IFS= read -r line; do
  case "$line" in
    curl\ *)
      status=$(eval "$line -o $tmp/body -w '%{http_code}'") || status="curl failed"
      if [ "$status" != 200 ] || ! jq -e '((.hits // .matches) | length) > 0' "$tmp/body" >/dev/null; then
        echo "FAIL $line -> $status: $(head -c 400 "$tmp/body")"; failed=1
      else
        echo "ok   $line"
      fi ;;
    ./*)
      if ! eval "$line" > "$tmp/body" 2>&1 || ! jq -e '(.hits | length) > 0' "$tmp/body" >/dev/null; then
        echo "FAIL $line: $(head -c 400 "$tmp/body")"; failed=1
      else
        echo "ok   $line"
      fi ;;
    *) echo "FAIL make run suggests a line this test cannot run: $line"; failed=1 ;;
  esac
done < "$tmp/tries"

# getting-started.md sends a reader of the demo to the path of the demo's KB.
path=$(grep -o '`/api/v1/kbs/[a-z0-9_-]*/search`' docs/getting-started.md | tr -d '`' | head -1)
if [ -z "$path" ] || ! grep -q "127.0.0.1:$port$path " "$tmp/tries"; then
  echo "FAIL getting-started.md names '${path:-no path}' for the make run server, which serves:"
  cat "$tmp/tries"; failed=1
fi
exit $failed
