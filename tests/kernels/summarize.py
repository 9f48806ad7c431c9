#!/usr/bin/env python3
"""summarize.py - tables of kbench output (tests/kernels/kbench.c) against the kernel
suite's targets: best configuration per kernel and shape, ratios against
cuBLAS in the same run, geometric means, effective bandwidth against the copy
ceiling. Reads kbench logs given as arguments (or stdin); prints Markdown tables.

  summarize.py [--best] [--copy GBPS] [--db FILE] [LOG...]
    --best   pick the fastest verified configuration per (kernel, precision, shape);
             default: the last configuration (the registry default when it is alone)
    --db     read the measurements (and the bw_dram_copy ceiling) of a roofkit database
             instead of kbench logs; prints the issue's targets beside the figures
"""
import json
import math
import re
import sqlite3
import sys
from collections import defaultdict

LINE = re.compile(
    r"^(?P<k>\S+)\s+(?P<p>fp32|fp64)\s+(?P<m>\d+)x(?P<n>\d+)\s*x(?P<kk>\d+)\s+(?P<params>\{[^}]*\})\s+"
    r"med\s+(?P<med>[\d.]+) us min\s+(?P<min>[\d.]+) max\s+(?P<max>[\d.]+)\s+(?P<gf>[\d.]+) GFLOP/s\s+"
    r"(?P<bw>[\d.]+) GB/s eff\s+(?P<ok>ok|FAIL)\s+err (?P<err>\S+)")
