#!/usr/bin/env bash
# Grep-mode benchmark: Quarry's grep against ripgrep on the same Markdown files, side by side.
#
#   bench/grep_bench.sh [DIR]
#
# DIR holds the .md files to search. When DIR has no .md files (or is not given: then a temporary
# directory, removed at exit), the script first writes SciFact's corpus into it, one file per
# document with a front-matter block as Quarry stores it; a given DIR is kept for later runs.
#
# QUARRY_GREP_CMD is Quarry's side: a command line that greps DIR, with {pattern}, {flags} and
# {dir} substituted (flags is "-i" for the case-insensitive case, else empty), for example
#   QUARRY_GREP_CMD='build/quarry grep --kb scifact {flags} {pattern}'
# Without it, only ripgrep is measured. RG_THREADS (default 2) is passed to rg as -j.
#
# Prints hyperfine's table per pattern, then one line per pattern with both medians and the
# ratio quarry/rg, and a JSON line with the same figures. Needs hyperfine, rg and node.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
corpus="${SCIFACT_CORPUS:-$here/../../shared/datasets/scifact/corpus.jsonl}"
rg_threads="${RG_THREADS:-2}"
warmup="${WARMUP:-3}"
runs="${RUNS:-20}"

for tool in hyperfine rg; do
  command -v "$tool" >/dev/null || { echo "grep_bench: $tool is not installed" >&2; exit 2; }
done

dir="${1:-}"
own_dir=""
tmp="$(mktemp -d "${TMPDIR:-/tmp}/quarry-grep-bench-out-XXXXXX")"
cleanup() {
  rm -rf "$tmp"
  if [[ -n "$own_dir" ]]; then rm -rf "$own_dir"; fi
}
trap cleanup EXIT
if [[ -z "$dir" ]]; then
  dir="$(mktemp -d "${TMPDIR:-/tmp}/quarry-grep-bench-XXXXXX")"
  own_dir="$dir"
fi
mkdir -p "$dir"
if ! compgen -G "$dir/*.md" >/dev/null; then
  command -v node >/dev/null || { echo "grep_bench: node is needed to write the corpus" >&2; exit 2; }
  [[ -r "$corpus" ]] || { echo "grep_bench: no corpus at $corpus (set SCIFACT_CORPUS)" >&2; exit 2; }
  # One Markdown file per document, laid out like Quarry's docs/<id>.md.
  node -e '
    const fs = require("fs"), path = require("path"), readline = require("readline");
    const [corpus, out] = process.argv.slice(1);
    const rl = readline.createInterface({input: fs.createReadStream(corpus)});
    let n = 0;
    rl.on("line", (line) => {
      if (!line.trim()) return;
      const d = JSON.parse(line);
      const body = `---\nid: ${JSON.stringify(String(d._id))}\n---\n\n# ${d.title}\n\n${d.text}\n`;
      fs.writeFileSync(path.join(out, `${d._id}.md`), body);
      n++;
    });
    rl.on("close", () => console.error(`grep_bench: wrote ${n} files to ${out}`));
  ' "$corpus" "$dir"
fi

# name|flags|pattern: a literal, a case-insensitive word, a regex with a class and alternation.
cases=(
  "literal||protein"
  "ignore_case|-i|CANCER"
  "regex||cell[s]? (death|growth)"
)

json="["
sep=""
summary=()

for c in "${cases[@]}"; do
  IFS='|' read -r name flags pattern <<<"$c"
  qpat="$(printf %q "$pattern")"
  cmds=("rg -n -j$rg_threads $flags -e $qpat $(printf %q "$dir")")
  if [[ -n "${QUARRY_GREP_CMD:-}" ]]; then
    q="${QUARRY_GREP_CMD//\{pattern\}/$qpat}"
    q="${q//\{flags\}/$flags}"
    q="${q//\{dir\}/$(printf %q "$dir")}"
    cmds+=("$q")
  fi
  echo "== $name: $pattern"
  hyperfine --warmup "$warmup" --runs "$runs" --style basic \
    --export-json "$tmp/$name.json" "${cmds[@]}"
  # Medians in ms from hyperfine's JSON (node is the JSON reader available everywhere we run).
  read -r rg_ms q_ms < <(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1])).results;
    const med = (x) => (x ? (x.median * 1000).toFixed(2) : "null");
    console.log(med(r[0]), med(r[1]));
  ' "$tmp/$name.json")
  ratio="null"
  [[ "$q_ms" != "null" ]] && ratio="$(node -e 'console.log((process.argv[2] / process.argv[1]).toFixed(3))' "$rg_ms" "$q_ms")"
  summary+=("$(printf '%-12s rg %8s ms   quarry %8s ms   ratio %s' "$name" "$rg_ms" "$q_ms" "$ratio")")
  json+="$sep{\"case\":\"$name\",\"rg_median_ms\":$rg_ms,\"quarry_median_ms\":$q_ms,\"ratio\":$ratio}"
  sep=","
done
json+="]"

echo
echo "median wall time, rg -j$rg_threads vs Quarry (target: ratio <= 1.2)"
printf '%s\n' "${summary[@]}"
echo "$json"
