#!/bin/bash
# device-check.sh BUILD OUT - collect/'s checks on the H100, in one go (gpu.md: batch the device
# time). Needs a Release build of roofkit, roofkit-inject, test_collect_gpu and collect_prog100 in
# BUILD. Writes the full log, the database and ncu's reports under OUT; prints a short table last.
#
#   1 GPU tests: counters of kernels with known work (test_gpu_counters.cu), registers vs ptxas
#   2 gpu_prog100 (100 launches): plain, under roofkit profile (default set, application
#     replay), under ncu with the same raw metrics (default clock control, for the wall time;
#     --clock-control none --cache-control none, for the values); launch counts, checksums,
#     wall times; compare_ncu.py side by side; the same with --replay kernel
#   3 --kernel-name/--launch-skip/--launch-count; child processes; the batch re-arm variants
#     (filter-check.sh sets each filter against ncu's)
#   4 a golden counter data image for the CPU tests (tests/data/collect-golden-*)
#   5 PyTorch: kernels recorded vs torch.profiler's count; checksum with and without roofkit
set -u
B=$(cd "$1" && pwd)
OUT=$2
R=$B/cli/roofkit
P=$B/tests/collect/collect_prog100
HERE=$(cd "$(dirname "$0")" && pwd)
DB=$OUT/profile.db
LOG=$OUT/log.txt
export PYTHONUNBUFFERED=1
exec 3>&1 >"$LOG" 2>&1
T=() # summary lines

now() { date +%s.%N; }
secs() { python3 -c "print('%.2f' % ($2 - $1))"; }
say() { T+=("$*"); echo "== $*"; }
q() { python3 - "$DB" "$@" <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print(con.execute(sys.argv[2], sys.argv[3:]).fetchone()[0])
EOF
}
last_capture() { q "select max(id) from capture"; }

nvidia-smi -L; ncu --version | tail -1; python3 -c 'import torch; print("torch", torch.__version__)'

echo "### 1 GPU tests"
t0=$(now)
"$B/tests/collect/test_collect_gpu"; rc=$?
say "gpu tests (test_collect_gpu): rc=$rc in $(secs "$t0" "$(now)") s"
cuobjdump --dump-resource-usage "$B/tests/collect/test_collect_gpu" 2>&1 | grep -A1 -E "copy_k|smem_k" | head -8

echo "### 2 gpu_prog100"
RAW=$(python3 "$HERE/default_raw.py")
echo "default raw metrics: $RAW"
t0=$(now); "$P" >"$OUT/plain.txt"; t_plain=$(secs "$t0" "$(now)")
t0=$(now); "$R" --db "$DB" profile -- "$P" >"$OUT/rk.txt"; rc=$?; t_rk=$(secs "$t0" "$(now)")
cap=$(last_capture)
n=$(q "select count(*) from measurement where capture_id=?" "$cap")
nc=$(q "select count(distinct measurement_id) from metric join measurement m on m.id=measurement_id where m.capture_id=? and value is not null" "$cap")
say "prog100 under roofkit profile: rc=$rc, $n measurements ($nc with counters) of 100 launches, capture $cap: $(q "select note from capture where id=?" "$cap")"
cmp -s "$OUT/plain.txt" "$OUT/rk.txt" && same=same || same=DIFFERENT
say "prog100 output with and without roofkit: $same ($(cat "$OUT/rk.txt"))"
t0=$(now); ncu --metrics "$RAW" --csv --print-units base "$P" >"$OUT/ncu_default.csv" 2>&1; t_ncu=$(secs "$t0" "$(now)")
t0=$(now); ncu --clock-control none --cache-control none --metrics "$RAW" --csv --print-units base "$P" >"$OUT/ncu_cmp.csv" 2>&1; t_ncu2=$(secs "$t0" "$(now)")
nn=$(grep -c '"dram__bytes_read.sum"' "$OUT/ncu_cmp.csv")
say "wall time, 100 launches, default set: plain $t_plain s, roofkit $t_rk s, ncu $t_ncu s (ratio $(python3 -c "print('%.3f' % ($t_rk / $t_ncu))"), target <= 0.4), ncu --clock-control none --cache-control none $t_ncu2 s (ratio $(python3 -c "print('%.3f' % ($t_rk / $t_ncu2))")); ncu profiled $nn kernels"
say "where roofkit's time went: $(q "select note from capture where id=?" "$cap")"
say "registers of prog100's kernels (roofkit, ptxas): $(q "select group_concat(k || ' ' || r, ', ') from (select distinct substr(kernel, 1, instr(kernel, '(') - 1) k, registers r from measurement where capture_id=?)" "$cap"); $(cuobjdump --dump-resource-usage "$P" 2>&1 | grep -o 'Function [^:]*:\|REG:[0-9]*' | paste -sd' ')"
python3 "$HERE/compare_ncu.py" "$DB" "$cap" "$OUT/ncu_cmp.csv" | tee "$OUT/compare.txt"
say "side by side with ncu (--clock-control none --cache-control none): $(tail -1 "$OUT/compare.txt")"
t0=$(now); ncu --replay-mode application --clock-control none --cache-control none --metrics "$RAW" --csv --print-units base "$P" >"$OUT/ncu_app.csv" 2>&1; t_ncu3=$(secs "$t0" "$(now)")
python3 "$HERE/compare_ncu.py" "$DB" "$cap" "$OUT/ncu_app.csv" >"$OUT/compare_ncu_app.txt"
say "side by side with ncu --replay-mode application --clock-control none --cache-control none (the same runs as roofkit's: nothing restored, nothing flushed; $t_ncu3 s): $(tail -1 "$OUT/compare_ncu_app.txt")"
# the wall-time ratio again, twice each, alternating (the first pair is above)
ws_rk=$t_rk; ws_ncu=$t_ncu
for i in 1 2; do
    t0=$(now); "$R" --db "$OUT/wall.db" profile -- "$P" >/dev/null 2>&1; ws_rk="$ws_rk $(secs "$t0" "$(now)")"
    t0=$(now); ncu --metrics "$RAW" --csv --print-units base "$P" >/dev/null 2>&1; ws_ncu="$ws_ncu $(secs "$t0" "$(now)")"
