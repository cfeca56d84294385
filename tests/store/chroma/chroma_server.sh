#!/usr/bin/env bash
# A real Chroma server on 127.0.0.1 for the chroma store's tests (ctest fixture chroma_server).
# It runs Chroma's Rust core through its Node bindings, pinned in tests/js/package.json
# (chromadb-js-bindings-linux-x64-gnu 1.0.5, the newest that runs on Debian 12's glibc) and
# installed by scripts/setup. Started fresh, stopped by PID.
#   chroma_server.sh start PORT   waits for the heartbeat (60 s at most)
#   chroma_server.sh stop PORT
set -euo pipefail
cmd=${1:?start|stop}
port=${2:?port}
here=$(cd "$(dirname "$0")" && pwd)
modules=$(cd "$here/../../js" && pwd)/node_modules
run=${TMPDIR:-/tmp}/quarry-chroma-test-$port
pidf=$run/pid

stop() {
  [ -f "$pidf" ] || return 0
  pid=$(cat "$pidf")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$run"
}

case "$cmd" in
  stop) stop ;;
  start)
    [ -f "$modules/chroma-core-bindings/package.json" ] ||
      { echo "chroma_server.sh: Chroma bindings missing in $modules: run scripts/setup" >&2; exit 1; }
    stop
    mkdir -p "$run/data"
    NODE_PATH=$modules nohup node -e \
      "require('chroma-core-bindings').cli(['chroma', 'run', '--path', process.argv[1], '--host', '127.0.0.1', '--port', process.argv[2]])" \
      "$run/data" "$port" </dev/null >"$run/log" 2>&1 &
    echo $! >"$pidf"
    for _ in $(seq 600); do
      if curl -fsS "http://127.0.0.1:$port/api/v2/heartbeat" >/dev/null 2>&1; then
        echo "chroma_server.sh: ready on 127.0.0.1:$port (pid $(cat "$pidf"))"
        exit 0
      fi
      kill -0 "$(cat "$pidf")" 2>/dev/null || { cat "$run/log" >&2; echo "chroma_server.sh: server exited" >&2; exit 1; }
      sleep 0.1
    done
    cat "$run/log" >&2
    stop
    echo "chroma_server.sh: not ready within 60 s" >&2
    exit 1 ;;
  *) echo "usage: chroma_server.sh start|stop PORT" >&2; exit 2 ;;
esac