COPY = re.compile(r"^copy: .* median ([\d.]+) GB/s")


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    best = "--best" in argv
    copy = None
    files = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--copy":
            copy = float(argv[i + 1])
            i += 2
            continue
        if not a.startswith("--"):
            files.append(a)
        i += 1
    rows = defaultdict(list)  # (kernel, prec, shape) -> [(med_us, bw, gf, ok, err, params)]
    db = argv[argv.index("--db") + 1] if "--db" in argv else None
    if db:
        files = [f for f in files if f != db]
        con = sqlite3.connect(db)
        for (name, value, unit) in con.execute(
                "select name, value, unit from ceiling where name = 'bw_dram_copy'"):
            copy = value * (1000.0 if unit == "TB/s" else 1.0)
            print(f"ceiling from roofkit probe: {name} = {value} {unit}")
        q = ("select kernel, precision, m, n, k, params, time_median_ns, verified, rel_error "
             "from measurement where source = 'suite' order by id")
        for kernel, prec, m, n, k, params, med_ns, ok, err in con.execute(q):
            e = 8 if prec == "fp64" else 4
            t = med_ns * 1e-9
            bw = (m * k + k * n + m * n) * e / t / 1e9
            gf = 2.0 * m * n * k / t / 1e9
            rows[(kernel, prec, (m, n, k))].append(
                (med_ns / 1e3, bw, gf, ok == 1, err if err is not None else float("nan"), params))
    for f in files if not db else []:
        fh = sys.stdin if f == "-" else open(f)
        for line in fh:
            c = COPY.match(line)
            if c and copy is None:
                copy = float(c.group(1))
            mt = LINE.match(line)
            if not mt:
                continue
            key = (mt["k"], mt["p"], (int(mt["m"]), int(mt["n"]), int(mt["kk"])))
            rows[key].append((float(mt["med"]), float(mt["bw"]), float(mt["gf"]), mt["ok"] == "ok",
                              float(mt["err"]) if mt["err"] != "nan" else float("nan"), mt["params"]))
    pick = {}
    for key, lst in rows.items():
        ok = [r for r in lst if r[3]]
        if not ok:
            pick[key] = min(lst)
            continue
        pick[key] = min(ok) if best else ok[-1]
    fails = [(k, r) for k, lst in rows.items() for r in lst if not r[3]]

    def cublas(prec, shape):
        """The fastest cuBLAS routine of the run for this precision and shape (the
        conservative reference: cublasSgemm/Dgemm or cublasGemmEx)."""
        cands = [pick[(k, prec, shape)] for k in ("cublas_sgemm", "cublas_dgemm", "cublas_gemmex")
                 if (k, prec, shape) in pick and pick[(k, prec, shape)][3]]
        return min(cands) if cands else None

    kernels = sorted({k[0] for k in pick})
    print(f"copy ceiling (cudaMemcpy D2D, read+write): {copy} GB/s" if copy else "copy ceiling: not measured")
    print()
    print("x cuBLAS: cuBLAS time / kernel time, against the fastest cuBLAS routine of the run")
    print("| kernel | prec | m x n x k | params | median us | GFLOP/s | eff GB/s | % copy | x cuBLAS | verified (err) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = defaultdict(list)
    for key in sorted(pick, key=lambda k: (k[1], k[2], k[0])):
        k, prec, shape = key
        med, bw, gf, ok, err, params = pick[key]
        cb = cublas(prec, shape)
        ratio = cb[0] / med if cb else float("nan")
        if cb and not k.startswith("cublas"):
            ratios[(k, prec)].append((shape, ratio))
        pc = 100 * bw / copy if copy else float("nan")
        print(f"| {k} | {prec} | {shape[0]}x{shape[1]}x{shape[2]} | {params} | {med:.2f} | {gf:.1f} | "
              f"{bw:.1f} | {pc:.1f} | {ratio:.3f} | {'ok' if ok else 'FAIL'} ({err:.1e}) |")
    print()
    print("| kernel | prec | shapes | geomean x cuBLAS | min | max |")
    print("|---|---|---|---|---|---|")
    for (k, prec), lst in sorted(ratios.items()):
        rs = [r for _, r in lst]
        print(f"| {k} | {prec} | {len(rs)} | {geomean(rs):.3f} | {min(rs):.3f} | {max(rs):.3f} |")
    print()
    print(f"verification failures: {len(fails)}")
    for k, r in fails[:20]:
        print("  FAIL", k, r)
    targets(pick, ratios, copy, fails, rows)


def targets(pick, ratios, copy, fails, rows):
    """The issue's targets, each beside the figure measured."""
    def ratio_list(kernel, prec, cond=lambda s: True):
        return [r for s, r in ratios.get((kernel, prec), []) if cond(s)]

    tsm2 = {(m, n, k) for m in (10240, 20480, 30720) for n in (2, 4, 8, 16) for k in [m]}
    ism2 = {(m, kn, kn) for m in (100000, 1000000, 10000000) for kn in (8, 16)}
    out = []
    for prec in ("fp32", "fp64"):
        rs = ratio_list("tsm2_v3", prec, lambda s: s in tsm2)
        out.append((f"TSM2 V3 / cuBLAS geomean, tsm2 suite, {prec}", f"{geomean(rs):.3f} ({len(rs)} shapes)", ">= 1.00",
                    len(rs) == 12 and geomean(rs) >= 1.0))
    rs = ratio_list("tsm2_v3", "fp32", lambda s: s in tsm2 and s[0] == 10240)
    out.append(("TSM2 V3 / cuBLAS geomean, fp32, m = 10240", f"{geomean(rs):.3f} ({len(rs)} shapes)", ">= 1.15",
                len(rs) == 4 and geomean(rs) >= 1.15))
    if copy:
        worst = None
        for (k, prec, s), r in pick.items():
            if k == "tsm2_v3" and s in tsm2:
                pct = 100 * r[1] / copy
                if worst is None or pct < worst[0]:
                    worst = (pct, prec, s, r[1])
        if worst:
            out.append(("TSM2 V3 effective bandwidth, worst tsm2 shape, % of copy ceiling",
                        f"{worst[0]:.1f}% ({worst[3]:.0f} GB/s, {worst[1]} {worst[2][0]}x{worst[2][1]}x{worst[2][2]})",
                        ">= 90%", worst[0] >= 90.0))
    for kern in ("ism2_opt1", "ism2_opt2"):
        rs = ratio_list(kern, "fp32", lambda s: s in ism2) + ratio_list(kern, "fp64", lambda s: s in ism2)
        out.append((f"{kern} / cuBLAS geomean, ism2 suite (fp32 + fp64)", f"{geomean(rs):.3f} ({len(rs)} shapes)",
                    ">= 1.50", len(rs) == 12 and geomean(rs) >= 1.5))
        worst = None
        for (k, prec, s), r in pick.items():
            if k == kern and s in ism2 and s[0] == 10000000:
                if worst is None or r[1] < worst[0]:
                    worst = (r[1], prec, s)
        if worst:
            out.append((f"{kern} effective bandwidth at m = 1e7, worst of k = n, precision",
                        f"{worst[0]:.0f} GB/s ({worst[1]} k = n = {worst[2][1]})", ">= 2400 GB/s", worst[0] >= 2400))
    r = pick.get(("regtile", "fp32", (4096, 4096, 4096)))
    c = pick.get(("cublas_sgemm", "fp32", (4096, 4096, 4096)))
    if r and c:
        out.append(("regtile / cublasSgemm, fp32 4096^3", f"{c[0] / r[0]:.3f} ({r[2] / 1e3:.1f} vs {c[2] / 1e3:.1f} TFLOP/s)",
                    ">= 0.70", c[0] / r[0] >= 0.7))
    nmeas = sum(len(v) for v in rows.values())
    out.append(("verification: measurements failed / stored", f"{len(fails)} / {nmeas}", "0", not fails))
    print()
    print("| target | measured | wanted | met |")
    print("|---|---|---|---|")
    for name, val, want, ok in out:
        print(f"| {name} | {val} | {want} | {'yes' if ok else 'NO'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