done
rm -f "$OUT/wall.db"*
say "wall time, 3 runs each: roofkit [$ws_rk] s, ncu --metrics [$ws_ncu] s; ratio of medians $(python3 -c "import statistics as s, sys; a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]; print('%.3f (worst pair %.3f)' % (s.median(a) / s.median(b), max(a) / min(b)))" "$ws_rk" "$ws_ncu") (target <= 0.4)"
python3 "$HERE/compare_ncu.py" "$DB" "$cap" "$OUT/ncu_default.csv" >"$OUT/compare_ncu_defaults.txt"
say "side by side with ncu's defaults (clocks locked, caches flushed before each kernel): $(tail -1 "$OUT/compare_ncu_defaults.txt")"
t0=$(now); "$R" --db "$DB" profile --replay kernel -- "$P" >/dev/null; t_k=$(secs "$t0" "$(now)")
kcap=$(last_capture)
python3 "$HERE/compare_ncu.py" "$DB" "$kcap" "$OUT/ncu_cmp.csv" >"$OUT/compare_kernel_replay.txt"
say "--replay kernel: $t_k s (ratio to ncu $(python3 -c "print('%.3f' % ($t_k / $t_ncu))")); side by side with ncu: $(tail -1 "$OUT/compare_kernel_replay.txt"); $(q "select note from capture where id=?" "$kcap")"
echo "### 2b overhead variants"
variant() { # NAME ENV... -- ARGS
    local name=$1; shift
    t0=$(now); env "$@" >/dev/null; local t=$(secs "$t0" "$(now)")
    say "variant $name: $t s; $(q "select count(*) from measurement where capture_id=?" "$(last_capture)") launches; $(q "select note from capture where id=?" "$(last_capture)")"
}
variant "default, 4 launches" "$R" --db "$DB" profile -- "$P" 4
variant "1 hw metric (dram__bytes_read.sum)" "$R" --db "$DB" profile --metrics dram__bytes_read.sum -- "$P"
variant "1 sass metric (ffma)" "$R" --db "$DB" profile --metrics smsp__sass_thread_inst_executed_op_ffma_pred_on.sum -- "$P"
variant "default without Activity" ROOFKIT_NO_ACTIVITY=1 "$R" --db "$DB" profile -- "$P"
say "  without Activity: launches with grid and registers: $(q "select count(*) from measurement where capture_id=? and grid_x > 0 and registers > 0" "$(last_capture)")"
t0=$(now); "$R" --db "$DB" profile --metrics none -- "$P" >/dev/null; t_none=$(secs "$t0" "$(now)")
say "roofkit profile --metrics none: $t_none s, $(q "select count(*) from measurement where capture_id=? and time_median_ns > 0" "$(last_capture)") timed launches"

