#!/bin/bash
# device-check.sh MODE - what kernels/ runs on the GPU machine, in one call per mode
# (device time is scarce: build here, carry build-kdev/, run this there).
#   test   the GPU test (every kernel on odd shapes)
#   tune   the GPU test, the copy ceiling, and sweeps that choose the TSM2/ISM2
#          defaults (t1, t3, tcf, register cap) against cuBLAS
#   final  roofkit probe (copy ceiling) and roofkit run of the suites with the
#          registry defaults into $OUT/run.db: the closing figures
#   entry  compute-sanitizer memcheck and racecheck on the entry point tsm2 (odd shapes
#          m 1000, 1003 x n 1, 3, 5, 7 x k 1, 3, 17; n 12, 21, 32), V3's extra column tiles
#          and column blocks; fails (exit 9) on any error or hazard
#   tc     the tensor-core stream kernels (tsm2_v3 apipe = 4) with one and with two tiles of
#          16 rows a warp (rpt 2, 4) on the tsm2-grid shapes they are chosen for (n 13-32), both
#          precisions, against the copy ceiling of the same run: which default each should have;
#          then the tensor cores walking row tiles on ISM2's shapes against the rows kernel and
#          cuBLAS
#   big    the entry point at the ends of its range of m, 10^8 and 10^4 rows, against cuBLAS
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
    # The closing figures: `roofkit run` with the registry defaults, stored in run.db.
    run_test
    R="$D/roofkit"
    K="$D/kbench"
    DB="$OUT/run.db"
    # roofkit adds captures to an existing database: a rerun into the same OUT would summarize
    # the last run's rows beside this one's
    rm -f "$DB" "$DB-wal" "$DB-shm"
    {
        $K --copy --kernel cublas_sgemm --sizes 64 --precision fp32
        echo "== roofkit probe --only bw_dram_copy,bw_dram_read"
        $R --db "$DB" probe --only bw_dram_copy,bw_dram_read
        echo "probe rc=$?"
        for suite in tsm2 ism2 seeds; do
            echo "== roofkit run --suite $suite"
            $R --db "$DB" run --suite $suite
            echo "run $suite rc=$? ($((SECONDS - t0)) s)"
        done
        echo "== roofkit run --kernel tsm2_v3 --param t2=2,4,8 --param t3=2,4 --sizes 12288x6x12288"
        $R --db "$DB" run --kernel tsm2_v3 --param t2=2,4,8 --param t3=2,4 --sizes 12288x6x12288
        echo "run example rc=$?"
    } > "$OUT/runs.log" 2>&1
    grep -E "rc=|copy:" "$OUT/runs.log"
    {   # evidence for the next defaults, not part of the closing figures
        $K --kernel tsm2_v3 --sizes 10240x16x10240 --precision fp32 --param t1=256 --param rpt=4 \
            --param t3=8 --param ksplit=0,12 --reps 20
        $K --kernel tsm2_v3 --sizes 10240x8x10240,20480x8x20480 --precision fp32,fp64 \
            --param rpt=2,4 --param t3=8
    } > "$OUT/sweep.log" 2>&1
    python3 tests/kernels/summarize.py --db "$DB" > "$OUT/summary.md"
    grep -E "^\| (tsm2_v3|ism2_opt1) " "$OUT/summary.md" | awk -F'|' '{printf "%s|%s|%s|%s|%s|%s\n", $2, $3, $4, $8, $9, $10}'
    tail -14 "$OUT/summary.md"
    ;;
entry)
    K="$D/kbench"
    S=""
    for m in 1000 1003; do for n in 1 3 5 7; do for k in 1 3 17; do S="$S,${m}x${n}x${k}"; done; done; done
    S="${S#,},1001x12x1003,1002x21x517,1003x32x300"
    rc=0
    for tool in memcheck racecheck; do
        # each run below appends to this log and the count of clean summaries reads it: start it
        # empty, or a rerun into the same OUT counts the last run's summaries too
        : > "$OUT/sanitize-$tool.log"
        for args in "--kernel tsm2 --sizes $S --precision fp32,fp64" \
            "--kernel tsm2_v3 --param t2=3,5,6,7,20,24 --sizes 1001x5x203,502x23x117 --precision fp32" \
            "--kernel tsm2 --param variant=2 --param t1=64 --param t2=4 --param t3=4 --param apipe=1 --param rpt=1,2 --param cblocks=2,3 --sizes 1001x7x203,502x21x117,1003x5x17 --precision fp32,fp64"; do
            # shellcheck disable=SC2086
            timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 $K $args --reps 1 --warm \
                >> "$OUT/sanitize-$tool.log" 2>&1 || rc=9
        done
        echo "$tool: $(grep -cE 'SUMMARY: 0 (errors|hazards)' "$OUT/sanitize-$tool.log") of 3 clean"
    done
    exit $rc
    ;;
tc)
    S=""
    for m in 10240 20480 40960; do for n in 13 16 17 20 24 25 28 32; do S="$S,${m}x${n}x${m}"; done; done
    # shellcheck disable=SC2086
    timeout 500 "$D/kbench" --copy --kernel tsm2_v3 --param apipe=4 --param t1=128 \
        --param rpt=2,4 --sizes "${S#,}" --precision fp32,fp64 --reps 7 > "$OUT/tc.log" 2>&1
    echo "tc rc=$? ($((SECONDS - t0)) s)"
    # ISM2's shapes on the tensor cores walking row tiles (rpt 2, k <= 64) against two tiles a
    # warp, the rows kernel and cuBLAS
    S="1000000x32x32,10000000x32x32,10000000x16x16"
    for n in 16 24 32; do for k in 16 24 32; do S="$S,100000x${n}x$k"; done; done
    for kern in "tsm2_v3 --param apipe=4 --param t1=128,256 --param rpt=2,4" ism2_opt1 cublas; do
        # shellcheck disable=SC2086
        timeout 200 "$D/kbench" --kernel $kern --sizes "$S" --precision fp32,fp64 --reps 7 \
            >> "$OUT/tc.log" 2>&1
    done
    echo "tc ism2 rc=$? ($((SECONDS - t0)) s)"
    grep -E "tsm2_v3|ism2|cublas|copy" "$OUT/tc.log" | tail -150
    ;;
big)
    # the ends of the entry point's range of m: 10^8 rows (A and C up to 26 GB each in fp64,
    # the float64 reference beside them) and 10^4, against cuBLAS, every result verified
    timeout 240 "$D/kbench" --kernel tsm2,cublas --sizes 100000000x8x8,100000000x32x4,100000000x1x1,100000000x17x3,100000000x24x1 \
        --precision fp32,fp64 --reps 3 > "$OUT/big.log" 2>&1
    echo "1e8 rc=$? ($((SECONDS - t0)) s)"
    timeout 60 "$D/kbench" --kernel tsm2,cublas --sizes 10000x5x3,10000x32x64,10000x1x1,10000x17x65,10000x32x10000 \
        --precision fp32,fp64 --reps 7 >> "$OUT/big.log" 2>&1
    echo "1e4 rc=$? ($((SECONDS - t0)) s)"
    grep -E "^(tsm2|cublas)|failures|skip" "$OUT/big.log" | cut -c1-160
    ;;
*)
    echo "usage: device-check.sh test|tune|tune2|final|entry|tc|big" >&2
    exit 2
    ;;
esac
echo "total $((SECONDS - t0)) s"
