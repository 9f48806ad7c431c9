#!/bin/bash
# multi-gpu.sh ROOFKIT PROG WORK - roofkit on every GPU of a node and under mpirun (label gpu;
# needs two GPUs, skipped with 77 otherwise). PROG: collect_prog100, which takes the GPU of its
# local rank under mpirun. Prints its figures (times, ratios) and checks:
#   G1 `list gpus` lists every GPU with a UUID and PCI bus id
#   G2 `probe --device all`: one probe capture per GPU with gpus_concurrent = n - 1, each GPU's
#      ceilings stored; then one capture per source GPU holding every peer ceiling of each
#      ordered pair (peer_device_id the other GPU); the time against `probe --device 0` alone
#      is printed (the target is at most 1.2x), and each GPU's bandwidth and FMA ceilings
#      against that lone probe's
#   G3 `--serial`: gpus_concurrent = 0; output lines carry their GPU
#   G6 `roofkit --device all all`: the suite on each GPU at once, the pairs, then one model and
#      one report covering both GPUs
#   G4 `mpirun -np 2 roofkit --db 'job-%h-%r.db' all`: two databases named by host and rank,
#      each capture with its rank, local rank, world size 2 and the GPU of its local rank;
#      `roofkit merge` makes one database with both GPUs; `roofkit report` on it names both
#   G5 `mpirun -np 2 roofkit --db 'p-%r.db' profile -- PROG`: each rank's launches name the GPU
#      of its rank; `profile --device 1` makes PROG see GPU 1 alone
set -u
R=$1
PROG=$2
W=$3
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
now() { date +%s.%N; }
secs() { python3 -c "print('%.1f' % ($2 - $1))"; }

n=$("$R" list gpus 2>/dev/null | tail -n +2 | wc -l)
if [ "$n" -lt 2 ]; then
    echo "multi-gpu: $n GPU(s) here, two needed: skipped"
    exit 77
fi
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# G1
"$R" list gpus | tee gpus.txt
[ "$(grep -c 'GPU-' gpus.txt)" = "$n" ]
check $? "G1 list gpus lists $n GPUs with UUIDs"

# G2
"$R" --db one.db --device 1 probe >one1.log 2>&1
check $? "G2 probe --device 1 alone"
t0=$(now)
"$R" --db one.db --device 0 probe >one.log 2>&1
check $? "G2 probe --device 0 alone"
t1=$(now)
"$R" --db all.db --device all probe >all.log 2>&1
check $? "G2 probe --device all"
t2=$(now)
grep -q "^\[gpu 1\] " all.log
check $? "G2 output lines carry their GPU"
one=$(secs "$t0" "$t1")
all=$(secs "$t1" "$t2")
per_gpu=$(grep -o 'probe on [0-9]* GPUs took [0-9.]* s' all.log | grep -o '[0-9.]* s$')
echo "figure: probe --device 0 alone ${one} s; --device all on $n GPUs ${all} s (per-GPU part ${per_gpu}, the rest the $((n * (n - 1))) pairs)"
caps=$(q all.db "SELECT count(*) FROM capture WHERE kind='probe' AND gpus_concurrent=$((n - 1)) AND (SELECT count(*) FROM ceiling WHERE capture_id=capture.id AND peer_device_id IS NULL) > 20")
[ "$caps" = "$n" ]
check $? "G2 $n probe captures with gpus_concurrent $((n - 1)) and their ceilings ($caps)"
pairs=$(q all.db "SELECT count(DISTINCT k.device_id || '-' || c.peer_device_id) FROM ceiling c JOIN capture k ON k.id=c.capture_id WHERE c.peer_device_id IS NOT NULL AND c.peer_device_id != k.device_id")
[ "$pairs" = "$((n * (n - 1)))" ]
check $? "G2 peer ceilings for every ordered pair ($pairs)"
q all.db "SELECT d.uuid, c.name, round(c.value, 1), c.unit, json_extract(c.params, '\$.memcpy_peer_gbs') FROM ceiling c JOIN capture k ON k.id=c.capture_id JOIN device d ON d.id=k.device_id WHERE c.peer_device_id IS NOT NULL ORDER BY c.id" | sed 's/^/figure: peer /'
# each GPU's ceilings beside the lone probe of that GPU (same names)
python3 - all.db one.db <<'PY'
import sqlite3, sys
def ceil(db):
    c = sqlite3.connect(db)
    return {(u, n): v for u, n, v in c.execute(
        "SELECT d.uuid, c.name, c.value FROM ceiling c JOIN capture k ON k.id = c.capture_id"
        " JOIN device d ON d.id = k.device_id WHERE c.peer_device_id IS NULL")}
a, o = ceil(sys.argv[1]), ceil(sys.argv[2])
worst = []
for key in sorted(a):
    if key in o and o[key]:
        d = 100.0 * (a[key] / o[key] - 1)
        worst.append((abs(d), d, key))
        print("figure: at once vs alone %-44s %-22s %10.2f %10.2f %+6.2f %%" % (key[0], key[1], a[key], o[key], d))
worst.sort(reverse=True)
print("figure: %d ceilings compared; within 2 %%: %d; largest differences: %s" % (
    len(worst), sum(1 for w in worst if w[0] <= 2.0),
    "; ".join("%s %s %+.2f %%" % (w[2][0][:12], w[2][1], w[1]) for w in worst[:6])))
PY

