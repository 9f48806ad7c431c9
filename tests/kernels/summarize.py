#!/usr/bin/env python3
"""summarize.py - tables of kbench output (tests/kernels/kbench.c) against the kernel
suite's targets (issue 4): best configuration per kernel and shape, ratios against
cuBLAS in the same run, geometric means, effective bandwidth against the copy
ceiling. Reads kbench logs given as arguments (or stdin); prints Markdown tables.

  summarize.py [--best] [--copy GBPS] LOG...
    --best   pick the fastest verified configuration per (kernel, precision, shape);
             default: the registry default is the only configuration in the log
"""
import math
import re
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
    for f in files or ["-"]:
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
        name = "cublas_sgemm" if prec == "fp32" else "cublas_dgemm"
        return pick.get((name, prec, shape))

    kernels = sorted({k[0] for k in pick})
    print(f"copy ceiling (cudaMemcpy D2D, read+write): {copy} GB/s" if copy else "copy ceiling: not measured")
    print()
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


if __name__ == "__main__":
    main(sys.argv[1:])
