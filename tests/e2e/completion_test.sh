#!/usr/bin/env bash
# ctest cli.completion: `quarry completion bash|zsh|fish` loaded into the real shells (bash, and
# zsh and fish from scripts/setup) completes commands, sub-commands and flags from the program's
# own tree. bash and fish are asked for completions of a typed line; zsh is checked to register
# the completion (driving zsh's completion needs a terminal).
# (No `| grep -q` below: with pipefail, a producer cut off by grep quitting early fails the line.)
set -euo pipefail
q="${QUARRY_BINARY:?}"
fail() { echo "cli.completion: $*" >&2; exit 1; }

bash_complete() {  # the completions bash offers for the words given (the last one being typed)
  bash -c 'source <("$0" completion bash); COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ));
           _quarry; printf "%s\n" "${COMPREPLY[@]}"' "$q" "$@"
}
[[ "$(bash_complete quarry kb cr)" == "create" ]] || fail "bash: 'quarry kb cr' does not give create"
[[ "$(bash_complete quarry grep --wo)" == "--word-regexp" ]] || fail "bash: grep --wo"
[[ "$(bash_complete quarry --json kb set notes --dr)" == "--dry-run" ]] || fail "bash: kb set --dr"
bash_complete quarry "" | grep -x completion >/dev/null || fail "bash: the top level lacks completion"
bash_complete quarry search x --da | grep -x -- --data-dir >/dev/null || fail "bash: a global flag after the command"

command -v fish >/dev/null || fail "fish is missing: run scripts/setup"
fish_complete() { "$q" completion fish | fish -c "source; complete -C '$1'"; }
fish_complete "quarry kb cr" | grep '^create' >/dev/null || fail "fish: 'quarry kb cr' does not give create"
fish_complete "quarry grep --wo" | grep '^--word-regexp' >/dev/null || fail "fish: grep --wo"
fish_complete "quarry " | grep '^ingest' >/dev/null || fail "fish: the top level lacks ingest"

command -v zsh >/dev/null || fail "zsh is missing: run scripts/setup"
"$q" completion zsh | zsh -n || fail "zsh: the script does not parse"
home=$(mktemp -d)  # compinit writes its dump file there
trap 'rm -rf "$home"' EXIT
registered=$(HOME="$home" zsh -f -c 'source <("$0" completion zsh); print -r -- ${_comps[quarry]}' "$q")
[[ "$registered" == *"-F _quarry"* ]] || fail "zsh: quarry's completion is not registered ($registered)"
echo "cli.completion: ok"
