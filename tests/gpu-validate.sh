#!/bin/bash
# gpu-validate.sh BUILD OUT STEP - the checks that need a GPU (probes, kernels, counters,
# reliability), in as few device calls as possible (device time is scarce: build here with a
# Release build, carry BUILD, run this there). Full logs go under OUT; a short table is
# printed last.
#
#   tests     every ctest of label gpu except the compute-sanitizer steps, then collect/'s
#             device-check (ncu side by side, 100-launch program, PyTorch)
#   sanitize  the compute-sanitizer steps (memcheck, racecheck, initcheck), one ctest each, in
#             parallel (SAN_TESTS: another ctest regex; SAN_SECS bounds the wall time); with FUZZ=DIR (a clang -DROOFKIT_FUZZ=ON build carried along),
#             the libFuzzer targets of tests/fuzz run on the spare CPU cores meanwhile
#             (fuzz_NAME -workers=W -jobs=W over a copy of the corpus; FUZZ_TARGETS names them,
#             FUZZ_SECS bounds the wall time)
set -u
B=$(cd "$1" && pwd)
OUT=$2
STEP=${3:-tests}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
T=()
say() { T+=("$*"); echo "== $*"; }
now() { date +%s; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader

# ctest_summary LOG: one line per test, "name: Passed/Failed (s)"
ctest_summary() {
    grep -E "Test +#[0-9]+: " "$1" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) \.*\**/\1/' |
        sed -E 's/ +/ /g'
}

case $STEP in
tests)
    t0=$(now)
    ctest --test-dir "$B" -L gpu -E 'memcheck|racecheck|initcheck' --output-on-failure \
        --timeout 600 >"$OUT/ctest-gpu.log" 2>&1
    say "ctest -L gpu (no sanitizers): rc=$? in $(($(now) - t0)) s"
    while read -r l; do say "  $l"; done < <(ctest_summary "$OUT/ctest-gpu.log")
    t0=$(now)
    mkdir -p "$OUT/collect"
    bash "$HERE/collect/device-check.sh" "$B" "$OUT/collect" >"$OUT/collect-summary.txt" 2>&1
    say "collect device-check: rc=$? in $(($(now) - t0)) s"
    while read -r l; do say "  $l"; done <"$OUT/collect-summary.txt"
    ;;
sanitize)
    fpids=()
    if [ -n "${FUZZ:-}" ]; then
        F=$(cd "$FUZZ" && pwd)
        W=${FUZZ_WORKERS:-6}
        for t in ${FUZZ_TARGETS:-cmdline import_sql}; do
            c=/tmp/corpus-$t
            rm -rf "$c" && mkdir -p "$c" && cp "$HERE/fuzz/corpus/$t"/* "$c/"
            dict=()
            [ -f "$HERE/fuzz/$t.dict" ] && dict=(-dict="$HERE/fuzz/$t.dict")
            mkdir -p "$OUT/fuzz-$t"
            (cd "$OUT/fuzz-$t" && TMPDIR=/dev/shm timeout $((${FUZZ_SECS:-420} + 60)) \
                "$F/tests/fuzz/fuzz_$t" "${dict[@]}" -workers="$W" -jobs="$W" \
                -max_total_time="${FUZZ_SECS:-420}" -timeout=10 -close_fd_mask=3 \
                -print_final_stats=1 "$c" >/dev/null 2>&1) &
            fpids+=($!)
        done
    fi
    t0=$(now)
    timeout "${SAN_SECS:-520}" ctest --test-dir "$B" -L gpu -R "${SAN_TESTS:-memcheck|racecheck|initcheck}" \
        -j4 --output-on-failure --timeout 600 >"$OUT/ctest-san.log" 2>&1
    say "ctest sanitizers: rc=$? in $(($(now) - t0)) s"
    while read -r l; do say "  $l"; done < <(ctest_summary "$OUT/ctest-san.log")
    for p in "${fpids[@]}"; do wait "$p"; done
    for t in ${FUZZ_TARGETS:-cmdline import_sql}; do
        d=$OUT/fuzz-$t
        [ -d "$d" ] || continue
        runs=$(cat "$d"/fuzz-*.log 2>/dev/null | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
        crashes=$(ls "$d" | grep -cE '^(crash|leak|timeout|oom)-')
        say "fuzz $t: $runs executions over ${FUZZ_WORKERS:-6} workers, $crashes crash/leak/timeout/oom files"
        cat "$d"/fuzz-*.log | grep -E "^==[0-9]+==ERROR|SUMMARY|Test unit written" | sort | uniq -c | head -5
    done
    ;;
*)
    echo "usage: gpu-validate.sh BUILD OUT tests|sanitize" >&2
    exit 2
    ;;
esac
# What comes back from OUT is at most 8 files: everything goes into one archive.
printf '%s\n' "${T[@]}" >"$OUT/summary.txt"
tar -C "$OUT" -czf /tmp/gpu-validate.tgz --exclude=summary.txt . && find "$OUT" -mindepth 1 \
    -not -name summary.txt -delete && mv /tmp/gpu-validate.tgz "$OUT/$STEP.tgz"
printf '%s\n' "${T[@]}"
