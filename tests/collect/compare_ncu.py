#!/usr/bin/env python3
"""compare_ncu.py DB CAPTURE NCU_CSV - roofkit's counters beside Nsight Compute's, per launch.

Reads the measurements of capture CAPTURE from roofkit's database and an `ncu --csv
--print-units base --metrics ...` report of the same program (ncu's ID = launch order =
roofkit's launch_index). For every raw metric both have, prints per kernel name the largest
relative difference, and checks the targets of the collect issue: counts (DRAM bytes, L2 and
shared bytes, FLOP instruction counts) within 1 %, throughputs and occupancy within 3 %.
Derived aliases (flop_count_*) are rebuilt from ncu's raw counts. Exit status 1 if a target
fails. Used by device-check.sh.
"""
import csv
import sqlite3
import sys
from collections import defaultdict

COUNT_TOL, RATE_TOL = 0.01, 0.03
ABS_BYTES = 1 << 20  # differences below 1 MiB are reported apart (L2 residue of the kernel before)
FLOPS = {
    "flop_count_sp": ("fadd", "fmul", "ffma"),
    "flop_count_dp": ("dadd", "dmul", "dfma"),
    "flop_count_hp": ("hadd", "hmul", "hfma"),
}


def op(o):
    return "smsp__sass_thread_inst_executed_op_%s_pred_on.sum" % o


def tolerance(raw):
    if raw in ("gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second"):
        return None  # clock- and replay-dependent: reported, not a target
    if raw.endswith(".per_second") or ".pct" in raw or "pct_of_peak" in raw:
        return RATE_TOL
    return COUNT_TOL


def number(s):
    s = s.replace(",", "").strip()
    try:
        return float(s)
    except ValueError:
        return None


def main():
    db, capture, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    con = sqlite3.connect(db)
    ours = defaultdict(dict)  # launch_index -> name -> value
    names = {}
    for mid, idx, kernel in con.execute(
            "select id, launch_index, kernel from measurement where capture_id = ?", (capture,)):
        names[idx] = kernel
        for name, raw, value in con.execute(
                "select name, raw_name, value from metric where measurement_id = ?", (mid,)):
            ours[idx][raw if raw and "+" not in raw else name] = value
    theirs = defaultdict(dict)
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        v = number(row.get("Metric Value", ""))
        if v is not None:
            theirs[int(row["ID"])][row["Metric Name"]] = v
    for idx, m in theirs.items():
        for alias, ops in FLOPS.items():
            if all(op(o) in m for o in ops):
                m[alias] = m[op(ops[0])] + m[op(ops[1])] + 2 * m[op(ops[2])]

    print("launches: roofkit %d, ncu %d" % (len(names), len(theirs)))
    worst = defaultdict(lambda: (0.0, None, None, None))  # (kernel, metric) -> (rel, idx, a, b)
    compared = 0
    for idx in sorted(set(ours) & set(theirs)):
        kern = names[idx].split("(")[0]
        for metric, a in ours[idx].items():
            b = theirs[idx].get(metric)
            if a is None or b is None:
                continue
            compared += 1
            rel = abs(a - b) / abs(b) if b else (0.0 if a == 0 else float("inf"))
            if rel >= worst[(kern, metric)][0]:
                worst[(kern, metric)] = (rel, idx, a, b)
    failed = small = 0
    print("%-10s %-66s %10s %8s %s" % ("kernel", "metric", "max rel", "target", "at launch (roofkit / ncu)"))
    for (kern, metric), (rel, idx, a, b) in sorted(worst.items()):
        tol = tolerance(metric if metric not in FLOPS else op("ffma"))
        ok = tol is None or rel <= tol
        tiny = not ok and "bytes" in metric and abs(a - b) < ABS_BYTES
        failed += not ok
        small += tiny
        print("%-10s %-66s %9.3f%% %8s %s %d (%.6g / %.6g)" % (
            kern, metric, 100 * rel, "-" if tol is None else "%g%%" % (100 * tol),
            "ok  " if ok else ("FAIL(<1MiB)" if tiny else "FAIL"), idx, a, b))
    print("compared %d values; %d metric/kernel pairs outside their target (%d of them by less "
          "than 1 MiB)" % (compared, failed, small))
    return 1 if failed or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
