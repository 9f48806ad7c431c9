#!/bin/bash
# device-check.sh MODE - what kernels/ runs on the GPU machine, in one call per mode
# (device time is scarce: build here, carry build-kdev/, run this there).
#   test   the GPU test (every kernel on odd shapes)
#   tune   the GPU test, the copy ceiling, and sweeps that choose the TSM2/ISM2
#          defaults (t1, t3, tcf, register cap) against cuBLAS
#   final  the suites with the registry defaults: the closing figures
# Full logs go to $OUT; a summary table is printed last.
set -u
D=${D:-build-kdev}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$D${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
mode=${1:-test}
t0=$SECONDS

run_test() {
    timeout 120 "$D/test_kernels_gpu" > "$OUT/test.log" 2>&1
    echo "gpu test rc=$? ($((SECONDS - t0)) s)"
    grep -E "^\[  (PASSED|FAILED) |FAILED " "$OUT/test.log" | head -20
}

case $mode in
test)
    run_test
    ;;
tune)
    run_test
    K="$D/kbench"
    {
        $K --copy --kernel cublas --suite tsm2
        $K --suite tsm2 --kernel tsm2_v3 --param t1=128,256 --param t3=4,8,16
        [ -x "$D/kbench-cap" ] && $D/kbench-cap --suite tsm2 --kernel tsm2_v3 --param t3=8,16 |
            sed 's/^tsm2_v3 /tsm2_v3cap /'
    } > "$OUT/tune-tsm2.log" 2>&1
    echo "tsm2 sweep done ($((SECONDS - t0)) s)"
    {
        $K --suite ism2 --kernel cublas
        $K --suite ism2 --kernel ism2 --param tcf=1,4,16,32,64 --param t3=8,16
        $K --suite ism2 --kernel tsm2_v3
    } > "$OUT/tune-ism2.log" 2>&1
    echo "ism2 sweep done ($((SECONDS - t0)) s)"
    $K --kernel regtile,cublas_sgemm,cublas_gemmex --sizes 4096,2048 --precision fp32 \
        > "$OUT/tune-regtile.log" 2>&1
    echo "regtile done ($((SECONDS - t0)) s)"
    python3 tests/kernels/summarize.py --best "$OUT"/tune-*.log > "$OUT/summary.md"
    grep -E "^\| (tsm2|ism2|regtile)" "$OUT/summary.md" | grep -v "^| kernel" |
        awk -F'|' '{printf "%s|%s|%s|%s|%s|%s|%s\n", $2, $3, $4, $5, $8, $9, $10}' | tail -120
    ;;
tune2)
    run_test
    K="$D/kbench"
    {
        $K --copy --kernel cublas --suite tsm2
        $K --suite tsm2 --kernel tsm2_v3 --param apipe=1 --param t3=4,8,16 --param rpt=1,2 \
            --param t1=128,256
        $K --suite tsm2 --kernel tsm2_v3 --param apipe=0 --param t3=8,16
    } > "$OUT/tune-tsm2.log" 2>&1
    echo "tsm2 sweep done ($((SECONDS - t0)) s)"
    {
        $K --suite ism2 --kernel cublas
        $K --suite ism2 --kernel ism2_opt1 --param t3=4,8,16 --param rpt=1,2 --param tcf=0,1,4,16,64
        $K --suite ism2 --kernel ism2_opt2
    } > "$OUT/tune-ism2.log" 2>&1
    echo "ism2 sweep done ($((SECONDS - t0)) s)"
    timeout 100 $K --suite seeds > "$OUT/tune-seeds.log" 2>&1
    echo "seeds suite rc=$? ($((SECONDS - t0)) s)"
    python3 tests/kernels/summarize.py --best "$OUT"/tune-tsm2.log "$OUT"/tune-ism2.log > "$OUT/summary.md"
    python3 tests/kernels/summarize.py "$OUT"/tune-seeds.log > "$OUT/summary-seeds.md"
    grep -E "^\| (tsm2|ism2)" "$OUT/summary.md" |
        awk -F'|' '{printf "%s|%s|%s|%s|%s|%s|%s\n", $2, $3, $4, $5, $8, $9, $10}' | tail -60
    grep -E "FAIL|failures|geomean|^\| (regtile|stmvb|tiled)" "$OUT/summary-seeds.md" | head -30
    ;;
final)
    run_test
    K="$D/kbench"
    $K --copy --suite tsm2 > "$OUT/final-tsm2.log" 2>&1
    echo "tsm2 suite done ($((SECONDS - t0)) s)"
    $K --suite ism2 > "$OUT/final-ism2.log" 2>&1
    echo "ism2 suite done ($((SECONDS - t0)) s)"
    $K --suite seeds > "$OUT/final-seeds.log" 2>&1
    echo "seeds suite done ($((SECONDS - t0)) s)"
    python3 tests/kernels/summarize.py "$OUT"/final-*.log > "$OUT/summary.md"
    tail -40 "$OUT/summary.md"
    ;;
*)
    echo "usage: device-check.sh test|tune|final" >&2
    exit 2
    ;;
esac
echo "total $((SECONDS - t0)) s"
