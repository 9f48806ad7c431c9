#!/usr/bin/env python3
"""diff_cli.py ROOFKIT EXAMPLE_SQL WORKDIR - `roofkit diff` end to end, as a CI job runs it.

Databases come from examples/h100.sql (an H100's captures, stored before roofkit kept every
repetition: min/median/max only), merged into a new file by `roofkit merge` (this roofkit's
schema), and copies of it edited with python3's sqlite3 module:
repetitions added (times_ns, seeded noise), one kernel's times scaled.
Case map:
  D1  the tsm2 run capture against itself: exit 0, every configuration within noise with ratio
      1, every interval approximate (min/median/max, marked ~), ceilings from one probe
  D2  a copy with tsm2_v2's times scaled by 1.3 (an UPDATE), compared with --db-b: exit 13,
      exactly tsm2_v2's configurations slower and named on stderr, the others within noise;
      --threshold 40% exits 0 with them still slower; --threshold 29 exits 13 again
  D3  every repetition stored (times_ns, 10 a configuration, 1 % lognormal noise): a repeat
      with other noise exits 0 with no regression and few changes beyond noise (exact
      Hodges-Lehmann intervals, none approximate); the capture against itself has every ratio
      exactly 1; the repeat with tsm2_v3 fp64 scaled by 1.3 flags exactly those rows
  D4  --format json and csv: one row per configuration and per ceiling, fields as documented;
      the JSON parses; the CSV header; a regression still exits 13 with csv
  D5  'last' names the newest run capture of each database
  D6  what cannot be compared: a missing capture (12), a model capture (2), a run against a
      profile (12: nothing in common), two probe captures (0, ceilings only)
  D7  diff writes nothing: every database byte for byte as before
  D8  report --baseline: a second run capture in the same database (the tsm2 run copied, tsm2_v2
      x1.3): its section's table (csv/compare.csv, one row per configuration, tsm2_v2's
      regressions), the chart's script and data, the section in index.html; B defaults to the
      newest other run capture; a missing baseline is refused before anything is written
  D9  a kernel run with other parameters (tsm2_v3 fp32 with t3 16 -> 1 in the copy, each shape
      one configuration a side) is compared across them (params_b) and flagged
"""
import csv
import hashlib
import io
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys

