#!/bin/bash
# replay-mode-cost.sh BUILD - does the range profiler cost less per launch in CUPTI_UserReplay
# (AutoRange, one pass per Start..Stop, nothing replayed) than in CUPTI_KernelReplay, for a
# one-pass set? gpu_prog100, 100 launches; the hardware group of the default set, then the
# SASS group; time in the launch calls and the values of the first launches of each kernel
# (4 per kernel and metric: 2 launches under kernel replay, then 2 under roofkit's choice).
# "kernel" sets ROOFKIT_CUPTI_REPLAY=kernel; "auto" is roofkit's choice (user replay for a
# one-pass set without SASS metrics). On an H100: the hardware group 4.28 s -> 0.13 s,
# the same values; SASS metrics read 0 under user replay, so they keep kernel replay.
set -u
B=$(cd "$1" && pwd)
R=$B/cli/roofkit; P=$B/tests/collect/collect_prog100; DB=$(mktemp -d)/mode.db
HW=sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp64.sum,gpu__time_duration.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second
SASS=smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct
q() { python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchall(); print('\n'.join(' '.join(str(x) for x in t) for t in r))" "$DB" "$1"; }
for set in HW SASS; do
    for mode in kernel auto kernel auto; do
        t0=$(date +%s.%N)
        ROOFKIT_CUPTI_REPLAY=$([ $mode = kernel ] && echo kernel) "$R" --db "$DB" profile --metrics "${!set}" -- "$P" >/dev/null 2>&1
        t1=$(date +%s.%N)
        echo "$set $mode: wall $(python3 -c "print('%.2f' % ($t1 - $t0))") s; $(q "select note from capture order by id desc limit 1" | grep -o 'time: [0-9.]* s in launch calls'); $(q "select count(distinct measurement_id) from metric join measurement m on m.id = measurement_id where m.capture_id = (select max(id) from capture) and value is not null") with values"
    done
    q "select substr(m.kernel, 1, 8), x.name, group_concat(printf('%.6g', x.value), ' ') from measurement m join metric x on x.measurement_id = m.id where m.launch_index < 8 and m.capture_id in ((select max(id) from capture), (select max(id) - 1 from capture)) group by 1, 2 order by 1, 2"
done
