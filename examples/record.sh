#!/bin/bash
# record.sh BUILD OUT [SUITES] - records the example database on a GPU machine, the
# way examples/h100.sql was made (README.md here): the ceilings, the suites, and a
# PyTorch program (tests/collect/torch_mix.py) profiled with counters, into OUT/h100.db,
# with a timing log.
# Predictions are added afterwards on any machine (`roofkit model`), then
# make-sql.sh turns the database into the SQL text kept in git.
set -u
B=$(cd "$1" && pwd)
OUT=$2
SUITES=${3:-default tsm2 ism2 seeds}
R=$B/cli/roofkit
DB=$OUT/h100.db
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONUNBUFFERED=1
status=0

step() { # step NAME COMMAND... : runs it, prints its wall time and exit code
    local name=$1 t0 t1 rc
    shift
    t0=$(date +%s.%N)
    "$@"
    rc=$?
    t1=$(date +%s.%N)
    printf '== %s: rc=%d in %s s\n' "$name" "$rc" "$(python3 -c "print('%.1f' % ($t1 - $t0))")"
    [ "$rc" = 0 ] || status=1
}

nvidia-smi -L
step probe "$R" --db "$DB" probe
for s in $SUITES; do
    step "run --suite $s" "$R" --db "$DB" run --suite "$s"
done
# a PyTorch program of every matmul precision (cuBLAS and cuBLASLt calls), cuDNN convolutions,
# norms, softmax, elementwise and reductions, with the mma.sync tensor paths besides the default
# set (cutlass_80 kernels such as PyTorch's int8 matmul run on them)
step "profile torch_mix" "$R" --db "$DB" profile \
    --metrics default,tensor_ops_fp16_mma,tensor_ops_bf16_mma,tensor_ops_tf32_mma,tensor_ops_int8_mma \
    -- python3 "$HERE/../tests/collect/torch_mix.py"
step "list captures" "$R" --db "$DB" list captures
exit $status
