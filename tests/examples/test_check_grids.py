#!/usr/bin/env python3
"""test_check_grids.py SCHEMA_SQL WORK - check_grids.py on small synthetic recordings, so that
each of its rules provably fails: one database that passes and, for each rule, databases that
break it and nothing else. The tables are roofkit's own: SCHEMA_SQL (examples/h100.sql) is
loaded and emptied, then rows are written as `roofkit run`, `model` and `tune --exhaustive` write
them. The grids are shrunk to a few shapes each (check() takes them as an argument).

Case map (each: the rules that must fail, none other):
  P1  a complete recording: references beside the kernel, memory-bound shapes at 95 % of the
      copy ceiling, a compute-bound one far below it, a TF32 GemmEx (not a reference) faster
      than all, no sweeps                                                      -> none
  P2  P1 with sweeps of regret 1.00, 1.01, 1.05 per grid and precision        -> none
  P3  P1 as SQL text, as xz-compressed SQL text and as a database file through main(): exit 0;
      no file: exit 77
  F1  a shape without its kernel measurement                                  -> C1
  F2  a shape whose reference is in another capture only                     -> C1
  F3  a measurement of the kernel failed verification                        -> C2
  F4  fp32 speedups 1.10 everywhere (each >= 0.97)                            -> C3 fp32
  F5  fp64 speedups 1.04                                                      -> C3 fp64
  F6  cublas_gemmex faster than cublas_sgemm: the faster judges (ratio 1.0)   -> C3 fp32
  F7  one shape at 0.96, the rest at 1.5                                      -> C4
  F8  a memory-bound shape at 85 % of the copy ceiling                        -> C5
  F9  a shape without a stored prediction                                     -> C5
  F10 regrets of median 1.03                                                  -> C6
  F11 regrets of median 1.00, worst 1.11                                      -> C6
  F12 a sweep whose choice failed verification                                -> C6
  F13 main() on a failing database: exit 1
  G1  main() on F13's database naming ism2-grid only: exit 0; G2 naming tsm2-grid: exit 1;
  G3  naming a grid it does not know: exit 2
  H1  F5 with C3 fp64 held at 1.03 (target missed, floor met)                 -> none
  H2  F5 with C3 fp64 held at 1.045 (floor missed)                            -> C3 fp64
  H3  F11 with the worst regret held at 1.12, and at 1.105                    -> none, C6
  H4  F8 with C5 ism2-grid fp64 held at half its shapes, and at 0.6           -> none, C5
  P4  P1 with a floor (move) beside every shape at the copy ceiling           -> none
  F14 F8 with every floor at 90 % of the copy ceiling: the shape at 94 % of its floor
                                                                              -> C5 only
  F15 a shape at 50 % of the copy ceiling, its floor at 80 %                  -> C5, C7
  F16 floors beside every shape but one memory-bound one                      -> C7
  H5  F15 with C5 and C7 ism2-grid fp64 held at half its shapes               -> none
  I1  F15 with launch_event 4 us: C5 still fails; its info counts the shape out of reach
  I2  the same with launch_event 2 us: within reach (0 of 1)
  I3  the same without launch_event: told as not recorded
  L1  I1 with model 'issue' calling the shape latency-bound: told 1 of the 1; L2 'dram': 0 of
      the 1; L3 without predictions of model 'issue': not told
  S1  F15 (the shape's floor at 80 % of the copy ceiling): told 0 of the 1 below 90 % with a
      floor at or above it; S2 the floor at 100 %: 1 of the 1; S3 without floors: not told
"""
import json
import lzma
import os
import shutil
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_grids  # noqa: E402

SCHEMA_SQL, WORK = sys.argv[1:3]
GRIDS = {
    "tsm2-grid": [(1024, 1, 1024), (1024, 2, 1024), (2048, 3, 2048)],
    "ism2-grid": [(100000, 2, 2), (100000, 4, 8)],
}
COPY_GBS = 3000.0
FAILS = []


def template():
    """An empty database of roofkit's schema."""
    path = os.path.join(WORK, "template.db")
    c = sqlite3.connect(path)
    with open(SCHEMA_SQL) as f:
        c.executescript(f.read())
    tables = [t for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                                      "name NOT LIKE 'sqlite_%'")]
    c.execute("PRAGMA foreign_keys = OFF")
    for t in tables:
        c.execute(f"DELETE FROM {t}")
    c.commit()
    c.close()
    return path


