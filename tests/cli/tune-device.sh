#!/bin/sh
# tune-device.sh BUILD OUT - tune's regret table on the GPU machine (an H100): `roofkit
# probe` into a fresh database OUT/tune.db, then `roofkit tune` on every shape of the tsm2
# suite (m = k in {10240, 20480, 30720}, n in {2, 4, 8, 16}; fp32 and fp64) and of the ism2
# suite (m in {1e5, 1e6, 1e7}, k = n in {8, 16}; fp32 and fp64), each in a capture of kind
# tune. Writes OUT/tune-*.txt (each call's table), OUT/regret.txt (the 'regret' lines) and
# OUT/regret.md (the summary table against the targets: TSM2 <= 1.10, ISM2 <= 1.15), and
# prints that table last. First it runs the GPU test tests/cli/tune_gpu.py (OUT/tune_gpu.txt).
#
# Budget (H100): probe ~5 s; each tune call times every configuration with --reps 5 (plus
# one verified launch and 2 warm-ups): 40/60/80/100 TSM2 configurations for n = 2/4/8/16
# (1680 in all, launches of 0.15-2.6 ms, up to ~40 ms for t2 = 1 at n = 16), 48/60 ISM2
# ones for k = 8/16 (648 in all); about 3-5 minutes in total. REPS=N overrides --reps.
set -u
BUILD=${1:?usage: tune-device.sh BUILD OUT}
OUT=${2:?usage: tune-device.sh BUILD OUT}
RK=$BUILD/cli/roofkit
REPS=${REPS:-5}
DB=$OUT/tune.db
mkdir -p "$OUT"
rm -f "$DB" "$DB-wal" "$DB-shm" "$OUT"/tune-*.txt "$OUT/regret.txt"
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1

if ! "$RK" --db "$DB" probe >"$OUT/probe.txt" 2>&1; then
    echo "tune-device: probe failed:"
    tail -20 "$OUT/probe.txt"
    exit 1
fi
echo "tune-device: probe done in $(($(date +%s) - t0)) s"

# The GPU test first (tests/cli/tune_gpu.py: no probe -> exit 12; a small sweep of each family
# checked in its database; ~30 s), in its own folder.
HERE=$(dirname "$0")
if python3 "$HERE/tune_gpu.py" "$RK" "$OUT/tune-gpu-test" >"$OUT/tune_gpu.txt" 2>&1; then
    echo "tune-device: tune_gpu test passed"
else
    echo "tune-device: tune_gpu test FAILED (exit $?):"
    tail -15 "$OUT/tune_gpu.txt"
fi

fails=0
one() { # one NAME ARGS...: one tune call, its table in OUT/tune-NAME.txt
    name=$1
    shift
    t1=$(date +%s)
    "$RK" --db "$DB" tune "$@" --reps "$REPS" >"$OUT/tune-$name.txt" 2>"$OUT/tune-$name.err"
    rc=$?
    echo "tune-device: $name exit $rc in $(($(date +%s) - t1)) s ($(grep -c . "$OUT/tune-$name.err") stderr lines)"
    if [ "$rc" != 0 ]; then
        fails=$((fails + 1))
        tail -3 "$OUT/tune-$name.err"
    fi
    grep '^regret ' "$OUT/tune-$name.txt" >>"$OUT/regret.txt"
}

for prec in fp32 fp64; do
    for m in 10240 20480 30720; do
        for n in 2 4 8 16; do
            one "tsm2-$prec-$m-$n" tsm2 --m "$m" --n "$n" --k "$m" --precision "$prec"
        done
    done
done
for prec in fp32 fp64; do
    for m in 100000 1000000 10000000; do
        for kn in 8 16; do
            one "ism2-$prec-$m-$kn" ism2 --m "$m" --n "$kn" --k "$kn" --precision "$prec"
        done
    done
done

# regret FAMILY KERNEL PREC MxNxK alg5 A exhaustive E default D best_us B
awk -v reps="$REPS" '
BEGIN {
    print "| family | kernel | precision | m x n x k | best [us] | Alg. 5 | exhaustive | kernel default | target |"
    print "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
}
$1 == "regret" {
    lim = $2 == "tsm2" ? 1.10 : 1.15
    ok = ($7 != "nan" && $9 != "nan" && $7 + 0 <= lim && $9 + 0 <= lim) ? "met" : "MISSED"
    printf "| %s | %s | %s | %s | %.2f | %.3f | %.3f | %.3f | <= %.2f %s |\n", $2, $3, $4, $5, $13, $7, $9, $11, lim, ok
    n[$2]++; if (ok == "met") met[$2]++
    if ($7 + 0 > w5[$2]) w5[$2] = $7 + 0
    if ($9 + 0 > we[$2]) we[$2] = $9 + 0
}
END {
    printf "\nworst regret: tsm2 Alg. 5 %.3f, exhaustive %.3f (%d of %d shapes met <= 1.10); ", w5["tsm2"], we["tsm2"], met["tsm2"], n["tsm2"]
    printf "ism2 Alg. 5 %.3f, exhaustive %.3f (%d of %d met <= 1.15); --reps %s\n", w5["ism2"], we["ism2"], met["ism2"], n["ism2"], reps
}' "$OUT/regret.txt" >"$OUT/regret.md"

echo "tune-device: $fails call(s) failed; total $(($(date +%s) - t0)) s; database $DB"
echo
cat "$OUT/regret.md"
[ "$fails" = 0 ]