# G3
"$R" --db serial.db --device 0,1 --serial probe --only launch >serial.log 2>&1
check $? "G3 --serial probe"
[ "$(q serial.db "SELECT count(*) FROM capture WHERE gpus_concurrent=0 AND kind='probe'")" -ge 2 ]
check $? "G3 --serial captures have gpus_concurrent 0"

# G6
t0=$(now)
"$R" --db node.db --device all all --out node-report >node.log 2>&1
rc=$?
echo "figure: roofkit --device all all: $(secs "$t0" "$(now)") s, rc $rc"
[ "$rc" = 0 ] || [ "$rc" = 11 ]
check $? "G6 --device all all (rc $rc)"
[ "$(q node.db "SELECT count(DISTINCT k.device_id) FROM measurement m JOIN capture k ON k.id=m.capture_id WHERE k.kind='run'")" = 2 ] &&
    [ "$(q node.db "SELECT count(*) FROM measurement m WHERE NOT EXISTS (SELECT 1 FROM prediction p WHERE p.measurement_id=m.id AND p.predicted_time_ns IS NOT NULL)")" = 0 ] &&
    [ "$(q node.db "SELECT count(*) FROM ceiling WHERE peer_device_id IS NOT NULL")" = 12 ]
check $? "G6 suites on both GPUs, every measurement predicted, 12 pair ceilings"
grep -q "Ceilings across GPUs" node-report/index.html
check $? "G6 the report sets the two GPUs side by side"

# G4
if command -v mpirun >/dev/null; then
    t0=$(now)
    mpirun -np 2 "$R" --db 'job-%h-%r.db' all --out 'rep-%r' >mpi-all.log 2>&1
    rc=$?
    echo "figure: mpirun -np 2 roofkit all: $(secs "$t0" "$(now)") s, rc $rc"
    [ "$rc" = 0 ] || [ "$rc" = 11 ] # 11: no gnuplot on the machine; the tables are written
    check $? "G4 mpirun -np 2 roofkit all (rc $rc)"
    h=$(hostname)
    for r in 0 1; do
        got=$(q "job-$h-$r.db" "SELECT DISTINCT k.rank || ',' || k.local_rank || ',' || k.world_size || ',' || k.host FROM capture k WHERE k.kind IN ('probe','run')")
        [ "$got" = "$r,$r,2,$h" ]
        check $? "G4 job-$h-$r.db: captures of rank $r on $h ($got)"
    done
    u0=$(q "job-$h-0.db" "SELECT DISTINCT d.uuid FROM capture k JOIN device d ON d.id=k.device_id WHERE k.kind='probe'")
    u1=$(q "job-$h-1.db" "SELECT DISTINCT d.uuid FROM capture k JOIN device d ON d.id=k.device_id WHERE k.kind='probe'")
    [ -n "$u0" ] && [ -n "$u1" ] && [ "$u0" != "$u1" ]
    check $? "G4 rank 0 on $u0, rank 1 on $u1"
    "$R" merge job.db "job-$h-0.db" "job-$h-1.db" >merge.log 2>&1
    check $? "G4 merge"
    "$R" merge job.db "job-$h-0.db" >>merge.log 2>&1
    [ "$(q job.db "SELECT count(*) FROM device")" = 2 ] &&
        [ "$(q job.db "SELECT count(*) FROM capture")" = "$(($(q "job-$h-0.db" "SELECT count(*) FROM capture") + $(q "job-$h-1.db" "SELECT count(*) FROM capture")))" ]
    check $? "G4 merged: 2 devices, every capture once (after merging rank 0 twice)"
    "$R" --db job.db report --out job-report >report.log 2>&1
    rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 11 ]
    check $? "G4 report of the merged database (rc $rc)"
    grep -q "${u0:0:12}" job-report/index.html && grep -q "${u1:0:12}" job-report/index.html
    check $? "G4 the report names both GPUs"

    # G5
    mpirun -np 2 "$R" --db 'p-%r.db' profile --metrics none -- "$PROG" 40 64 >mpi-prof.log 2>&1
    check $? "G5 mpirun -np 2 roofkit profile"
    p0=$(q p-0.db "SELECT DISTINCT d.uuid FROM measurement m JOIN device d ON d.id = coalesce(m.device_id, (SELECT device_id FROM capture WHERE id = m.capture_id))")
    p1=$(q p-1.db "SELECT DISTINCT d.uuid FROM measurement m JOIN device d ON d.id = coalesce(m.device_id, (SELECT device_id FROM capture WHERE id = m.capture_id))")
    [ "$p0" = "$u0" ] && [ "$p1" = "$u1" ]
    check $? "G5 rank 0's launches on $p0, rank 1's on $p1"
    [ "$(q p-1.db "SELECT count(*) || ',' || max(k.rank) FROM measurement m JOIN capture k ON k.id=m.capture_id")" = "40,1" ]
    check $? "G5 rank 1 stored its 40 launches in a capture of rank 1"
else
    echo "FAIL: no mpirun on this machine"
    fail=1
fi
"$R" --db dev1.db --device 1 profile --metrics none -- "$PROG" 8 64 >dev1.log 2>&1
check $? "G5 profile --device 1"
g1=$("$R" list gpus | awk '$1 == 1 {print $2}')
# (an empty g1, list gpus read wrong, would equal an empty answer: it must name a GPU)
[ -n "$g1" ] &&
    [ "$(q dev1.db "SELECT DISTINCT d.uuid FROM capture k JOIN device d ON d.id=k.device_id WHERE k.kind='profile'")" = "$g1" ]
check $? "G5 profile --device 1: the launches ran on $g1"
exit $fail
