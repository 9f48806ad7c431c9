#!/bin/sh
# check_examples.sh ROOFKIT SQL WORK CHECK_REPORT - the example database, end to end:
#   E1 it loads with sqlite3 (`sqlite3 x.db < examples/h100.sql`; python3's sqlite3 module
#      here) and roofkit opens it: devices, captures listed
#   E2 it holds what the example promises: a probe capture with ceilings and latency
#      points, suite measurements, profiled kernels with counters, predictions
#   E3 `roofkit model --check` recomputes every stored prediction from the stored
#      ceilings and measurements and finds them equal
#   E4 `roofkit all` with no GPU (CUDA_VISIBLE_DEVICES empty) makes the report from
#      the example, says so, labels every page, and leaves ./roofkit.db alone
#   E5 check_report.py: the report's tables have one row per measurement and equal
#      numbers to the database (read back through `roofkit export`); so does its overview
#      (each device's roofline before the first table, every point titled, the kernels that
#      take the most time); a selection the database does not hold is refused
#   E6 every profiled measurement has, for every model but tsm2 (which applies to TSM2/ISM2
#      kernels only), a stored prediction or a stored reason; its capture names its GPU;
#      the counter models predict at least one profiled kernel
#   E7 no roofline point lies more than 5 % above its own roof: the report's "% of roof"
#      (flops and bytes of one source, under the roof of the pipe the flops ran on) <= 105;
#      no table shows a DRAM bandwidth more than 5 % above the DRAM ceiling (bw_dram_read)
set -u
roofkit=$1
sql=$2
work=$3
check_report=$4
fail() { echo "FAIL: $*"; exit 1; }

[ -s "$sql" ] || fail "no example database at $sql"
rm -rf "$work" && mkdir -p "$work" || exit 1
db=$work/h100.db

# E1
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(open(sys.argv[2]).read()); c.commit()" \
    "$db" "$sql" || fail "E1: the SQL text does not load"
"$roofkit" --db "$db" list devices >"$work/devices.txt" 2>&1 || fail "E1: roofkit cannot read it: $(cat "$work/devices.txt")"
grep -q "H100" "$work/devices.txt" || fail "E1: no H100 among the devices"

# E2
count() { python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$db" "$1"; }
for q in "select count(*) from capture where kind='probe' and status='done'" \
         "select count(*) from ceiling" \
         "select count(*) from latency_point" \
         "select count(*) from measurement where source='suite' and verified=1" \
         "select count(*) from measurement where source='profile'" \
         "select count(*) from metric" \
         "select count(*) from prediction"; do
    n=$(count "$q") || fail "E2: query failed: $q"
    [ "$n" -gt 0 ] || fail "E2: the example holds none of: $q"
done
bad=$(count "select count(*) from measurement where verified=0")
[ "$bad" = 0 ] || fail "E2: $bad measurements failed verification"

# E3
"$roofkit" --db "$db" model --check >"$work/model-check.txt" 2>&1 ||
    fail "E3: model --check: $(tail -3 "$work/model-check.txt")"

# E4
mkdir -p "$work/all" && (
    cd "$work/all" &&
        CUDA_VISIBLE_DEVICES= ROOFKIT_EXAMPLE="$sql" "$roofkit" all --out report >out.txt 2>err.txt
) || fail "E4: roofkit all exited $?: $(cat "$work/all/err.txt")"
grep -q "no usable CUDA GPU here" "$work/all/err.txt" || fail "E4: roofkit all did not say there is no GPU"
grep -q "Example data recorded by roofkit on NVIDIA H100" "$work/all/report/index.html" ||
    fail "E4: index.html is not labelled as example data"
grep -q "Example data recorded by roofkit on NVIDIA H100" "$work/all/report/report.md" ||
    fail "E4: report.md is not labelled as example data"
grep -q 'Database `examples/h100.sql`' "$work/all/report/report.md" ||
    fail "E4: report.md does not name examples/h100.sql as its source"
[ ! -e "$work/all/roofkit.db" ] || fail "E4: roofkit all created ./roofkit.db without a GPU"

# E5
python3 "$check_report" "$roofkit" "$db" "$work/report" || fail "E5: check_report.py"
# E6
for model in roofline hierarchical roofline_counters occupancy issue issue_counters overlap; do
    n=$(count "select count(*) from measurement m where m.source='profile' and not exists
               (select 1 from prediction p where p.measurement_id = m.id and p.model = '$model'
                and (p.predicted_time_ns is not null or json_extract(p.details, '$.skipped')
                     is not null))") || fail "E6: query failed"
    [ "$n" = 0 ] || fail "E6: $n profiled measurements have neither a $model prediction nor a reason"
done
n=$(count "select count(*) from capture where kind='profile' and device_id is null")
[ "$n" = 0 ] || fail "E6: $n profile captures name no device"
n=$(count "select count(*) from prediction p join measurement m on m.id = p.measurement_id
           where m.source='profile' and p.model='overlap' and p.predicted_time_ns > 0")
[ "$n" -gt 0 ] || fail "E6: no profiled kernel has an overlap prediction"

# E7
"$roofkit" --db "$db" report --format csv --out "$work/csv" >/dev/null 2>&1 || fail "E7: report --format csv"
dram=$(count "select value * (case unit when 'TB/s' then 1000 else 1 end) from ceiling where name='bw_dram_read' order by id desc limit 1")
python3 - "$work/csv/csv" "$dram" <<'PY' || fail "E7: a roofline point lies above its roof, or a bandwidth above the DRAM ceiling"
import csv, glob, sys
n = nbw = bad = 0
dram = float(sys.argv[2])  # GB/s
for f in glob.glob(sys.argv[1] + "/measurements-*.csv"):
    for r in csv.DictReader(open(f)):
        if r["% of roof"]:
            n += 1
            if float(r["% of roof"]) > 105.0:
                bad += 1
                print("E7: %s %s %s at %s %% of its roof" % (r["id"], r["kernel"][:60],
                                                       r["precision"], r["% of roof"]))
        if r["GB/s"]:
            nbw += 1
        if r["GB/s"] and float(r["GB/s"]) > 1.05 * dram:
            bad += 1
            print("E7: %s %s %s shows %s GB/s, above the DRAM ceiling %.0f GB/s" %
                  (r["id"], r["kernel"][:60], r["precision"], r["GB/s"], dram))
sys.exit(1 if bad or n == 0 or nbw == 0 else 0)
PY

echo "examples: E1-E7 passed ($(count "select count(*) from measurement") measurements, $(count "select count(*) from prediction") predictions)"