ROOFKIT, EXAMPLE, WORK = sys.argv[1:4]
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def run(db, *args):
    p = subprocess.run([ROOFKIT, "--db", db, "diff", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def q(db, sql, *args):
    c = sqlite3.connect(db)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


def edit(db, sql, *args):
    c = sqlite3.connect(db)
    try:
        c.execute(sql, args)
        c.commit()
    finally:
        c.close()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def copy(src, name):
    dst = os.path.join(WORK, name)
    shutil.copyfile(src, dst)
    return dst


def kernel_rows(out_json):
    return [r for r in json.loads(out_json) if r["item"] == "kernel"]


def text_rows(out):
    """The kernel table's rows of the text output: lines that end with a change."""
    ends = ("within noise", "faster", "slower", "slower: regression", "only in A", "only in B")
    return [l for l in out.splitlines() if l.rstrip().endswith(ends) and
            not l.startswith("kernel ") and "compared" not in l]


def add_times(db, seed, scale_kernel=None, scale_precision=None, scale=1.0):
    """Gives every measurement of db 10 repetitions around its median (1 % lognormal noise),
    scaling those of one kernel (and precision) by `scale`."""
    rng = random.Random(seed)
    c = sqlite3.connect(db)
    rows = c.execute("SELECT id, kernel, precision, time_median_ns FROM measurement"
                     " WHERE time_median_ns IS NOT NULL").fetchall()
    for mid, kernel, prec, med in rows:
        f = scale if kernel == scale_kernel and (scale_precision in (None, prec)) else 1.0
        t = sorted(med * f * rng.lognormvariate(0.0, 0.01) for _ in range(10))
        c.execute("UPDATE measurement SET times_ns = ?, reps = 10, time_min_ns = ?,"
                  " time_median_ns = ?, time_max_ns = ? WHERE id = ?",
                  (json.dumps(t), t[0], (t[4] + t[5]) / 2, t[-1], mid))
    c.commit()
    c.close()


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    # the example as it is, then merged into a new file: this roofkit's schema whatever the
    # example's (an older one is upgraded by merge)
    old = os.path.join(WORK, "old.db")
    with open(EXAMPLE) as f:
        sql = f.read()
    c = sqlite3.connect(old)
    c.executescript(sql)
    c.close()
    ex = os.path.join(WORK, "ex.db")
    p = subprocess.run([ROOFKIT, "merge", ex, old], capture_output=True, text=True)
    check(p.returncode == 0, f"merge of the example: {p.stderr}")

    tsm2 = q(ex, "SELECT id FROM capture WHERE kind = 'run' AND cmdline LIKE '%--suite tsm2'")[0][0]
    newest_run = q(ex, "SELECT max(id) FROM capture WHERE kind = 'run'")[0][0]
    probe = q(ex, "SELECT id FROM capture WHERE kind = 'probe'")[0][0]
    model = q(ex, "SELECT id FROM capture WHERE kind = 'model'")[0][0]
    profile = q(ex, "SELECT id FROM capture WHERE kind = 'profile'")[0][0]
    n_tsm2 = q(ex, "SELECT count(*) FROM measurement WHERE capture_id = ? AND verified = 1",
               tsm2)[0][0]
    n_v2 = q(ex, "SELECT count(*) FROM measurement WHERE capture_id = ? AND verified = 1 AND"
             " kernel = 'tsm2_v2'", tsm2)[0][0]
    check(n_tsm2 > 100 and n_v2 >= 12, f"the example's tsm2 run: {n_tsm2} rows, {n_v2} tsm2_v2")
    before = digest(ex)

    # D1: against itself
    rc, out, err = run(ex, str(tsm2), str(tsm2))
    rows = text_rows(out)
    check(rc == 0, f"D1: exit {rc}: {err}")
    check(len(rows) == n_tsm2, f"D1: {len(rows)} rows, expected {n_tsm2}")
    check(all(r.endswith("within noise") for r in rows), "D1: every row within noise")
    check(all(" 1.000  ~[" in r for r in rows), "D1: ratio 1 and an approximate interval each")
    check(f"both from probe capture {probe}" in out, "D1: ceilings from the one probe")
    check(f"{n_tsm2} configurations compared: 0 slower (0 beyond 5%), 0 faster, {n_tsm2} within"
          " noise; 0 only in A, 0 only in B" in out, "D1: the summary line")

    # D2: tsm2_v2 scaled by 1.3 on a copy
    slow = copy(ex, "slow.db")
    edit(slow, "UPDATE measurement SET time_min_ns = time_min_ns * 1.3, time_median_ns ="
         " time_median_ns * 1.3, time_max_ns = time_max_ns * 1.3 WHERE capture_id = ? AND"
         " kernel = 'tsm2_v2'", tsm2)
    rc, out, err = run(ex, str(tsm2), str(tsm2), "--db-b", slow)
    rows = text_rows(out)
    flagged = [r for r in rows if r.endswith("slower: regression")]
    check(rc == 13, f"D2: exit {rc}, expected 13: {err}")
    check(len(flagged) == n_v2 and all(r.startswith("tsm2_v2 ") for r in flagged),
          f"D2: exactly tsm2_v2's {n_v2} rows flagged, got {len(flagged)}")
    check(all(r.endswith("within noise") for r in rows if not r.startswith("tsm2_v2 ")),
          "D2: the others within noise")
    check(err.count("roofkit: error:") == 1 and f"{n_v2} kernel configurations slower than"
          f" capture {tsm2} beyond noise and 5%: tsm2_v2" in err, f"D2: the error names them: {err}")
    check(" x1.300" in err, "D2: with their ratio")
    rc, out, err = run(ex, str(tsm2), str(tsm2), "--db-b", slow, "--threshold", "40%")
    rows = text_rows(out)
    check(rc == 0, f"D2: --threshold 40%: exit {rc}: {err}")
    check(sum(r.endswith(" slower") for r in rows) == n_v2, "D2: still slower, not regressions")
    rc, out, err = run(ex, str(tsm2), str(tsm2), "--db-b", slow, "--threshold", "29")
    check(rc == 13, f"D2: --threshold 29: exit {rc}")

    # D3: every repetition stored
    rep_a = copy(ex, "rep-a.db")
    add_times(rep_a, 1)
    rep_b = copy(ex, "rep-b.db")
    add_times(rep_b, 2)
    rc, out, err = run(rep_a, str(tsm2), str(tsm2), "--db-b", rep_b, "--format", "json")
    rows = kernel_rows(out)
    check(rc == 0, f"D3: a repeat: exit {rc}: {err}")
    check(len(rows) == n_tsm2, f"D3: {len(rows)} rows")
    check(all(r["method"] == "hodges-lehmann" and r["n_a"] == 10 for r in rows),
          "D3: exact intervals from 10 repetitions")
    moved = sum(r["change"] != "within noise" for r in rows)
    check(moved <= n_tsm2 // 10, f"D3: {moved} of {n_tsm2} beyond noise in a repeat")
    check(not any(r["regression"] for r in rows), "D3: no regression in a repeat")
    check(all(abs(r["ratio"] - 1) < 0.02 for r in rows), "D3: ratios near 1")
    check(all(abs(r["confidence"] - 0.9567) < 1e-3 for r in rows),
          "D3: the reached confidence of 10 against 10")
    rc, out, err = run(rep_a, str(tsm2), str(tsm2), "--format", "json")
    rows = kernel_rows(out) if rc == 0 else []
    check(rc == 0 and len(rows) == n_tsm2 and all(r["ratio"] == 1 and r["low"] <= 1 <= r["high"]
                                                  for r in rows),
          f"D3: against itself, ratio 1 ({len(rows)} rows, exit {rc})")
    rep_s = copy(ex, "rep-s.db")
    add_times(rep_s, 3, "tsm2_v3", "fp64", 1.3)
    n_v3 = q(ex, "SELECT count(*) FROM measurement WHERE capture_id = ? AND verified = 1 AND"
             " kernel = 'tsm2_v3' AND precision = 'fp64'", tsm2)[0][0]
    rc, out, err = run(rep_a, str(tsm2), str(tsm2), "--db-b", rep_s, "--format", "json")
    rows = kernel_rows(out)
    reg = [r for r in rows if r["regression"]]
    check(rc == 13, f"D3: tsm2_v3 fp64 x1.3: exit {rc}")
    check(len(reg) == n_v3 and all(r["name"] == "tsm2_v3" and r["precision"] == "fp64"
                                   for r in reg), f"D3: exactly tsm2_v3 fp64 ({len(reg)})")
    check(all(1.25 < r["low"] and r["high"] < 1.35 for r in reg), "D3: intervals around 1.3")

    # D4: machine formats
    rc, out, err = run(ex, str(tsm2), str(tsm2), "--db-b", slow, "--format", "json")
    data = json.loads(out)
    check(rc == 13, f"D4: json exit {rc}")
    keys = ["item", "name", "precision", "m", "n", "k", "params", "params_b", "cache_state", "in",
            "n_a", "n_b", "a", "b", "unit", "ratio", "low", "high", "confidence", "method",
            "change", "regression"]
    check(all(list(r.keys()) == keys for r in data), "D4: every JSON row has the documented keys")
    ceil = [r for r in data if r["item"] == "ceiling"]
    n_ceil = q(ex, "SELECT count(*) FROM ceiling WHERE capture_id = ?", probe)[0][0]
    check(len(ceil) == n_ceil and all(r["ratio"] == 1 for r in ceil), "D4: the ceilings, ratio 1")
    check(sum(r["item"] == "kernel" for r in data) == n_tsm2, "D4: one row per configuration")
    v2 = [r for r in data if r["name"] == "tsm2_v2"]
    check(len(v2) == n_v2 and all(r["change"] == "slower: regression"
                                  and abs(r["ratio"] - 1.3) < 1e-9
                                  and r["method"] == "min/median/max" and r["unit"] == "ns"
                                  and r["params_b"] is None for r in v2),
          f"D4: tsm2_v2's {len(v2)} rows, expected {n_v2}")
    rc, out, err = run(ex, str(tsm2), str(tsm2), "--db-b", slow, "--format", "csv")
    table = list(csv.reader(io.StringIO(out)))
    check(rc == 13 and table[0] == keys, f"D4: csv exit {rc}, header {table[0] if table else ''}")
    check(len(table) == 1 + n_tsm2 + n_ceil, "D4: csv rows")
    check(f"{n_tsm2} configurations compared" in err, "D4: the summary goes to stderr")

    # D5: 'last'
    rc, out, err = run(ex, "last", "last", "--db-b", slow)
    check(rc == 0 and f"A: capture {newest_run} (run" in out and f"B: capture {newest_run} (run"
          in out, f"D5: last is capture {newest_run}: {err}")

    # D6: what cannot be compared
    rc, out, err = run(ex, str(tsm2), "999")
    check(rc == 12 and "holds no capture 999" in err, f"D6: missing capture: {rc} {err}")
    rc, out, err = run(ex, str(model), str(tsm2))
    check(rc == 2 and "cannot be compared" in err, f"D6: a model capture: {rc} {err}")
    rc, out, err = run(ex, str(profile), str(tsm2))
    check(rc == 12 and "no kernel configuration in common" in err, f"D6: profile vs run: {rc}")
    rc, out, err = run(ex, str(probe), str(probe))
    check(rc == 0 and "bw_dram_read" not in out and f"both from probe capture {probe}" in out,
          f"D6: two probes: {rc} {err}")
    rc, out, err = run(ex, str(probe), str(probe), "--db-b", slow)
    check(rc == 0 and "bw_dram_read" in out, "D6: two probes of two files: the ceilings listed")

    # D7: nothing written
    check(digest(ex) == before, "D7: the database is unchanged")

    # D8: the report's comparison, B a copy of the tsm2 run in the same database
    rdb = copy(ex, "report.db")
    c = sqlite3.connect(rdb)
    c.execute("INSERT INTO capture (device_id, kind, status, cmdline, tool_version, started_at,"
              " ended_at, uid) SELECT device_id, kind, status, cmdline || ' (again)',"
              " tool_version, started_at, ended_at, lower(hex(randomblob(16))) FROM capture"
              " WHERE id = ?", (tsm2,))
    again = c.execute("SELECT max(id) FROM capture").fetchone()[0]
    c.execute("INSERT INTO measurement (capture_id, kernel, family, precision, m, n, k, params,"
              " reps, time_min_ns, time_median_ns, time_max_ns, verified, rel_error, cache_state,"
              " source) SELECT ?, kernel, family, precision, m, n, k, params, reps,"
              " time_min_ns * f, time_median_ns * f, time_max_ns * f, verified, rel_error,"
              " cache_state, source FROM (SELECT *, CASE kernel WHEN 'tsm2_v2' THEN 1.3 ELSE 1.0"
              " END AS f FROM measurement WHERE capture_id = ?)", (again, tsm2))
    c.commit()
    c.close()
    out_dir = os.path.join(WORK, "report")
    p = subprocess.run([ROOFKIT, "--db", rdb, "report", "--baseline", str(tsm2), "--out", out_dir],
                       capture_output=True, text=True)
    check(p.returncode in (0, 11), f"D8: report --baseline: exit {p.returncode}: {p.stderr}")
    with open(os.path.join(out_dir, "csv", "compare.csv"), newline="") as f:
        table = list(csv.DictReader(f))
    check(len(table) == n_tsm2, f"D8: {len(table)} rows in csv/compare.csv")
    reg = [r for r in table if r["change"] == "slower: regression"]
    check(len(reg) == n_v2 and all(r["kernel"] == "tsm2_v2" for r in reg),
          "D8: exactly tsm2_v2's rows are regressions")
    check(all(r["change"] == "within noise" for r in table if r["kernel"] != "tsm2_v2"),
          "D8: the others within noise")
    for name in ("compare.gp", "compare.dat"):
        check(os.path.exists(os.path.join(out_dir, "plots", name)), f"D8: plots/{name}")
    with open(os.path.join(out_dir, "index.html")) as f:
        html = f.read()
    check('<section id="compare">' in html and f"Capture {again} against baseline {tsm2}" in html,
          "D8: the section in index.html")
    check(p.returncode != 0 or '<figure id="c-compare">' in html, "D8: the chart in index.html")
    p = subprocess.run([ROOFKIT, "--db", rdb, "report", "--baseline", "999", "--out",
                        os.path.join(WORK, "report-bad")], capture_output=True, text=True)
    check(p.returncode == 2 and "holds no capture 999" in p.stderr and
          not os.path.exists(os.path.join(WORK, "report-bad")),
          f"D8: a missing baseline: {p.returncode} {p.stderr}")

    # D9: compared across parameters: tsm2_v3 fp32 ran with t3 = 1 in the copy, twice as slow
    par = copy(ex, "params.db")
    n_v3f = q(ex, "SELECT count(*) FROM measurement WHERE capture_id = ? AND verified = 1 AND"
              " kernel = 'tsm2_v3' AND precision = 'fp32'", tsm2)[0][0]
    edit(par, "UPDATE measurement SET params = json_set(params, '$.t3', 1), time_min_ns ="
         " time_min_ns * 2, time_median_ns = time_median_ns * 2, time_max_ns = time_max_ns * 2"
         " WHERE capture_id = ? AND kernel = 'tsm2_v3' AND precision = 'fp32'", tsm2)
    rc, out, err = run(ex, str(tsm2), str(tsm2), "--db-b", par, "--format", "json")
    rows = kernel_rows(out)
    reg = [r for r in rows if r["regression"]]
    check(rc == 13, f"D9: exit {rc}: {err}")
    check(len(reg) == n_v3f and all(r["name"] == "tsm2_v3" and r["params_b"] and
                                    json.loads(r["params_b"])["t3"] == 1 for r in reg),
          f"D9: exactly tsm2_v3 fp32, across parameters ({len(reg)} of {n_v3f})")
    check(not any(r["in"] != "both" for r in rows), "D9: nothing left one-sided")
    check(f"({n_v3f} across other parameters: A -> B)" in err, f"D9: the summary says so: {err}")

    if FAILS:
        print(f"{len(FAILS)} failure(s)")
        return 1
    print("diff_cli: all cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
