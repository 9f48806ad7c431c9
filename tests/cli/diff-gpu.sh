#!/bin/bash
# diff-gpu.sh ROOFKIT WORK - `roofkit diff` on real recordings of one GPU, as a CI job would run
# it (label gpu; skipped with 77 without a GPU). The same run recorded twice, then once more with
# one kernel deliberately slowed by a parameter; prints each diff and checks:
#   V1 probe --quick, then `run --kernel tsm2_v3,cublas_sgemm,cublas_dgemm` at 20480x4x20480
#      and 20480x16x20480, fp32 and fp64, 20 repetitions, no counters, twice: every measurement
#      verified and holding its 20 repetitions' times (times_ns). Not cublas_gemmex: on an H100
#      its fp32 20480x16x20480 (no TF32) ran 744-850 us over nine runs in three processes, a
#      change between runs that diff rightly reports, where the repeat below needs kernels whose
#      runs repeat
#   V2 diff of the two runs: exit 0, no regression, every configuration but at most one within
#      noise under the default run-to-run noise floor (2 %); the count with the repetitions
#      alone (--noise 0) is printed beside it
#   V3 the third run with --param ksplit=640: tsm2_v3 splits k over 640 blocks (kchunk 32)
#      instead of the 1 to 6 that fill one wave, so 640 partial sums of C go through the
#      workspace and the reduction: 1.25x (n = 4) to 2x (n = 16) the DRAM traffic, still
#      verified. cuBLAS has no ksplit and runs as before. diff of the first and the third:
#      exit 13, every regression a tsm2_v3 configuration compared across its parameters
#      (ksplit -> 640), at least 3 of its 4 flagged, no cuBLAS configuration slower beyond the
#      threshold; the error line names tsm2_v3
#   V4 report --baseline FIRST:THIRD: csv/compare.csv holds one row per configuration and
#      tsm2_v3's regressions
set -u
R=$1
W=$2
fail=0
check() { # check CONDITION-EXIT-CODE WHAT
    if [ "$1" != 0 ]; then
        echo "FAIL: $2"
        fail=1
    else
        echo "ok: $2"
    fi
}
q() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join('' if v is None else str(v) for v in r) for r in c.execute(sys.argv[2])))" "$@"; }
# count JSON_FILE PYTHON_CONDITION_ON_r: kernel rows of a diff --format json that satisfy it
count() { python3 -c "import json,sys; print(sum(1 for r in json.load(open(sys.argv[1])) if r['item'] == 'kernel' and ($2)))" "$1"; }

if ! "$R" list gpus >/dev/null 2>&1; then
    echo "diff-gpu: no GPU here: skipped"
    exit 77
fi
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
DB=diff.db
RUN=(run --kernel tsm2_v3,cublas_sgemm,cublas_dgemm --sizes 20480x4x20480,20480x16x20480 --precision fp32,fp64
     --reps 20 --metrics none)

# V1
"$R" --db $DB probe --quick >probe.log 2>&1
check $? "V1 probe --quick"
# (roofkit's exit code, not tee's: $? after a pipe is the last command's)
"$R" --db $DB "${RUN[@]}" | tee run1.log
check "${PIPESTATUS[0]}" "V1 first run"
"$R" --db $DB "${RUN[@]}" | tee run2.log
check "${PIPESTATUS[0]}" "V1 second run (the repeat)"
"$R" --db $DB "${RUN[@]}" --param ksplit=640 | tee run3.log
check "${PIPESTATUS[0]}" "V1 third run, tsm2_v3 with --param ksplit=640"
read -r A B S <<<"$(q $DB "SELECT id FROM capture WHERE kind = 'run' ORDER BY id" | tr '\n' ' ')"
echo "runs: A=$A (first) B=$B (repeat) S=$S (ksplit=640)"
n=$(q $DB "SELECT count(*) FROM measurement WHERE capture_id = $A")
[ "$n" -ge 8 ] && [ "$(q $DB "SELECT count(*) FROM measurement WHERE capture_id IN ($A, $B, $S)
    AND verified = 1 AND json_array_length(times_ns) = 20")" = $((3 * n)) ]
check $? "V1 $n configurations a run, each verified with its 20 repetitions' times"

# V2: the repeat
"$R" --db $DB diff $A $B
rc=$?
check $((rc != 0)) "V2 diff $A $B (the repeat) exits 0 (got $rc)"
"$R" --db $DB diff $A $B --format json >repeat.json 2>/dev/null
noise=$(count repeat.json "r['change'] == 'within noise'")
"$R" --db $DB diff $A $B --noise 0 --format json >repeat0.json 2>/dev/null
noise0=$(count repeat0.json "r['change'] == 'within noise'")
echo "V2 $noise of $n configurations within noise in the repeat ($noise0 with the repetitions alone, --noise 0)"
[ "$(count repeat.json "r['regression']")" = 0 ] && [ "$noise" -ge $((n - 1)) ]
check $? "V2 no regression, all but at most one within noise (the default 2 % floor)"

# V3: tsm2_v3 slowed
"$R" --db $DB diff $A $S 2>slow.err
rc=$?
cat slow.err
check $((rc != 13)) "V3 diff $A $S (ksplit=640) exits 13 (got $rc)"
"$R" --db $DB diff $A $S --format json >slow.json 2>/dev/null
reg=$(count slow.json "r['regression']")
reg_v3=$(count slow.json "r['regression'] and r['name'] == 'tsm2_v3' and r['params_b'] and json.loads(r['params_b'])['ksplit'] == 640")
other=$(count slow.json "r['name'] != 'tsm2_v3' and r['regression']")
echo "V3 $reg regressions, $reg_v3 of them tsm2_v3 across ksplit -> 640, $other others"
[ "$reg" = "$reg_v3" ] && [ "$reg_v3" -ge 3 ] && [ "$other" = 0 ]
check $? "V3 exactly tsm2_v3 flagged (at least 3 of its 4 configurations), nothing else"
grep -q "slower than capture $A beyond noise and 5%: tsm2_v3" slow.err
check $? "V3 the error line names tsm2_v3"

# V4: the report's section
"$R" --db $DB report --baseline $A:$S --out report >report.log 2>&1
rc=$?
check $((rc != 0 && rc != 11)) "V4 report --baseline $A:$S (exit $rc)"
[ "$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), sum(x['change'] == 'slower: regression' and x['kernel'] == 'tsm2_v3' for x in r))" report/csv/compare.csv)" = "$n $reg_v3" ]
check $? "V4 csv/compare.csv: $n rows, tsm2_v3's regressions"

[ $fail = 0 ] && echo "diff-gpu: all checks passed"
exit $fail
