#!/usr/bin/env bash
# ctest install.consumer: `cmake --install` of this build into a scratch prefix, then
# examples/embed_engine configured with find_package(quarry) against that prefix alone, built
# and run, as another project would (docs/install.md, "Linking the library").
set -euo pipefail
: "${QUARRY_BUILD_DIR:?}" "${QUARRY_SOURCE_DIR:?}" "${QUARRY_CXX:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/quarry-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake --install "$QUARRY_BUILD_DIR" --prefix "$work/prefix" --component dev --strip >"$work/install.log"
for f in include/quarry/engine.h include/quarry/vector_store.h lib/libquarry_engine.a \
         lib/cmake/quarry/quarryConfig.cmake lib/cmake/quarry/quarryConfigVersion.cmake \
         lib/cmake/quarry/quarryTargets.cmake; do
  [[ -f "$work/prefix/$f" ]] || { echo "install.consumer: $f was not installed" >&2; exit 1; }
done
# Only the public headers: src/ stays in the source tree.
if find "$work/prefix/include" -type f ! -path '*/include/quarry/*' | grep -q .; then
  echo "install.consumer: headers outside include/quarry were installed" >&2; exit 1
fi
# The archives keep their symbols but not their debug info (`--strip`).
if readelf -S "$work/prefix/lib/libquarry_core.a" 2>/dev/null | grep -q '\.debug_info'; then
  echo "install.consumer: libquarry_core.a still carries debug info after --strip" >&2; exit 1
fi

cmake -S "$QUARRY_SOURCE_DIR/examples/embed_engine" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$QUARRY_CXX" -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" \
  || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" -j 2 >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
"$work/build/embed_engine" "$work/data" >"$work/out.txt"
cat "$work/out.txt"
grep -qx 'mode: hybrid' "$work/out.txt" || { echo "install.consumer: not answered in hybrid" >&2; exit 1; }
sed -n 2p "$work/out.txt" | grep -q ' tides\.md ' \
  || { echo "install.consumer: the tides document is not the first hit" >&2; exit 1; }
echo "install.consumer: ok"
