#!/bin/sh
# gpu_reliability.sh ROOFKIT WORKDIR [PROGRAM] - the reliability checks that need a GPU
# (ctest label gpu; exits 77, skipped, when roofkit finds no GPU); tests/gpu-validate.sh runs
# it on the GPU machine.
#
#   G1  a shape whose k*n overflows the byte count (1x2147483647x1073741825 fp64) is refused
#       before allocating: exit 2 "beyond what cuBLAS accepts", no measurement stored
#   G2  SIGINT and SIGTERM at a random point (1-6 s) of `probe`, `run --suite default` and,
#       with PROGRAM, `profile -- PROGRAM`: exit 130 (or 0 when it finished first), the capture
#       marked interrupted, every stored measurement complete, integrity_check ok
#   G3  kill -9 at a random point of `run`: the database passes integrity_check and every stored
#       measurement is complete (the capture may stay 'running')
#   G5  with PROGRAM: the injection library failing (no journal folder, a journal folder that
#       is a file, an unknown metric, a bad kernel regex) leaves the program's output and exit
#       code what they are without it, and says at most one line
#   G4  compute-sanitizer memcheck, racecheck and initcheck on `run` of one small shape per
#       kernel family: exit 0 and "ERROR SUMMARY: 0 errors" (racecheck: "RACECHECK SUMMARY: 0
#       hazards displayed (0 errors, 0 warnings)"); skipped without compute-sanitizer
#
# A fourth argument runs one step: refuse (G1), signals (G2, G3), inject (G5), or one sanitizer tool
# (memcheck, racecheck, initcheck); ctest runs each as its own test with its own timeout
# (the whole script did not finish in 230 s on the H100).
set -u
R=$1
W=$2
PROG=${3:-}
STEP=${4:-all}
want() { [ "$STEP" = all ] || [ "$STEP" = "$1" ]; }
fail=0
rm -rf "$W" && mkdir -p "$W"

say() { echo "$*"; }
bad() { echo "FAIL: $*"; fail=1; }

"$R" --db "$W/gpu.db" probe --only launch --quick >/dev/null 2>"$W/gpu.err"
if [ $? = 4 ]; then
    echo "no usable GPU: skipped"
    exit 77
fi

