#!/bin/bash
# metric-cost-sets.sh BUILD - the time CUPTI's range profiler adds inside the launch calls of
# gpu_prog100 (100 launches, one pass, --replay kernel) for single metrics and for sets: which
# counters cost ~20 ms a launch, and whether their cost is shared. Diagnostic for
# docs/perf-notes.md ("collect"), H100. With arguments LABEL=METRICS..., measures those sets
# only (the names below are set first, so "hw=$CHEAP,$LTS" works when quoted).
set -u
B=$(cd "$1" && pwd)
R=$B/cli/roofkit; P=$B/tests/collect/collect_prog100; DB=$(mktemp -d)/cost.db
one() { # LABEL METRICS
    local t0=$(date +%s.%N)
    "$R" --db "$DB" profile --replay kernel --metrics "$2" -- "$P" 100 16 >/dev/null 2>&1
    local t1=$(date +%s.%N)
    local note=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select note from capture order by id desc limit 1').fetchone()[0])" "$DB")
    printf '%-44s wall %6.2f s; %s; %s\n' "$1" "$(python3 -c "print($t1 - $t0)")" "$(echo "$note" | grep -o 'time: [0-9.]* s in launch calls')" "$(echo "$note" | grep -o '[0-9]* replay pass[a-z]* each')"
}
L1B=l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second
F16=sm__ops_path_tensor_op_hgmma_src_fp16.sum
F8=sm__ops_path_tensor_src_fp8.sum
LTS=lts__t_bytes.sum
DR=dram__bytes_read.sum; DW=dram__bytes_write.sum
CYC=sm__cycles_elapsed.avg.per_second
CHEAP=sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp64.sum,gpu__time_duration.sum
if [ $# -gt 0 ]; then
    for a in "$@"; do one "${a%%=*}" "$(eval echo "${a#*=}")"; done
    exit 0
fi
one "l1tex sectors ld" l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
one "l1tex requests ld" l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
one "smsp inst global ld" smsp__inst_executed_op_global_ld.sum
one "xbar2l1tex read bytes" l1tex__m_xbar2l1tex_read_bytes.sum
one "lts sectors" lts__t_sectors.sum
one "lts sectors srcunit tex" lts__t_sectors_srcunit_tex.sum
one "dram sectors read" dram__sectors_read.sum
one "sm cycles elapsed avg" sm__cycles_elapsed.avg
one "sm cycles elapsed max" sm__cycles_elapsed.max
one "gpc cycles elapsed max" gpc__cycles_elapsed.max
one "inst tensor hmma" sm__inst_executed_pipe_tensor_op_hmma.sum
one "cheap five" $CHEAP
one "cheap five + l1tex bytes/s" $CHEAP,$L1B
one "cheap five + fp16 hgmma" $CHEAP,$F16
one "cheap five + dram r+w" $CHEAP,$DR,$DW
one "l1tex bytes/s + fp16 + fp8" $L1B,$F16,$F8
one "dram r+w + lts" $DR,$DW,$LTS
one "hw default minus fp16, fp8" $CHEAP,$L1B,$LTS,$DR,$DW,$CYC
one "hw default minus l1tex, fp16, fp8" $CHEAP,$LTS,$DR,$DW,$CYC
one "hw default minus l1tex, fp16, fp8, cyc/s" $CHEAP,$LTS,$DR,$DW
one "hw default" $CHEAP,$L1B,$F16,$F8,$LTS,$DR,$DW,$CYC
