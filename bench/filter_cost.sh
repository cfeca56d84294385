#!/usr/bin/env bash
# What a metadata filter costs as it grows (issue 23, docs/benchmarks.md "Filter cost"): 200
# documents, each with its own metadata {"id": i, "k0": 49, ..., "k299": 49}, then a keyword
# search under {"$and": [N x {"kI": {"$in": [0..49]}}]} for N = 100, 200, 300 (every clause
# matches). Prints the search's own reported time and the process's wall and user time.
# Usage: bench/filter_cost.sh QUARRY_BIN [QUARRY_BIN ...]
set -euo pipefail
for Q in "$@"; do
  D=$(mktemp -d)
  mkdir -p "$D/docs"
  "$Q" --data-dir "$D/data" kb create k > /dev/null
  for i in $(seq 1 200); do
    printf '# Doc %s\ninstaller error number %s appears here\n' "$i" "$i" > "$D/docs/d$i.md"
    md=$(python3 -c "import json,sys; d={'k%d'%j: 49 for j in range(300)}; d['id']=int(sys.argv[1]); print(json.dumps(d))" "$i")
    "$Q" --data-dir "$D/data" ingest "$D/docs/d$i.md" --kb k --metadata "$md" > /dev/null
  done
  echo "== $Q"
  for n in 100 200 300; do
    python3 -c "import json,sys; n=int(sys.argv[1]); print(json.dumps({'\$and': [{'k%d'%i: {'\$in': list(range(50))}} for i in range(n)]}))" "$n" > "$D/f$n.json"
    /usr/bin/time -f "$n clauses: %e s wall, %U s user" "$Q" --data-dir "$D/data" search installer \
      --kb k --mode keyword --filter "@$D/f$n.json" > "$D/out" 2> "$D/err"
    echo "$(tail -1 "$D/err")   [$(tail -1 "$D/out")]"
  done
  rm -rf "$D"
done
