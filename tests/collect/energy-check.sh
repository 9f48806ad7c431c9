#!/bin/sh
# energy-check.sh ROOFKIT PROG WORKDIR - `roofkit profile --energy` on a GPU (ctest label gpu;
# exit 77, skipped, without a GPU or without a readable energy counter). PROG is gpu_prog100,
# run with 4000 launches on 1 GiB arrays (~3 s of kernels: triad, scale and inc each cover
# ~10 of the counter's ~100 ms windows, fma_loop too few). Checks, and prints the figures:
#   G1 one 'program' span, its power between 30 W and 800 W (idle and the H100's 700 W limit
#      with room for the counter's steps)
#   G2 'kernel' spans for triad, scale and inc, none for fma_loop (too short), 1000 launches
#      each, each power between 30 W and 800 W
#   G3 the kernels' energy at most the program's, and at least 40 % of it (the rest is idle
#      power over the time without kernels: CUDA's start, the host)
#   G4 --summary says energy_from 'kernel' for the three and 'too short' for fma_loop
#   G5 with counters (the default metrics) only the program's span is stored
#   G6 from the first kernel's start to the last one's end, the kernels (read and too short) got
#      at least 90 % of what the GPU drew (gpu_prog100 launches back to back: the gaps are small)
set -u
R=$1
P=$2
W=$3
rm -rf "$W" && mkdir -p "$W"
if ! "$P" 4 16 >/dev/null 2>&1; then
    echo "no usable GPU (gpu_prog100 4 16 failed): skipped"
    exit 77
fi
db=$W/e.db
if ! "$R" --db "$db" profile --energy --metrics none -- "$P" 4000 1024 >"$W/p1.txt" 2>&1; then
    echo "FAIL: profile --energy: $(tail -3 "$W/p1.txt")"
    exit 1
fi
if grep -q "no energy reading" "$W/p1.txt"; then
    echo "$(grep "no energy reading" "$W/p1.txt"): skipped"
    exit 77
fi
"$R" --db "$db" profile --summary --format csv >"$W/summary.csv" 2>"$W/summary.err"
"$R" --db "$db" profile --energy -- "$P" 100 1024 >"$W/p2.txt" 2>&1
python3 - "$db" "$W/summary.csv" "$W/p1.txt" <<'PY'
import csv, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
fails = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)
sp = c.execute("select scope, name, energy_j, time_ns, power_w, launches from energy_span "
               "where capture_id = 1").fetchall()
prog = [s for s in sp if s[0] == "program"]
kern = {s[1].split("(")[0]: s for s in sp if s[0] == "kernel"}
check(len(prog) == 1 and 30 < prog[0][4] < 800,
      "G1 program: %s" % (["%.1f J over %.3f s, %.1f W" % (s[2], s[3] * 1e-9, s[4]) for s in prog]))
for k in ("triad", "scale", "inc"):
    s = kern.get(k)
    check(s is not None and s[5] == 1000 and 30 < s[4] < 800,
          "G2 %s: %s" % (k, "%.1f J, %.1f W, %d launches" % (s[2], s[4], s[5]) if s else "none"))
check("fma_loop" not in kern, "G2 fma_loop too short: not stored")
kj = sum(s[2] for s in kern.values())
pj = prog[0][2] if prog else 0
check(0.4 * pj <= kj <= pj, "G3 kernels %.1f J of the program's %.1f J (%.0f %%)"
      % (kj, pj, 100 * kj / pj if pj else 0))
rows = {r["kernel"].split("(")[0]: r for r in csv.DictReader(open(sys.argv[2]))}
check(all(rows.get(k, {}).get("energy_from") == "kernel" for k in ("triad", "scale", "inc"))
      and rows.get("fma_loop", {}).get("energy_from") == "too short",
      "G4 summary energy_from: %s" % {k: r.get("energy_from") for k, r in rows.items()})
sp2 = c.execute("select scope from energy_span where capture_id = 2").fetchall()
check(sp2 == [("program",)], "G5 with counters: %s" % sp2)
import re
m = re.search(r"the kernels got [0-9.e+]+ J of it \(([0-9.]+) %\)", open(sys.argv[3]).read())
check(m is not None and float(m.group(1)) >= 90,
      "G6 kernels' share of the GPU's energy while they ran: %s %%" % (m.group(1) if m else None))
sys.exit(1 if fails else 0)
PY
