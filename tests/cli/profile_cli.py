#!/usr/bin/env python3
"""profile_cli.py ROOFKIT MODEL_FIXTURE WORKDIR - `roofkit profile`'s per-kernel summary with
no GPU: a profile capture built through db/ (model_fixture profile), read back by the roofkit
binary as `nsys stats` would sum it up. Case map:
  S1  --summary --format json (the newest profile capture by default): strict JSON (no NaN or
      Infinity), one object per kernel name, largest total first; launches, totals, medians and
      shares by hand, shares summing to 100 %; a kernel with no known time has nulls
  S2  before `roofkit model` no kernel has a % of roof or a bound; after it, the kernels with
      flop and DRAM counters have them, equal to the hand computation of analysis_place over
      the fixture's ceilings (time-weighted), and the kernel without counters still has none
  S3  --format csv: RFC 4180 (CRLF, quoted names with commas), the same numbers; text lists
      every kernel under the header
  S4  an empty profile capture (a program that launches nothing): after the run CSV is its
      header alone and JSON '[]', text prints nothing; --summary of it likewise
  S5  errors: --capture of a probe capture and of a missing one, a database with no profile
      capture (12), each on one line
  S6  energy (profile --energy's spans in the fixture): the kernel read has its J, J per launch
      and W from its 'kernel' span, energy_from "kernel"; the others null and "too short"; the
      program's and the NVTX range's figures on stderr, each saying its scope; with the
      program's span alone (counters collected) every kernel says "program only"
"""
import csv
import io
import json
import math
import os
import sqlite3
import subprocess
import sys

ROOFKIT, FIXTURE, WORK = sys.argv[1:4]
FAILS = []

# model_fixture.c: add_ceilings and add_profile_launches
PEAK_FP32, BW_DRAM_READ = 66.2e12, 3174e9
TRIAD = "triad(double*, double const*, double const*, double, unsigned long)"
GEMM = "void gemm<float>(float const*, float*, int)"
LAUNCHES = {  # kernel: [(time ns, flop_count_sp, DRAM bytes)], None for unknown
    TRIAD: [(50000, 2e6, 1.2e8), (50000, 2e6, 1.2e8), (60000, 2e6, 1.2e8)],
    GEMM: [(40000, 2.4e9, 1e6), (10000, 0.4e9, 1e6), (20000, 0.6e9, 1e6), (30000, 1.2e9, 1e6)],
    "copy_kernel(float*)": [(40000, None, None)],
    "noop()": [(None, None, None), (None, None, None)],
}
COLUMNS = ["time_pct", "total_ns", "launches", "median_ns", "roof_pct", "bound", "energy_j",
           "j_per_launch", "power_w", "energy_from", "kernel"]
# model_fixture.c: the energy spans of the profile capture (kernel scope: triad alone)
ENERGY = {TRIAD: (0.048, 0.016, 300.0)}


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def close(a, b, tol=1e-9):
    return a is not None and b is not None and abs(a - b) <= tol * max(abs(a), abs(b), 1e-300)