def insert(c, table, **cols):
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    return c.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})",
                     tuple(cols.values())).lastrowid


def measurement(c, cap, kernel, family, prec, shape, t_ns, verified=1, params="{}"):
    m, n, k = shape
    return insert(c, "measurement", capture_id=cap, kernel=kernel, family=family, precision=prec,
                  m=m, n=n, k=k, params=params, reps=10, time_min_ns=t_ns, time_median_ns=t_ns,
                  time_max_ns=t_ns, verified=verified, rel_error=1e-7, cache_state="cold",
                  source="suite")


def make(name, ratio=None, frac=None, bound=None, drop=(), unverified=(), ref_elsewhere=(),
         gemmex=None, regret=None, choice_unverified=False, floor=None, launch_us=None,
         latency=None):
    """A recording of GRIDS. ratio(g, prec, shape) -> reference / kernel time (default 1.3 fp32,
    1.2 fp64); frac(...) -> effective bandwidth / copy ceiling of the kernel (0.95); bound(...)
    -> the stored bound ('dram'; None: no prediction); drop: shapes (g, prec, shape) without a
    kernel measurement; unverified: those that failed verification; ref_elsewhere: those whose
    references are in another run capture; gemmex(...) -> GemmEx's ratio (default: 1.25 x the
    reference's, slower); regret: list of regrets per grid and precision (sweeps); floor(...)
    -> the effective bandwidth of the floor (kernel move) / copy ceiling, None: no floor;
    launch_us: the probe's launch_event (its shortest repetition), None: not recorded;
    latency(...) -> the bound of a prediction of model 'issue' (None: none stored)."""
    path = os.path.join(WORK, name + ".db")
    shutil.copy(os.path.join(WORK, "template.db"), path)
    c = sqlite3.connect(path)
    dev = insert(c, "device", name="NVIDIA H100 80GB HBM3", uuid="GPU-synthetic")
    probe = insert(c, "capture", device_id=dev, kind="probe", status="done")
    insert(c, "ceiling", capture_id=probe, name="bw_dram_copy", kind="bandwidth", level="dram",
           value=COPY_GBS, unit="GB/s")
    if launch_us is not None:
        insert(c, "ceiling", capture_id=probe, name="launch_event", kind="launch",
               value=launch_us * 1.1, min=launch_us, unit="us")
    run = insert(c, "capture", device_id=dev, kind="run", status="done")
    other = insert(c, "capture", device_id=dev, kind="run", status="done")
    model = insert(c, "capture", device_id=dev, kind="model", status="done")
    for g, shapes in GRIDS.items():
        for prec, e in (("fp32", 4), ("fp64", 8)):
            ref_name = "cublas_sgemm" if prec == "fp32" else "cublas_dgemm"
            for s in shapes:
                key = (g, prec, s)
                m, n, k = s
                f = frac(*key) if frac else 0.95
                t = (m * k + k * n + m * n) * e / (f * COPY_GBS * 1e9) * 1e9
                r = ratio(*key) if ratio else (1.3 if prec == "fp32" else 1.2)
                rcap = other if key in ref_elsewhere else run
                measurement(c, rcap, ref_name, "cublas", prec, s, r * t)
                gx = gemmex(*key) if gemmex else 1.25 * r
                measurement(c, rcap, "cublas_gemmex", "cublas", prec, s, gx * t,
                            params='{"tf32":0}')
                if prec == "fp32":  # on the tensor cores in TF32: never a reference
                    measurement(c, rcap, "cublas_gemmex", "cublas", prec, s, 0.1 * t,
                                params='{"tf32":1}')
                fl = floor(*key) if floor else None
                if fl is not None:
                    measurement(c, run, check_grids.FLOOR, "move", prec, s,
                                (m * k + k * n + m * n) * e / (fl * COPY_GBS * 1e9) * 1e9)
                if key in drop:
                    continue
                mid = measurement(c, run, check_grids.KERNEL, "tsm2", prec, s, t,
                                  verified=0 if key in unverified else 1)
                b = bound(*key) if bound else "dram"
                if b is not None:
                    insert(c, "prediction", measurement_id=mid, capture_id=model, model="tsm2",
                           predicted_time_ns=t, bound=b)
                lb = latency(*key) if latency else None
                if lb is not None:
                    insert(c, "prediction", measurement_id=mid, capture_id=model,
                           model=check_grids.LATENCY_MODEL, predicted_time_ns=t, bound=lb)
            for i, rg in enumerate(regret or []):
                tune = insert(c, "capture", device_id=dev, kind="tune", status="done")
                s = GRIDS[g][i % len(GRIDS[g])]
                best = measurement(c, tune, check_grids.KERNEL, "tsm2", prec, s, 1000.0)
                ch = measurement(c, tune, check_grids.KERNEL, "tsm2", prec, s, 1000.0 * rg,
                                 verified=0 if choice_unverified else 1)
                note = {"tune": "tsm2" if g == "tsm2-grid" else "ism2", "kernel": "tsm2",
                        "precision": prec, "m": s[0], "n": s[1], "k": s[2],
                        "choice": {"measurement": ch, "regret": rg},
                        "best": {"measurement": best}}
                c.execute("UPDATE capture SET note = ? WHERE id = ?", (json.dumps(note), tune))
    c.commit()
    return c, path


