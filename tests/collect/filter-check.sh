#!/bin/bash
# filter-check.sh BUILD OUT - `roofkit profile`'s kernel filters against Nsight Compute's on the
# same program, on a GPU with ncu (not a ctest: the lead runs it with the other device checks).
# gpu_prog100 launches triad, fma_loop, scale and inc in turn, 25 times each; for every filter
# the launches roofkit records and the kernels ncu profiles must both be the expected count,
# given the very same arguments. Then PyTorch's templated kernels (the function name without
# namespaces and template arguments), and the per-kernel table after a run and with --summary
# once `roofkit model` has judged the launches. Prints OK/FAIL lines; exit 1 on a FAIL.
set -u
B=$(cd "$1" && pwd)
OUT=$2
mkdir -p "$OUT"
R=$B/cli/roofkit
P=$B/tests/collect/collect_prog100
DB=$OUT/filter.db
rm -f "$DB" "$DB-wal" "$DB-shm"
fail=0

last() { sqlite3 "$DB" "select count(*) from measurement where capture_id=(select max(id) from capture)"; }
count_rk() { "$R" --db "$DB" --quiet profile --metrics none "$@" >"$OUT/rk.out" 2>"$OUT/rk.err" && last; }
count_ncu() { # ncu takes the program after its options, without roofkit's "--"
    local a=()
    for x in "$@"; do [ "$x" = "--" ] || a+=("$x"); done
    ncu --metrics gpu__time_duration.sum --csv "${a[@]}" 2>/dev/null | grep -c '"gpu__time_duration.sum"'
}
# check EXPECTED FILTER-ARGS... -- PROGRAM...: the same filter arguments for both tools
check() {
    local want=$1
    shift
    local a b
    a=$(count_rk "$@")
    b=$(count_ncu "$@")
    if [ "$a" = "$want" ] && [ "$b" = "$want" ]; then
        echo "OK    roofkit $a, ncu $b: $*"
    else
        echo "FAIL  roofkit $a, ncu $b, expected $want: $*"
        sed 's/^/      roofkit: /' "$OUT/rk.err" | head -3
        fail=1
    fi
}

echo "### gpu_prog100: 25 launches each of triad, fma_loop, scale, inc"
check 25 -k triad -- "$P"
check 0 -k tria -- "$P"
check 50 -k 'regex:^(scale|inc)$' -- "$P"
check 75 -k regex:a -- "$P"
check 25 --kernel-name-base mangled -k _Z5triadPdPKdS1_dm -- "$P"
# an exact demangled name is the demangler's spelling: libstdc++'s "double const*" here, ncu's
# own "const double *" (ncu 2025.3); a regex on the demangled base matches both
check 25 --kernel-name-base demangled -k 'regex:^triad\(double' -- "$P"
check 0 --kernel-name-base demangled -k triad -- "$P"
check 1 --kernel-id ::triad:3 -- "$P"
check 4 --kernel-id :::3 -- "$P"
check 8 --kernel-id '::regex:^(scale|inc)$:.*5|3' -- "$P"
check 10 -k triad -s 5 -c 10 -- "$P"
check 3 --kernel-id ':::1|2' -c 3 -- "$P"
check 3 -k regex:a -s 1 -c 3 -- "$P"

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    echo "### PyTorch: templated kernels in namespaces"
    T=(python3 -c 'import torch; x = torch.ones(1 << 20, device="cuda"); y = (x + 1) * 2; torch.cuda.synchronize()')
    for f in vectorized_elementwise_kernel regex:elementwise; do
        n=$(count_ncu -k "$f" -- "${T[@]}") # ncu's count is the expected one (3 or more)
        [ "${n:-0}" -ge 3 ] || echo "FAIL  ncu -k $f profiled ${n:-0} kernels, expected 3 or more"
        check "$n" -k "$f" -- "${T[@]}"
    done
    sqlite3 "$DB" "select distinct kernel from measurement where capture_id=(select max(id) from capture)" | head -5
fi

echo "### the per-kernel table"
"$R" --db "$DB" profile -- "$P" >"$OUT/table.txt"
cat "$OUT/table.txt"
"$R" --db "$DB" profile --summary --format json >"$OUT/table.json"
python3 - "$OUT/table.json" <<'EOF' || fail=1
import json, sys
def no(c):
    raise ValueError(c)
rows = json.load(open(sys.argv[1]), parse_constant=no)
ok = len(rows) == 4 and all(r["launches"] == 25 for r in rows) and \
    abs(sum(r["time_pct"] for r in rows) - 100) < 1e-9
print("OK   " if ok else "FAIL ", "4 kernels of 25 launches, shares summing to 100 %:",
      [(r["kernel"][:20], r["launches"], round(r["time_pct"], 1)) for r in rows])
sys.exit(0 if ok else 1)
EOF
"$R" --db "$DB" probe --quick >/dev/null 2>&1 && "$R" --db "$DB" model >/dev/null 2>&1
"$R" --db "$DB" profile --summary
echo "(% of roof and bound must now be filled for the kernels with flop and DRAM counters)"
exit $fail
