#!/bin/bash
# record.sh BUILD OUT [SUITES] - records the example database on a GPU machine, the
# way examples/h100.sql was made (README.md here): the ceilings, the suites, and a
# PyTorch program profiled with counters, into OUT/h100.db, with a timing log.
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
step "profile torch" "$R" --db "$DB" profile -- python3 "$HERE/../tests/collect/torch_small.py"
step "list captures" "$R" --db "$DB" list captures
exit $status