def expect(case, c, rules, held=None):
    """check() on c (with held floors) fails exactly the rules named (prefixes such as
    'C3 tsm2-grid fp32')."""
    lines = []
    got = check_grids.check(c, GRIDS, say=lines.append, held=held)
    c.close()
    failed = sorted({" ".join(x.split()[:3]).rstrip(":") for x in got})
    ok = failed == sorted(rules)
    print(("ok: " if ok else "FAIL: ") + f"{case}: failed {failed or 'none'}, expected "
          f"{sorted(rules) or 'none'}")
    if not ok:
        FAILS.append(case)
        print("\n".join("    " + x for x in lines))


T1 = ("tsm2-grid", "fp32", (1024, 1, 1024))
I64 = ("ism2-grid", "fp64", (100000, 4, 8))

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
template()
check_grids.GRIDS = GRIDS  # main() checks the module's grids: the small ones here

# P1, P2: every rule holds (a compute-bound shape far from the copy ceiling is not judged by it)
expect("P1", make("p1", frac=lambda g, p, s: 0.3 if s == (2048, 3, 2048) else 0.95,
                  bound=lambda g, p, s: "compute" if s == (2048, 3, 2048) else "dram")[0], [])
expect("P2", make("p2", regret=[1.0, 1.01, 1.05])[0], [])

# P3: main() on SQL text and on a file, and the skip
c, p3 = make("p3")
with open(os.path.join(WORK, "p3.sql"), "w") as f:
    f.write("\n".join(c.iterdump()))
with lzma.open(os.path.join(WORK, "p3.sql.xz"), "wt") as f:
    f.write("\n".join(c.iterdump()))
c.close()
for what, path, want in (("SQL text", os.path.join(WORK, "p3.sql"), 0),
                         ("xz SQL text", os.path.join(WORK, "p3.sql.xz"), 0), ("database", p3, 0),
                         ("absent", os.path.join(WORK, "none.sql"), 77)):
    rc = check_grids.main(["check_grids.py", path, os.path.join(WORK, "p3-work")])
    print(("ok: " if rc == want else "FAIL: ") + f"P3 main() on {what}: exit {rc}, expected {want}")
    if rc != want:
        FAILS.append("P3 " + what)

expect("F1", make("f1", drop={T1})[0], ["C1 tsm2-grid fp32"])
expect("F2", make("f2", ref_elsewhere={I64})[0], ["C1 ism2-grid fp64"])
expect("F3", make("f3", unverified={I64})[0], ["C2 ism2-grid fp64"])
expect("F4", make("f4", ratio=lambda g, p, s: 1.10 if p == "fp32" else 1.2)[0],
       ["C3 tsm2-grid fp32", "C3 ism2-grid fp32"])
expect("F5", make("f5", ratio=lambda g, p, s: 1.3 if p == "fp32" else 1.04)[0],
       ["C3 tsm2-grid fp64", "C3 ism2-grid fp64"])
expect("F6", make("f6", ratio=lambda g, p, s: 2.0,
                  gemmex=lambda g, p, s: 1.0 if p == "fp32" else 2.5)[0],
       ["C3 tsm2-grid fp32", "C3 ism2-grid fp32"])
