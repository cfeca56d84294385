#!/usr/bin/env bash
# Servers for the pgvector store's tests (ctest fixtures pgvector_server and pg15_server).
#   pg_server.sh start PORT       both servers below: PGlite on PORT, PostgreSQL 15 on PORT + 1
#   pg_server.sh stop PORT        stops both
#   pg_server.sh start-pglite PORT  a real pgvector 0.8: PGlite (PostgreSQL in WASM) with the
#                                 pgvector extension, served over the wire protocol by
#                                 @electric-sql/pglite-socket (pinned in tests/js/package.json,
#                                 installed by scripts/setup). In-memory, one connection at a
#                                 time, one shared backend session, no TLS, no COPY FROM STDIN.
#   pg_server.sh start-pg15 PORT  Debian's PostgreSQL 15 (package postgresql, no pgvector) in a
#                                 throw-away cluster: the missing-extension path. initdb refuses
#                                 to run as root, so as root the cluster belongs to the
#                                 `postgres` user (or `nobody`).
#   pg_server.sh stop-pglite|stop-pg15 PORT
# Both listen on 127.0.0.1 only; user postgres, database postgres, no password. Started fresh,
# stopped by PID (PGlite) or pg_ctl (PostgreSQL 15).
set -euo pipefail
cmd=${1:?start|stop|start-pglite|stop-pglite|start-pg15|stop-pg15}
port=${2:?port}
case "$cmd" in
  start) bash "$0" start-pglite "$port" && bash "$0" start-pg15 $((port + 1)) ||
           { bash "$0" stop "$port"; exit 1; }
         exit 0 ;;
  stop) bash "$0" stop-pglite "$port"; bash "$0" stop-pg15 $((port + 1)); exit 0 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
js=$(cd "$here/../../js" && pwd)
run=${TMPDIR:-/tmp}/quarry-pg-test-$port

ready() { pg_isready -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -t 2; }

stop_pglite() {
  [ -f "$run/pid" ] || { rm -rf "$run"; return 0; }
  pid=$(cat "$run/pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$run"
}

pg15_bin() {
  for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  return 1
}

as_owner() {  # runs a PostgreSQL tool as the cluster's owner
  if [ "$(id -u)" = 0 ]; then
    local u=postgres
    id "$u" >/dev/null 2>&1 || u=nobody
    runuser -u "$u" -- "$@"
  else
    "$@"
  fi
}

stop_pg15() {
  if [ -f "$run/data/postmaster.pid" ] && bin=$(pg15_bin); then
    as_owner "$bin/pg_ctl" -D "$run/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$run"
}

case "$cmd" in
  stop-pglite) stop_pglite ;;
  stop-pg15) stop_pg15 ;;
  start-pglite)
    server=$js/node_modules/@electric-sql/pglite-socket/dist/scripts/server.js
    [ -f "$server" ] && [ -d "$js/node_modules/@electric-sql/pglite-pgvector" ] ||
      { echo "pg_server.sh: PGlite (+ pgvector, socket) missing in $js/node_modules: run scripts/setup" >&2; exit 1; }
    command -v pg_isready >/dev/null ||
      { echo "pg_server.sh: pg_isready missing (package postgresql-client): run scripts/setup" >&2; exit 1; }
    stop_pglite
    mkdir -p "$run"
    ready && { echo "pg_server.sh: something else already answers on 127.0.0.1:$port" >&2; exit 1; }
    cd "$js"  # the extension is imported relative to the project's node_modules
    NODE_PATH=$js/node_modules nohup node "$server" --db=memory:// --host=127.0.0.1 \
      --port="$port" --max-connections=1 --extensions=@electric-sql/pglite-pgvector:vector \
      </dev/null >"$run/log" 2>&1 &
    echo $! >"$run/pid"
    for _ in $(seq 900); do
      if grep -q listening "$run/log" 2>/dev/null && ready; then
        echo "pg_server.sh: PGlite + pgvector ready on 127.0.0.1:$port (pid $(cat "$run/pid"))"
        exit 0
      fi
      kill -0 "$(cat "$run/pid")" 2>/dev/null || { cat "$run/log" >&2; echo "pg_server.sh: PGlite exited" >&2; exit 1; }
      sleep 0.1
    done
    cat "$run/log" >&2
    stop_pglite
    echo "pg_server.sh: PGlite not ready within 90 s" >&2
    exit 1 ;;
  start-pg15)
    bin=$(pg15_bin) ||
      { echo "pg_server.sh: PostgreSQL server binaries missing (package postgresql): run scripts/setup" >&2; exit 1; }
    stop_pg15
    mkdir -p "$run"
    [ "$(id -u)" = 0 ] && chown "$(id postgres >/dev/null 2>&1 && echo postgres || echo nobody)" "$run"
    as_owner "$bin/initdb" -D "$run/data" -U postgres --auth=trust -E UTF8 --no-sync >"$run/initdb.log" 2>&1 ||
      { cat "$run/initdb.log" >&2; echo "pg_server.sh: initdb failed" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$run/data" -l "$run/data/log" -w -t 60 \
      -o "-p $port -k $run -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null ||
      { cat "$run/data/log" >&2; echo "pg_server.sh: PostgreSQL 15 did not start" >&2; exit 1; }
    echo "pg_server.sh: PostgreSQL ($bin) ready on 127.0.0.1:$port" ;;
  *) echo "usage: pg_server.sh start|stop|start-pglite|stop-pglite|start-pg15|stop-pg15 PORT" >&2; exit 2 ;;
esac
