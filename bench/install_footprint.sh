#!/usr/bin/env bash
# Install footprint (issue 25): the .deb's size, its installed size, and the time from
# `dpkg-deb -x` to the first answered search (unpack, kb create with the packaged model, ingest
# one document with --wait, one hybrid search), median of RUNS cold runs (fresh root and data
# each time; the page cache stays warm, as after a download). Beside it, in the same run, the
# installed size of the Chroma core that the store tests use (tests/js's pinned
# chromadb-js-bindings), the nearest peer packaged on this machine.
# Usage: bench/install_footprint.sh [build/quarry_X_amd64.deb] [RUNS=5]   (after `make package`)
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(ls build/quarry_*_amd64.deb | head -1)}
runs=${2:-5}
[ -f "$deb" ] || { echo "install_footprint.sh: no .deb (run make package)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/quarry-footprint.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '# Tides\n\nThe moon pulls the sea up and down twice a day.\n' >"$work/tides.md"

now() { date +%s.%N; }
times=()
for i in $(seq 1 "$runs"); do
  rm -rf "$work/root" "$work/data"
  t0=$(now)
  dpkg-deb -x "$deb" "$work/root"
  q=("$work/root/usr/bin/quarry" --data-dir "$work/data")
  env -i PATH=/usr/bin:/bin "${q[@]}" kb create notes --embedder static:glove-100d >/dev/null
  env -i PATH=/usr/bin:/bin "${q[@]}" ingest "$work/tides.md" --kb notes --wait >/dev/null
  env -i PATH=/usr/bin:/bin "${q[@]}" --json search "ocean" --kb notes --mode hybrid >"$work/r.json"
  t1=$(now)
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["hits"] and r["mode"]=="hybrid"' "$work/r.json"
  times+=("$(python3 -c "print(round(($t1 - $t0) * 1000))")")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
deb_kb=$(( $(stat -c %s "$deb") / 1024 ))
inst_kb=$(du -sk "$work/root" | cut -f1)
bin_kb=$(du -sk "$work/root/usr/bin/quarry" | cut -f1)
model_kb=$(du -sk "$work/root/usr/share/quarry/models" | cut -f1)
chroma=tests/js/node_modules/chroma-core-bindings
chroma_kb=$( [ -d "$chroma" ] && du -skL "$chroma" | cut -f1 || echo "n/a")
echo "| | size |"
echo "|---|---|"
echo "| $(basename "$deb") | $((deb_kb / 1024)) MiB ($deb_kb KiB) |"
echo "| installed (unpacked root) | $((inst_kb / 1024)) MiB: binary $((bin_kb / 1024)) MiB, model $((model_kb / 1024)) MiB |"
echo "| peer: Chroma core (npm chromadb-js-bindings, installed, no model) | $([ "$chroma_kb" = n/a ] && echo n/a || echo "$((chroma_kb / 1024)) MiB") |"
echo
echo "dpkg-deb -x to first answered hybrid search, $runs runs: median ${median} ms (each: ${times[*]})"