expect("F7", make("f7", ratio=lambda g, p, s: 0.96 if (g, p, s) == T1 else 1.5)[0],
       ["C4 tsm2-grid fp32"])
expect("F8", make("f8", frac=lambda g, p, s: 0.85 if (g, p, s) == I64 else 0.95)[0],
       ["C5 ism2-grid fp64"])
expect("F9", make("f9", bound=lambda g, p, s: None if (g, p, s) == T1 else "dram")[0],
       ["C5 tsm2-grid fp32"])
expect("F10", make("f10", regret=[1.0, 1.03, 1.04])[0],
       ["C6 tsm2-grid fp32", "C6 tsm2-grid fp64", "C6 ism2-grid fp32", "C6 ism2-grid fp64"])
expect("F11", make("f11", regret=[1.0, 1.0, 1.11])[0],
       ["C6 tsm2-grid fp32", "C6 tsm2-grid fp64", "C6 ism2-grid fp32", "C6 ism2-grid fp64"])
expect("F12", make("f12", regret=[1.0], choice_unverified=True)[0],
       ["C6 tsm2-grid fp32", "C6 tsm2-grid fp64", "C6 ism2-grid fp32", "C6 ism2-grid fp64"])

# H1-H4: a missed target held to a floor passes at the floor and fails below it
F5 = lambda g, p, s: 1.3 if p == "fp32" else 1.04  # noqa: E731
HELD64 = lambda v: {("C3", g, "fp64"): (v, "1.04") for g in GRIDS}  # noqa: E731
expect("H1", make("h1", ratio=F5)[0], [], held=HELD64(1.03))
expect("H2", make("h2", ratio=F5)[0], ["C3 tsm2-grid fp64", "C3 ism2-grid fp64"],
       held=HELD64(1.045))
REGRET = lambda v: {("C6", g, p): (v, "1.11") for g in GRIDS for p in ("fp32", "fp64")}  # noqa
expect("H3", make("h3a", regret=[1.0, 1.0, 1.11])[0], [], held=REGRET(1.12))
expect("H3", make("h3b", regret=[1.0, 1.0, 1.11])[0],
       ["C6 tsm2-grid fp32", "C6 tsm2-grid fp64", "C6 ism2-grid fp32", "C6 ism2-grid fp64"],
       held=REGRET(1.105))
F8 = lambda g, p, s: 0.85 if (g, p, s) == I64 else 0.95  # noqa: E731
expect("H4", make("h4a", frac=F8)[0], [], held={("C5", "ism2-grid", "fp64"): (0.5, "1 of 2")})
expect("H4", make("h4b", frac=F8)[0], ["C5 ism2-grid fp64"],
       held={("C5", "ism2-grid", "fp64"): (0.6, "1 of 2")})

ONE = lambda g, p, s: 1.0  # noqa: E731
expect("P4", make("p4", frac=lambda g, p, s: 0.3 if s == (2048, 3, 2048) else 0.95,
                  bound=lambda g, p, s: "compute" if s == (2048, 3, 2048) else "dram",
                  floor=ONE)[0], [])
expect("F14", make("f14", frac=F8, floor=lambda g, p, s: 0.9)[0], ["C5 ism2-grid fp64"])
F15 = lambda g, p, s: 0.5 if (g, p, s) == I64 else 0.95  # noqa: E731
F15_FLOOR = lambda g, p, s: 0.8 if (g, p, s) == I64 else 1.0  # noqa: E731
expect("F15", make("f15", frac=F15, floor=F15_FLOOR)[0], ["C5 ism2-grid fp64", "C7 ism2-grid fp64"])
expect("F16", make("f16", floor=lambda g, p, s: None if (g, p, s) == T1 else 1.0)[0],
       ["C7 tsm2-grid fp32"])
expect("H5", make("h5", frac=F15, floor=F15_FLOOR)[0], [],
       held={(r, "ism2-grid", "fp64"): (0.5, "1 of 2") for r in ("C5", "C7")})


def out_of_reach(case, c, want, line=0):
    """check() on c tells `want` (the info line `line` of C5 ism2-grid fp64: 0 the shapes out of
    reach for any kernel, 1 those latency-bound by model 'issue'), and fails C5 there as before."""
    lines = []
    got = check_grids.check(c, GRIDS, say=lines.append)
    c.close()
    info = [x for x in lines if x.startswith("info: C5 ism2-grid fp64")][line:]
    ok = bool(info) and want in info[0] and any(x.startswith("C5 ism2-grid fp64") for x in got)
    print(("ok: " if ok else "FAIL: ") + f"{case}: {info[0] if info else 'no info line'}")
    if not ok:
        FAILS.append(case)


