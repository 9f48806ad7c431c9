#!/bin/bash
# metric-cost.sh BUILD OUT - what each raw metric of the default set costs under `roofkit
# profile` on gpu_prog100 (100 launches), alone and in its pass group: wall time and the time
# inside launch calls. Diagnostic for docs/perf-notes.md ("collect"), H100.
set -u
B=$(cd "$1" && pwd); O=$2; mkdir -p "$O"
HERE=$(cd "$(dirname "$0")/.." && pwd)
R=$B/cli/roofkit; P=$B/tests/collect/collect_prog100; DB=$O/cost.db
RAW=$(python3 "$HERE/default_raw.py" " ")
one() { # LABEL METRICS [ENV...]
    local label=$1 m=$2; shift 2
    local t0=$(date +%s.%N)
    env "$@" "$R" --db "$DB" profile --replay kernel --metrics "$m" -- "$P" >/dev/null 2>&1
    local t1=$(date +%s.%N)
    local note=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select note from capture order by id desc limit 1').fetchone()[0])" "$DB")
    printf '%-70s wall %6.2f s; %s\n' "$label" "$(python3 -c "print($t1 - $t0)")" "$(echo "$note" | grep -o 'time: [0-9.]* s in launch calls')"
}
one "none (timing)" none
hw=""; sass=""
for m in $RAW; do
    one "$m" "$m"
    case $m in *sass*) sass="$sass,$m";; *) hw="$hw,$m";; esac
done
one "all non-SASS metrics together" "${hw#,}"
one "all SASS metrics together" "${sass#,}"
one "all non-SASS, no Activity" "${hw#,}" ROOFKIT_NO_ACTIVITY=1
