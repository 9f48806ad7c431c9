#!/bin/bash
# record-grids.sh BUILD OUT - records examples/h100-grids.sql.xz's database on a GPU machine
# (README.md here): the ceilings, the suites tsm2-grid and ism2-grid through the entry point
# tsm2 against cuBLAS, and the 132 exhaustive sweeps that judge the entry point's choice, into
# OUT/grids.db, with a log a step, and the suites ism2-odd and tsm2-odd (m not a multiple of 4)
# into OUT/odd.db. On an H100 it takes about 390 s: probe 12 s, tsm2-grid 34 s, ism2-grid 59 s
# (each with the floor, kernel move, beside the entry point), the sweeps about 240 s, the odd
# suites with their probe about 45 s.
# Predictions are added afterwards on any machine (`roofkit --db OUT/grids.db model`), then
# `make-sql.sh OUT/grids.db x.sql` and `xz -9` give the file kept in git, which
# tests/examples/check_grids.py checks.
# One build and one GPU for the whole recording: `roofkit tune` and the model need the compute
# ceilings of the GPU that ran the measurements, so recordings from two GPUs do not combine.
set -u
B=$(cd "$1" && pwd)
OUT=$2
R=$B/cli/roofkit
DB=$OUT/grids.db
mkdir -p "$OUT"
rm -f "$DB" "$DB-wal" "$DB-shm" # a second recording into OUT would sit beside the first
status=0
t_start=$(date +%s)

step() { # step NAME COMMAND... : runs it into OUT/NAME.log, prints its wall time and exit code
    local name=$1 t0 rc
    shift
    t0=$(date +%s)
    "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    printf '== %s: rc=%d in %d s\n' "$name" "$rc" $(($(date +%s) - t0))
    tail -n 2 "$OUT/$name.log"
    [ "$rc" = 0 ] || status=1
}

nvidia-smi -L
step probe "$R" --db "$DB" probe --only bandwidth,latency,flops,launch
step tsm2-grid "$R" --db "$DB" run --suite tsm2-grid --energy off --metrics none
step ism2-grid "$R" --db "$DB" run --suite ism2-grid --energy off --metrics none
# The sweeps: TSM2 at every m of the grid and 14 of its n; ISM2 at every m and 8 (n, k).
: >"$OUT/tune.log"
for p in fp32 fp64; do
    for m in 10240 20480 40960; do
        for n in 1 2 3 5 8 12 13 16 17 20 24 25 28 32; do
            echo "## tsm2 $p $m $n" >>"$OUT/tune.log"
            "$R" --db "$DB" tune tsm2 --exhaustive --m $m --n $n --k $m --precision $p --reps 5 \
                --top 2 >>"$OUT/tune.log" 2>&1 || status=1
        done
    done
    for m in 100000 1000000 10000000; do
        for nk in 1:1 3:12 12:3 32:32 24:32 32:24 16:16 6:8; do
            echo "## ism2 $p $m $nk" >>"$OUT/tune.log"
            "$R" --db "$DB" tune ism2 --exhaustive --m $m --n "${nk%:*}" --k "${nk#*:}" \
                --precision $p --reps 5 --top 2 >>"$OUT/tune.log" 2>&1 || status=1
        done
    done
done
printf '== sweeps: %d of 132 in the log, %d s since the start\n' "$(grep -c '^## ' "$OUT/tune.log")" \
    $(($(date +%s) - t_start))
# The suites ism2-odd and tsm2-odd (m not a multiple of 4) into a database of their own, with
# its own probe: examples/h100-odd.sql.xz (about 45 s)
ODD=$OUT/odd.db
rm -f "$ODD" "$ODD-wal" "$ODD-shm"
step odd-probe "$R" --db "$ODD" probe --only bandwidth,latency,flops,launch
step ism2-odd "$R" --db "$ODD" run --suite ism2-odd --energy off --metrics none
step tsm2-odd "$R" --db "$ODD" run --suite tsm2-odd --energy off --metrics none
# one file each to carry back: the WAL folded in
for f in "$DB" "$ODD"; do
    python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$f"
done
exit $status
