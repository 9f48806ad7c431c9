#!/bin/sh
# docs_cli.sh ROOFKIT MAN COMPLETION - what the build generates from roofkit's help, and
# roofkit --version. Case map:
#   D1 the man page is what `roofkit --help-man` writes now (generated, not a stale copy),
#      renders with groff -man without a warning (a roff sanity check where groff is missing),
#      and names every command of `roofkit --help`
#   D2 the bash completion is valid bash, registers _roofkit for roofkit, and completes
#      `roofkit li` to list, `roofkit list ` to the subjects, `--format ` to text csv json
#      (report's to html md csv), `--device ` to all, and `help mo` to model
#   D3 `roofkit --version` with no GPU exits 0 and names roofkit, the CUDA runtime, the CUDA
#      driver, CUPTI and SQLite
set -u
roofkit=$1
man=$2
comp=$3
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# D1
[ -s "$man" ] || bad "D1: no man page at $man"
"$roofkit" --help-man | cmp -s - "$man" || bad "D1: $man differs from 'roofkit --help-man'"
commands=$("$roofkit" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ -n "$commands" ] || bad "D1: no commands in 'roofkit --help'"
if command -v groff >/dev/null 2>&1; then
    # -P-cbou: plain text, no overstrike for bold or underline
    text=$(groff -man -Tutf8 -ww -P-cbou "$man" 2>"$man.warnings") || bad "D1: groff failed"
    [ ! -s "$man.warnings" ] || bad "D1: groff warns: $(head -3 "$man.warnings")"
else
    text=$(cat "$man")
    head -5 "$man" | grep -q '^\.TH ROOFKIT 1' || bad "D1: no .TH line"
    for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS"; do
        grep -q "^\.SH $s" "$man" || bad "D1: no section $s"
    done
    [ "$(grep -c '^\.nf' "$man")" = "$(grep -c '^\.fi' "$man")" ] || bad "D1: unbalanced .nf/.fi"
fi
for c in $commands; do
    printf '%s\n' "$text" | grep -q "^   $c\$\|^   $c " || bad "D1: the man page has no section for '$c'"
done

# D2
bash -n "$comp" || bad "D2: the completion is not valid bash"
complete_line() {
    bash -c '. "$1"; read -ra COMP_WORDS <<<"$2"; case $2 in *" ") COMP_WORDS+=("") ;; esac
             COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _roofkit; echo "${COMPREPLY[*]}"' _ "$comp" "$1"
}
expect() {
    got=$(complete_line "$1")
    [ "$got" = "$2" ] || bad "D2: '$1' completes to '$got', expected '$2'"
}
bash -c ". '$comp'; complete -p roofkit" | grep -q -- "-F _roofkit roofkit" ||
    bad "D2: complete -p roofkit does not name _roofkit"
expect "roofkit li" "list"
expect "roofkit list " "kernels suites captures devices gpus metrics"
expect "roofkit --db x.db list de" "devices"
expect "roofkit list devices --format " "text csv json"
expect "roofkit run --format j" "json"
expect "roofkit report --format " "html md csv"
expect "roofkit --device " "all"
expect "roofkit probe --device a" "all"
expect "roofkit help mo" "model"
expect "roofkit tune " "tsm2 ism2"
expect "roofkit model --fo" "--format"

# D3
out=$(CUDA_VISIBLE_DEVICES= "$roofkit" --version) || bad "D3: --version exited $?"
for name in "roofkit " "CUDA runtime" "CUDA driver" "CUPTI" "SQLite"; do
    printf '%s\n' "$out" | grep -q "$name" || bad "D3: --version does not name $name: $out"
done

[ "$fail" = 0 ] && echo "docs_cli: D1-D3 passed"
exit "$fail"