def run(db, *args):
    p = subprocess.run([ROOFKIT, "--db", db, *args], capture_output=True,
                       stdin=subprocess.DEVNULL)  # bytes: CSV's CRLF stays as written
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def fixture(kind, name):
    path = os.path.join(WORK, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    subprocess.run([FIXTURE, kind, path], check=True)
    return path


def no_constants(name):
    raise ValueError(f"non-standard JSON constant {name}")


def strict_json(text, what):
    try:
        return json.loads(text, parse_constant=no_constants)
    except ValueError as e:
        check(False, f"{what}: strict JSON ({e}): {text[:200]!r}")
        return None


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def by_hand(judged):
    """Expected rows, largest total first; judged: % of roof and bound filled."""
    rows = []
    grand = sum(t for ls in LAUNCHES.values() for t, _, _ in ls if t)
    for k, ls in LAUNCHES.items():
        times = [t for t, _, _ in ls if t]
        total = sum(times) if times else None
        roof_pct = bound = None
        if judged and all(f is not None for _, f, _ in ls):
            allowed = spent = 0.0
            per_bound = {"compute": 0.0, "dram": 0.0}
            for t, f, b in ls:
                intensity = f / b
                roof = min(PEAK_FP32, intensity * BW_DRAM_READ)
                allowed += f / roof
                spent += t * 1e-9
                per_bound["compute" if intensity >= PEAK_FP32 / BW_DRAM_READ else "dram"] += t
            roof_pct = 100.0 * allowed / spent
            bound = "compute" if per_bound["compute"] >= per_bound["dram"] else "dram"
        e = ENERGY.get(k, (None, None, None))
        rows.append({"kernel": k, "launches": len(ls), "total_ns": total,
                     "median_ns": median(times) if times else None,
                     "time_pct": 100.0 * total / grand if total else None,
                     "roof_pct": roof_pct, "bound": bound, "energy_j": e[0],
                     "j_per_launch": e[1], "power_w": e[2],
                     "energy_from": "kernel" if k in ENERGY else "too short"})
    rows.sort(key=lambda r: (r["total_ns"] is None, -(r["total_ns"] or 0), r["kernel"]))
    return rows


def compare(got, want, what):
    check(got is not None and [r["kernel"] for r in got] == [r["kernel"] for r in want],
          f"{what}: kernels by total time {[r['kernel'] for r in (got or [])]}")
    if not got:
        return
    for g, w in zip(got, want):
        check(list(g.keys()) == COLUMNS, f"{what}: columns {list(g.keys())}")
        for key in COLUMNS:
            a, b = g.get(key), w[key]
            same = a == b if (a is None or b is None or isinstance(b, str)) else close(a, b)
            check(same, f"{what}: {w['kernel']} {key} = {a}, expected {b}")


def s1_s2_s3():
    db = fixture("profile", "profile.db")
    rc, out, err = run(db, "profile", "--summary", "--format", "json")
    check(rc == 0, f"S1 --summary exits 0 (got {rc}: {err.strip()})")
    rows = strict_json(out, "S1 --summary --format json")
    compare(rows, by_hand(False), "S1 before the model")
    if rows:
        shares = sum(r["time_pct"] for r in rows if r["time_pct"] is not None)
        check(close(shares, 100.0, 1e-12), f"S1 shares sum to 100 %, got {shares}")
        check(sum(r["launches"] for r in rows) == 10, "S1 ten launches in all")

    rc, out, err = run(db, "model")
    check(rc == 0, f"S2 model exits 0 (got {rc}: {err.strip()})")
    rc, out, err = run(db, "profile", "--summary", "--capture", "4", "--format", "json")
    check(rc == 0, f"S2 --summary --capture 4 exits 0 (got {rc}: {err.strip()})")
    rows = strict_json(out, "S2 --summary after the model")
    compare(rows, by_hand(True), "S2 after the model")

    rc, out, err = run(db, "profile", "--summary", "--format", "csv")
    check(rc == 0 and out.startswith(",".join(COLUMNS) + "\r\n"), f"S3 CSV header: {out[:80]!r}")
    check(f'"{TRIAD}"' in out, "S3 a name holding commas is quoted")
    got = list(csv.DictReader(io.StringIO(out, newline="")))
    want = by_hand(True)
    check(len(got) == len(want), f"S3 {len(want)} CSV rows, got {len(got)}")
    for g, w in zip(got, want):
        check(g["kernel"] == w["kernel"] and int(g["launches"]) == w["launches"],
              f"S3 CSV row {g}")
        # every column, not only some: an empty cell where the hand computation has none
        for key in COLUMNS:
            a, b = g.get(key), w[key]
            if b is None or a == "" or a is None:
                same = (a == "") == (b is None) and a is not None
            elif isinstance(b, str):
                same = a == b
            else:
                same = close(float(a), b)
            check(same, f"S3 CSV {key} of {w['kernel']}: {a!r}, expected {b!r}")

    rc, out, err = run(db, "profile", "--summary")
    check("energy (program scope): 2.5 J over 0.01 s, 250 W average" in err,
          f"S6 the program's energy on stderr: {err!r}")
    check("energy (nvtx scope, kernels in range step/): 0.06 J" in err,
          f"S6 the NVTX range's energy on stderr: {err!r}")
    check("kernel scope" not in err, f"S6 kernels' figures are in the table: {err!r}")
    db2 = fixture("profile", "program-only.db")
    with sqlite3.connect(db2) as h:
        h.execute("DELETE FROM energy_span WHERE scope != 'program'")
    rc2, out2, err2 = run(db2, "profile", "--summary", "--format", "json")
    got = strict_json(out2, "S6 program only") or []
    check(rc2 == 0 and got and all(r["energy_from"] == "program only" and r["energy_j"] is None
                                   for r in got), f"S6 program only: {out2[:300]!r}")
    lines = out.splitlines()
    check(rc == 0 and lines and lines[0].split() == COLUMNS, f"S3 text header: {lines[:1]}")
    check(len(lines) == 5 and all(k in out for k in LAUNCHES), f"S3 text lists every kernel: {out}")


def s4():
    db = os.path.join(WORK, "empty.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    header = ",".join(COLUMNS) + "\r\n"
    rc, out, err = run(db, "profile", "--metrics", "none", "--format", "csv", "--", "true")
    check(rc == 0 and out == header, f"S4 CSV after an empty run is its header: {rc} {out!r} {err}")
    rc, out, err = run(db, "profile", "--metrics", "none", "--format", "json", "--", "true")
    check(rc == 0 and strict_json(out, "S4 JSON after an empty run") == [], f"S4 JSON: {out!r}")
    rc, out, err = run(db, "profile", "--metrics", "none", "--", "true")
    check(rc == 0 and out == "", f"S4 text after an empty run prints nothing: {out!r}")
    rc, out, err = run(db, "profile", "--summary", "--format", "csv")
    check(rc == 0 and out == header, f"S4 --summary CSV of an empty capture: {out!r} {err}")
    rc, out, err = run(db, "profile", "--summary", "--format", "json")
    check(rc == 0 and strict_json(out, "S4 --summary JSON") == [], f"S4 --summary JSON: {out!r}")


def s5():
    db = fixture("profile", "errors.db")
    for args, text in ((("--capture", "1"), "capture 1 is a probe capture, not a profile one"),
                       (("--capture", "999"), "no capture 999 in")):
        rc, out, err = run(db, "profile", "--summary", *args)
        check(rc == 12 and text in err and err.count("roofkit: error:") == 1 and out == "",
              f"S5 --summary {' '.join(args)}: exit {rc}, stderr {err.strip()!r}")
    db = fixture("noprobe", "noprofile.db")
    rc, out, err = run(db, "profile", "--summary")
    check(rc == 12 and "no finished profile capture in" in err,
          f"S5 no profile capture: exit {rc}, stderr {err.strip()!r}")


def main():
    os.makedirs(WORK, exist_ok=True)
    s1_s2_s3()
    s4()
    s5()
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("profile_cli: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