# sql DB QUERY: the first column of the first row (python3's sqlite3: no sqlite3 CLI needed).
sql() { python3 -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print(r[0] if r else "")' "$1" "$2"; }

# complete DB: integrity ok and no measurement without its time and kernel.
complete() {
    [ "$(sql "$1" 'PRAGMA integrity_check')" = ok ] || { bad "$2: integrity_check fails"; return; }
    n=$(sql "$1" 'SELECT count(*) FROM measurement WHERE time_median_ns IS NULL OR kernel IS NULL')
    [ "$n" = 0 ] || bad "$2: $n incomplete measurements"
}

# G1
if want refuse; then
"$R" --db "$W/g1.db" run --kernel tsm2_v3 --precision fp64 --sizes 1x2147483647x1073741825 \
    >/dev/null 2>"$W/g1.err"
rc=$?
[ $rc = 2 ] || bad "G1: exit $rc, expected 2"
grep -q "beyond what cuBLAS accepts" "$W/g1.err" || bad "G1: $(cat "$W/g1.err")"
[ "$(sql "$W/g1.db" 'SELECT count(*) FROM measurement')" = 0 ] || bad "G1: a measurement was stored"
fi

# G2, G3
interrupt() { # interrupt NAME SIGNAL ARGS...
    name=$1 sig=$2
    shift 2
    db="$W/$name.db"
    "$R" --db "$db" --quiet "$@" >/dev/null 2>"$W/$name.err" &
    pid=$!
    sleep "$(awk 'BEGIN{srand(); printf "%.1f", 1 + rand() * 5}')"
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    say "$name: exit $rc after SIG$sig"
    [ -f "$db" ] || { [ "$sig" = KILL ] || bad "$name: no database"; return; }
    complete "$db" "$name"
    if [ "$sig" != KILL ] && [ $rc = 130 ]; then
        st=$(sql "$db" "SELECT status FROM capture WHERE kind <> 'model' ORDER BY id DESC LIMIT 1")
        [ "$st" = interrupted ] || bad "$name: capture '$st', expected interrupted"
        grep -q '^roofkit: error: interrupted' "$W/$name.err" || bad "$name: no 'interrupted' line"
    elif [ "$sig" != KILL ] && [ $rc != 0 ]; then
        bad "$name: exit $rc, expected 130 (or 0 when it finished first)"
    fi
}
if want signals; then
    interrupt probe_int INT probe
    interrupt probe_term TERM probe
    interrupt run_int INT run --suite default
    interrupt run_term TERM run --suite default
    interrupt run_kill KILL run --suite default
    if [ -n "$PROG" ]; then
        interrupt profile_int INT profile -- "$PROG"
        interrupt profile_term TERM profile -- "$PROG"
    fi
fi

# G5: the injection library with the environment roofkit profile would set, broken on purpose.
if want inject && [ -n "$PROG" ]; then
    INJ=$(dirname "$R")/../collect/libroofkit-inject.so
    [ -f "$INJ" ] || INJ=$(dirname "$R")/libroofkit-inject.so
    # without the library CUDA loads nothing and every case below would pass untested
    [ -f "$INJ" ] || bad "G5: no libroofkit-inject.so beside $R or in ../collect"
    "$PROG" 8 >"$W/plain.out" 2>"$W/plain.err"
    want_rc=$?
    "$R" --db "$W/g5.db" --quiet profile --metrics none -- true >/dev/null 2>&1 # a database, capture 1
    # (permissions do not stop root, who runs the GPU machine's tests: a corrupt file instead)
    head -c 8192 /dev/urandom >"$W/corrupt.db"
    broken() { # broken NAME ENV...: PROGRAM under the injection library with ENV
        name=$1
        shift
        env CUDA_INJECTION64_PATH="$INJ" ROOFKIT_CAPTURE=1 ROOFKIT_STATUS="$W/g5-$name.status" \
            "$@" "$PROG" 8 >"$W/g5-$name.out" 2>"$W/g5-$name.err"
        rc=$?
        # stdout and the exit code as without roofkit; on stderr at most one line of roofkit's
        extra=$(grep -cv '^roofkit: ' "$W/g5-$name.err")
        lines=$(grep -c . "$W/g5-$name.err")
        if [ $rc != "$want_rc" ] || ! cmp -s "$W/plain.out" "$W/g5-$name.out" ||
            [ "$extra" != 0 ] || [ "$lines" -gt 1 ]; then
            bad "G5 $name: exit $rc (want $want_rc), stdout $(cmp -s "$W/plain.out" "$W/g5-$name.out" && echo same || echo DIFFERENT: $(head -c 300 "$W/g5-$name.out")), stderr: $(head -c 400 "$W/g5-$name.err")"
        else
            say "G5 $name: program unchanged; stderr: $(cat "$W/g5-$name.err")"
        fi
    }
    # (the library writes journals, which roofkit profile stores: the database is not its)
    mkdir -p "$W/g5.journal"
    broken no-journal ROOFKIT_JOURNAL=/nonexistent/dir
    broken journal-is-file ROOFKIT_JOURNAL="$W/corrupt.db"
    broken bad-metric ROOFKIT_JOURNAL="$W/g5.journal" ROOFKIT_METRICS=no_such__metric.sum
    broken bad-regex ROOFKIT_JOURNAL="$W/g5.journal" 'ROOFKIT_KERNEL=(['
fi

# G4
# One small shape per family (square kernels 128, tall-and-skinny 2048x8x2048): under the
# sanitizers every access is instrumented, so size is time.
SAN=$(command -v compute-sanitizer 2>/dev/null)
[ -n "$SAN" ] || [ ! -x /usr/local/cuda/bin/compute-sanitizer ] ||
    SAN=/usr/local/cuda/bin/compute-sanitizer
if [ -n "$SAN" ]; then
    for tool in memcheck racecheck initcheck; do
        want "$tool" || continue
        for k in naive stso stmo stmvb smem_001 blocktile1d_001 tiled_003 rect regtile tsm2 ism2 cublas; do
            case $k in tsm2 | ism2) sz=2048x8x2048 ;; *) sz=128 ;; esac
            log=$W/san-$tool-$k.log
            "$SAN" --tool "$tool" --error-exitcode 99 "$R" --db "$W/san-$tool.db" \
                --quiet run --kernel "$k" --sizes "$sz" --reps 3 --metrics none >"$log" 2>&1
            rc=$?
            # memcheck and initcheck end with "ERROR SUMMARY: 0 errors", racecheck with
            # "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
            if [ $rc != 0 ] || ! grep -qE "ERROR SUMMARY: 0 errors|SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)" "$log"; then
                bad "G4: $tool on $k: exit $rc; $(grep -E 'SUMMARY' "$log" || tail -3 "$log")"
            fi
        done
    done
else
    say "G4: compute-sanitizer not found: skipped"
    # a sanitizer step that checked nothing is a skip (77), not a pass
    case $STEP in memcheck | racecheck | initcheck) exit 77 ;; esac
fi

[ $fail = 0 ] && echo "gpu_reliability: all passed"
exit $fail