# I1-I3: the shape of F15 (10^5 x 4 x 8 fp64, 7.2 MB) below 90 % of the copy ceiling. At 2700
# GB/s its bytes take 2.67 us: out of reach where no kernel measures under 4 us, within reach
# where one measures 2 us; without launch_event nothing is told out of reach.
expect("I1", make("i1", frac=F15, launch_us=4.0)[0], ["C5 ism2-grid fp64"])
out_of_reach("I1", make("i1b", frac=F15, launch_us=4.0)[0], "1 of the 1 below 90% are out of reach")
out_of_reach("I2", make("i2", frac=F15, launch_us=2.0)[0], "0 of the 1 below 90% are out of reach")
out_of_reach("I3", make("i3", frac=F15)[0], "launch_event not recorded")
# L1, L2: beside it, how many of them model 'issue' calls latency-bound; L3: none stored, not told
LAT = lambda b: (lambda g, p, s: b)  # noqa: E731
out_of_reach("L1", make("l1", frac=F15, launch_us=4.0, latency=LAT("latency"))[0],
             "1 of the 1 below 90% are latency-bound by model 'issue'", line=1)
out_of_reach("L2", make("l2", frac=F15, launch_us=4.0, latency=LAT("dram"))[0],
             "0 of the 1 below 90% are latency-bound", line=1)
lines = []
c = make("l3", frac=F15, launch_us=4.0)[0]
check_grids.check(c, GRIDS, say=lines.append)
c.close()
told = [x for x in lines if "latency-bound by model" in x]
print(("ok: " if not told else "FAIL: ") + f"L3: {told[0] if told else 'not told'} without "
      "predictions of model 'issue'")
if told:
    FAILS.append("L3")


def streamable(case, c, want):
    """check() on c tells, among C5 ism2-grid fp64's info lines, the one holding `want` (None:
    that no line tells the floors), and fails C5 there as before."""
    lines = []
    got = check_grids.check(c, GRIDS, say=lines.append)
    c.close()
    told = [x for x in lines if x.startswith("info: C5 ism2-grid fp64") and "a plain stream" in x]
    ok = any(x.startswith("C5 ism2-grid fp64") for x in got) and (
        (want is None and not told) or (want is not None and bool(told) and want in told[0]))
    print(("ok: " if ok else "FAIL: ") + f"{case}: {told[0] if told else 'not told'}")
    if not ok:
        FAILS.append(case)


# S1-S3: the shape of F15 below 90 % of the copy ceiling, its floor below 90 % too (a plain
# stream of its bytes does not reach it) and at 100 % (the kernels' miss); no floors: not told
streamable("S1", make("s1", frac=F15, floor=F15_FLOOR)[0], "0 of the 1 below 90% have a floor")
streamable("S2", make("s2", frac=F15, floor=ONE)[0], "1 of the 1 below 90% have a floor")
streamable("S3", make("s3", frac=F15)[0], None)

c, f13 = make("f13", drop={T1})
c.close()
rc = check_grids.main(["check_grids.py", f13, os.path.join(WORK, "f13-work")])
print(("ok: " if rc == 1 else "FAIL: ") + f"F13 main() on a failing database: exit {rc}")
if rc != 1:
    FAILS.append("F13")
# G1-G3: the grids named on the command line are the ones checked: F13's database, whose miss is
# in tsm2-grid, passes with ism2-grid named and fails with tsm2-grid; a grid not known: exit 2
for case, names, want in (("G1", ["ism2-grid"], 0), ("G2", ["tsm2-grid"], 1),
                          ("G3", ["ism2-odd"], 2)):
    rc = check_grids.main(["check_grids.py", f13, os.path.join(WORK, "g-work")] + names)
    print(("ok: " if rc == want else "FAIL: ") + f"{case} main() naming {names[0]}: exit {rc}, "
          f"expected {want}")
    if rc != want:
        FAILS.append(case)

print(f"{len(FAILS)} case(s) failed" if FAILS else "all cases as expected")
sys.exit(1 if FAILS else 0)
