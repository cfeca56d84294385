#!/usr/bin/env bash
# ctest docs.install_examples: every ```sh block of docs/install.md, in order, each in its own
# `bash -euo pipefail` from the source tree's root with HOME a scratch folder (so ~/.local,
# ~/quarry-root and the rest land there). The page's commands name build/, so ctest registers
# this only for the build in build/. A block that exits non-zero fails the test, which prints the
# block and its output. ```text blocks are shown, not run (they change the machine).
set -euo pipefail
: "${QUARRY_SOURCE_DIR:?}"
doc="$QUARRY_SOURCE_DIR/docs/install.md"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/quarry-install-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/blocks"

python3 - "$doc" "$tmp/blocks" <<'PY'
import re, sys
doc, out = sys.argv[1], sys.argv[2]
n = 0
for m in re.finditer(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```\s*$", open(doc).read(), re.S | re.M):
    if m.group(1) in ("sh", "bash", "shell"):
        n += 1
        open("%s/%03d.sh" % (out, n), "w").write(m.group(2))
if n == 0:
    sys.exit("no sh blocks in " + doc)
print("%d sh blocks" % n)
PY

cd "$QUARRY_SOURCE_DIR"
for block in "$tmp"/blocks/*.sh; do
  if ! HOME="$tmp/home" timeout 600 bash -euo pipefail "$block" >"$tmp/out" 2>&1; then
    echo "--- block $(basename "$block") ---"; cat "$block"
    echo "--- output ---"; tail -n 60 "$tmp/out"
    echo "FAIL: block $(basename "$block") of docs/install.md exited non-zero"
    exit 1
  fi
  echo "ok $(basename "$block")"; tail -n 5 "$tmp/out" | sed 's/^/    /'
done
echo "PASS: docs/install.md"
