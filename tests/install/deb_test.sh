#!/usr/bin/env bash
# ctest install.deb: CPack builds the .deb packages from this build; the runtime package is
# unpacked into a scratch root with `dpkg-deb -x` and used from there, with no source tree and no
# build tree in reach (a clean environment, another working directory): kb create, ingest,
# hybrid search with the packaged model, and serve. docs/install.md describes the same steps.
set -euo pipefail
: "${QUARRY_BUILD_DIR:?}" "${QUARRY_SOURCE_DIR:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/quarry-deb.XXXXXX")
server=""
cleanup() { [[ -n "$server" ]] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "install.deb: $*" >&2; exit 1; }

cpack --config "$QUARRY_BUILD_DIR/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/pkg/quarry_*.deb)
dev=$(ls "$work"/pkg/quarry-dev_*.deb)
echo "packages: $(basename "$deb") $(du -k "$deb" | cut -f1) KiB, $(basename "$dev") $(du -k "$dev" | cut -f1) KiB"

# The runtime package depends on the shared libraries the binary links, found by
# dpkg-shlibdeps (a few of them by name), and on no -dev package.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libstdc++6 libsqlite3-0 libpoppler-cpp0v5 libcurl4 libsodium23 libpq5 libopenblas; do
  [[ "$depends" == *"$lib"* ]] || fail "Depends lacks $lib"
done
[[ "$depends" != *-dev* ]] || fail "the runtime package depends on a -dev package"
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/quarry ./usr/share/quarry/models/glove-100d/model.safetensors \
         ./usr/share/quarry/models/glove-100d/tokenizer.json ./usr/share/man/man1/quarry.1 \
         ./usr/share/doc/quarry/README.md ./usr/share/doc/quarry/getting-started.md; do
  grep -q " $f\$" <<<"$contents" || grep -q " $f.gz\$" <<<"$contents" || fail "$deb lacks $f"
done
dev_contents=$(dpkg-deb -c "$dev")  # whole, not piped into grep -q: pipefail would see a SIGPIPE
grep -q ' ./usr/lib/cmake/quarry/quarryConfig.cmake$' <<<"$dev_contents" || fail "$dev lacks the CMake config"

dpkg-deb -x "$deb" "$work/root"
# Nothing of the source or build tree is compiled into the packaged binary (the model is found
# relative to the binary; the debug info that names the folders is stripped).
for dir in "$QUARRY_SOURCE_DIR" "$QUARRY_BUILD_DIR"; do
  if grep -qaF "$dir" "$work/root/usr/bin/quarry"; then fail "the packaged binary names $dir"; fi
done
mkdir -p "$work/home" "$work/docs" "$work/cwd"
cd "$work/cwd"
q() { env -i HOME="$work/home" PATH=/usr/bin:/bin "$work/root/usr/bin/quarry" --data-dir "$work/data" "$@"; }

q --version
q kb create notes --embedder static:glove-100d
printf '# Tides\n\nThe moon and the sun pull on the oceans, which rise and fall twice a day.\n' >"$work/docs/tides.md"
printf '# Bread\n\nKnead the dough, let it rise in a warm place, then bake it.\n' >"$work/docs/bread.md"
q ingest "$work/docs" --kb notes --wait
q --json search "why does the sea go up and down" --kb notes --mode hybrid --top-k 2 >"$work/hybrid.json"
python3 - "$work/hybrid.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "hybrid", r
assert not r.get("degraded"), r.get("degraded")
assert r["hits"] and r["hits"][0]["filename"] == "tides.md", r["hits"]
PY

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
q serve --port "$port" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; fail "serve exited"; }
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/api/v1/kbs/notes/search" \
  -d '{"query": "baking bread", "mode": "hybrid", "top_k": 1}' >"$work/served.json" \
  || fail "the served search failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["hits"][0]["filename"]=="bread.md", r' "$work/served.json"
curl -sf "http://127.0.0.1:$port/" | grep -qi '<html' || fail "the web page is not served"
kill "$server"; wait "$server" 2>/dev/null || true; server=""

# The model came from the package, found relative to the binary: moved away, the search names
# the package's own folder as where it looked.
mv "$work/root/usr/share/quarry/models" "$work/root/usr/share/quarry/models.away"
q --json search "tides" --kb notes --mode vector >"$work/missing.json" 2>&1 && fail "a vector search without the model answered"
grep -q "$work/root/usr/share/quarry/models/glove-100d" "$work/missing.json" \
  || { cat "$work/missing.json" >&2; fail "the missing-model message does not name the package's folder"; }
echo "install.deb: ok"