echo "### 3 filters, children, re-arm"
"$R" --db "$DB" profile --kernel-name 'regex:^triad' --launch-skip 5 --launch-count 10 -- "$P" >/dev/null
cap=$(last_capture)
say "--kernel-name regex:^triad --launch-skip 5 --launch-count 10: $(q "select count(*) || ' launches, ' || sum(kernel like 'triad%') || ' triad, ' || count(distinct launch_index) || ' indexes' from measurement where capture_id=?" "$cap"), $(q "select count(distinct measurement_id) from metric join measurement m on m.id=measurement_id where m.capture_id=? and value is not null" "$cap") with counters"
"$R" --db "$DB" profile --metrics none -- sh -c "'$P' 8 >/dev/null && '$P' 12 >/dev/null"
cap=$(last_capture)
say "child processes (8 + 12 launches, --metrics none): $(q "select count(*) || ' launches from ' || count(distinct json_extract(params, '\$.pid')) || ' processes' from measurement where capture_id=?" "$cap")"
"$R" --db "$DB" profile -- sh -c "'$P' 8 >/dev/null && '$P' 12 >/dev/null"
cap=$(last_capture)
say "child processes (8 + 12 launches, default set, application replay): $(q "select count(*) || ' launches from ' || count(distinct json_extract(params, '\$.pid')) || ' processes' from measurement where capture_id=?" "$cap"), $(q "select count(distinct measurement_id) from metric join measurement m on m.id=measurement_id where m.capture_id=? and value is not null and metric.name='flop_count_sp'" "$cap") with flop_count_sp, $(q "select count(distinct measurement_id) from metric join measurement m on m.id=measurement_id where m.capture_id=? and value is not null and metric.name='dram_read_bytes'" "$cap") with dram_read_bytes; $(q "select note from capture where id=?" "$cap")"
ROOFKIT_MAX_RANGES=8 "$R" --db "$DB" profile -- "$P" 40 >/dev/null
cap=$(last_capture)
say "re-arm with SetConfig, 8-range batches, 40 launches: $(q "select count(distinct measurement_id) from metric join measurement m on m.id=measurement_id where m.capture_id=? and value is not null" "$cap") with counters; $(q "select note from capture where id=?" "$cap")"
ROOFKIT_CUPTI_RESET=image ROOFKIT_MAX_RANGES=8 "$R" --db "$DB" profile -- "$P" 40 >/dev/null
cap=$(last_capture)
say "re-arm image only, 8-range batches, 40 launches: $(q "select count(distinct measurement_id) from metric join measurement m on m.id=measurement_id where m.capture_id=? and value is not null" "$cap") with counters; $(q "select note from capture where id=?" "$cap")"

echo "### 4 golden image"
mkdir -p "$OUT/dump"
ROOFKIT_DUMP_DIR=$OUT/dump ROOFKIT_MAX_RANGES=4 "$R" --db "$DB" profile --replay kernel --launch-count 4 \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum -- "$P" >/dev/null
img=$(ls "$OUT"/dump/*.bin 2>/dev/null | head -1)
[ -n "$img" ] && mv "$img" "$OUT/golden.bin"
rm -rf "$OUT/dump"
gcap=$(last_capture)
python3 - "$DB" "$gcap" "$OUT/ncu_cmp.csv" >"$OUT/golden.txt" <<'EOF'
# golden.txt: the values the device computed for the image, and ncu's for the same launches
import csv, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print("# device values (roofkit on the H100) for the ranges of golden.bin")
for idx, kernel, name, value in con.execute(
        "select launch_index, kernel, metric.name, value from measurement join metric on "
        "metric.measurement_id = measurement.id where capture_id = ? order by 1, 3", (int(sys.argv[2]),)):
    print("device %d %s %.17g  # %s" % (idx, name, value, kernel.split("(")[0]))
lines = [l for l in open(sys.argv[3]) if l.startswith('"')]
for row in csv.DictReader(lines):
    if int(row["ID"]) < 4 and row["Metric Name"] in ("dram__bytes_read.sum", "dram__bytes_write.sum",
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"):
        print("ncu %s %s %s" % (row["ID"], row["Metric Name"], row["Metric Value"].replace(",", "")))
EOF
say "golden image: $(stat -c %s "$OUT/golden.bin" 2>/dev/null || echo none) bytes"

echo "### 5 PyTorch"
S=$HERE/torch_small.py
t0=$(now); python3 "$S" >"$OUT/torch_plain.txt"; t_tp=$(secs "$t0" "$(now)")
python3 "$S" --count >"$OUT/torch_count.txt" 2>&1
want=$(awk '/^kernels/ {print $2}' "$OUT/torch_count.txt")
t0=$(now); "$R" --db "$DB" profile -- python3 "$S" >"$OUT/torch_rk.txt"; rc=$?; t_tr=$(secs "$t0" "$(now)")
cap=$(last_capture)
say "pytorch: rc=$rc, recorded $(q "select count(*) from measurement where capture_id=?" "$cap") kernels, torch.profiler counted ${want:-?}; $(q "select count(distinct measurement_id) from metric join measurement m on m.id=measurement_id where m.capture_id=? and value is not null" "$cap") with counters; $t_tp s plain, $t_tr s profiled; $(q "select note from capture where id=?" "$cap")"
cmp -s "$OUT/torch_plain.txt" "$OUT/torch_rk.txt" && same=same || same=DIFFERENT
say "pytorch output with and without roofkit: $same ($(cat "$OUT/torch_rk.txt"))"
cat "$OUT/torch_count.txt"
rm -f "$OUT"/torch_*.txt "$OUT"/plain.txt "$OUT"/rk.txt

python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('pragma wal_checkpoint(truncate)'); c.execute('pragma journal_mode=delete')" "$DB"
exec 1>&3
printf '%s\n' "${T[@]}"
