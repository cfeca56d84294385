#!/usr/bin/env bash
# clients/python installs offline into a fresh virtual environment and imports from it.
#
# Runs, in a copy of the source under a temporary directory (setuptools writes build/ and
# *.egg-info next to the sources, and the checkout must stay clean):
#   python3 -m venv --system-site-packages V
#   V/bin/pip install --no-build-isolation --no-index ./clients/python
# then imports quarry_client with V/bin/python from another directory.
#
# The interpreter is $PYTHON, else the first python3 whose setuptools can build a wheel
# (setuptools >= 61 plus the wheel package; Debian 12: python3-setuptools python3-wheel).
set -euo pipefail

src="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

can_build='import setuptools, sys; from setuptools import __version__ as v
major = int(v.split(".")[0])
try:
    import wheel  # noqa: F401
except ImportError:
    sys.exit(major < 70)  # setuptools 70.1 builds wheels by itself
sys.exit(major < 61)'
python=""
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "$can_build" 2>/dev/null; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "FAIL: no python3 with setuptools >= 61 and wheel to build the package offline" >&2
  exit 1
fi
echo "using $python ($("$python" --version 2>&1))"

mkdir -p "$tmp/src/clients"
cp -r "$src/clients/python" "$tmp/src/clients/python"
rm -rf "$tmp/src/clients/python/build" "$tmp/src/clients/python"/*.egg-info
find "$tmp/src/clients/python" -name __pycache__ -prune -exec rm -rf {} +

timeout 120 "$python" -m venv --system-site-packages "$tmp/V"
(cd "$tmp/src" && timeout 300 "$tmp/V/bin/pip" install --quiet --no-build-isolation --no-index \
  ./clients/python)

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
timeout 60 "$tmp/V/bin/python" - "$tmp/V" <<'PY'
import os, sys
import quarry_client
venv = os.path.realpath(sys.argv[1])
where = os.path.realpath(quarry_client.__file__)
assert where.startswith(venv + os.sep), "imported from %s, not the venv" % where
client = quarry_client.Client("http://127.0.0.1:9")
assert callable(client.search) and issubclass(quarry_client.NotFound, quarry_client.QuarryError)
print("ok: quarry_client %s from %s" % (quarry_client.__version__, where))
PY
