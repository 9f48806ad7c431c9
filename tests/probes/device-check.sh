#!/bin/bash
# device-check.sh [BUILD_DIR] - what the probes helper runs on the GPU machine in one
# call: SASS check, registry and GPU tests (quick, then full), and when the roofkit
# binary is there, `roofkit probe` full and --quick into $OUT/probe.db with wall times.
# Full logs go to $OUT; a short table is printed last.
set -o pipefail
B=${1:-build-probes}
OUT=${OUT:-/tmp/probes-out}
mkdir -p "$OUT"
# timed LABEL CMD...: runs CMD, prints "LABEL wall N s" (no /usr/bin/time needed)
timed() {
    local label=$1 t0 t1 rc
    shift
    t0=$(date +%s.%N)
    "$@"
    rc=$?
    t1=$(date +%s.%N)
    echo "$label wall $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s" >&2
    return $rc
}
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv 2>&1 | tee "$OUT/smi.txt"
tests/probes/sass-check.sh "$B/probes/librk_probes.a" 2>&1 | tee "$OUT/sass.txt"
# test_registry is a unit test (label unit): it runs on the build machine
if [ "${PROBES_TESTS:-1}" = 1 ]; then
    timed "quick test" "$B/tests/probes/test_probes_gpu" >"$OUT/quick.txt" 2>&1
    echo "test_probes_gpu quick rc=$?"; grep -E "wall|PASSED|FAILED|ERROR|error" "$OUT/quick.txt" | head -20
    timed "full test" "$B/tests/probes/test_probes_gpu" full >"$OUT/full.txt" 2>&1
    echo "test_probes_gpu full rc=$?"; grep -E "wall|PASSED|FAILED|ERROR|error" "$OUT/full.txt" | head -20
fi
if [ -x "$B/cli/roofkit" ]; then
    rm -f "$OUT/probe.db" "$OUT/quick.db"
    timed "roofkit probe --quick" "$B/cli/roofkit" probe --quick \
        --db "$OUT/quick.db" >"$OUT/roofkit-quick.txt" 2>&1; echo "roofkit probe --quick rc=$?"
    timed "roofkit probe" "$B/cli/roofkit" probe --db "$OUT/probe.db" \
        >"$OUT/roofkit-full.txt" 2>&1; echo "roofkit probe rc=$?"
    "$B/cli/roofkit" probe --only bw_dram_copy,lat_shared,launch --db "$OUT/only.db" \
        >"$OUT/roofkit-only.txt" 2>&1; echo "roofkit probe --only bw_dram_copy,lat_shared,launch rc=$?"
    grep -c . "$OUT/roofkit-only.txt"
    tail -3 "$OUT/roofkit-quick.txt"
    cat "$OUT/roofkit-full.txt"
elif [ "${PROBES_TESTS:-1}" = 1 ]; then
    grep -E "^# |^[a-z_0-9]+ +[0-9]" "$OUT/full.txt" | cut -c1-200
fi
