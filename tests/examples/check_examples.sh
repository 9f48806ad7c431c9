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
#      numbers to the database (read back through `roofkit export`)
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
echo "examples: E1-E5 passed ($(count "select count(*) from measurement") measurements, $(count "select count(*) from prediction") predictions)"
