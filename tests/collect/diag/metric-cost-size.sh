#!/bin/bash
# metric-cost-size.sh BUILD - does a metric's cost under `roofkit profile` grow with the
# program's device memory (a save/restore) or not? gpu_prog100 with 256 and 16 MiB arrays.
set -u
B=$(cd "$1" && pwd)
R=$B/cli/roofkit; P=$B/tests/collect/collect_prog100; DB=$(mktemp -d)/cost.db
one() { # LABEL MIB METRICS [roofkit options...]
    local label=$1 mib=$2 m=$3; shift 3
    local t0=$(date +%s.%N)
    "$R" --db "$DB" profile "$@" --metrics "$m" -- "$P" 100 "$mib" >/dev/null 2>&1
    local t1=$(date +%s.%N)
    local note=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select note from capture order by id desc limit 1').fetchone()[0])" "$DB")
    printf '%-58s %4s MiB wall %6.2f s; %s\n' "$label" "$mib" "$(python3 -c "print($t1 - $t0)")" "$(echo "$note" | grep -o 'time: [0-9.]* s in launch calls')"
}
for mib in 256 16; do
    one "plain timing" $mib none
    one "l1tex ld bytes .per_second" $mib l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second
    one "l1tex ld bytes .sum" $mib l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum
    one "tensor fp16 hgmma ops" $mib sm__ops_path_tensor_op_hgmma_src_fp16.sum
    one "dram read" $mib dram__bytes_read.sum
    one "sm__warps_active" $mib sm__warps_active.avg.pct_of_peak_sustained_active
    one "gpu__time_duration" $mib gpu__time_duration.sum
    one "default set, application replay" $mib default
    one "default set, kernel replay" $mib default --replay kernel
done
