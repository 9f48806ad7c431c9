#!/usr/bin/env python3
"""tune_gpu.py ROOFKIT WORKDIR - `roofkit tune` end to end on a GPU (ctest label gpu; exit 77,
skipped, without one).

Cases:
  noprobe   tune before any probe: exit 12, the "run 'roofkit probe'" line, no file created
  tsm2      probe --quick, then tune tsm2 on 2048x4x2048 (t1 128,256: 30 configurations): exit
            0; one capture of kind tune, done, whose note is the JSON printed by --json; one
            measurement per measured row, all verified, of kernel tsm2_v3; the model's two
            choices and the best are measurements of that capture; regrets >= 1 and equal to
            time(choice) / time(best) as stored
  ism2      tune ism2 on 100000x8x8 with --tcf 1,4,16: the same checks, tcf in every row
  text      the text output ends with the 'regret ...' line the device script collects
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

RK, WORK = sys.argv[1], sys.argv[2]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
DB = os.path.join(WORK, "tune.db")
fails = []


def run(*args):
    p = subprocess.run([RK, "--db", DB] + list(args), capture_output=True, text=True,
                       timeout=600)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


rc, out, err = run("tune", "tsm2", "--m", "2048", "--n", "4", "--k", "2048")
if rc == 4:
    print("no usable GPU: skipped")
    sys.exit(77)
check(rc == 12, f"noprobe: exit {rc}, expected 12 ({err.strip()})")
check("roofkit probe" in err, "noprobe: the message names 'roofkit probe'")
check(not os.path.exists(DB), "noprobe: no database file created")

rc, out, err = run("probe", "--quick")
if rc != 0:
    print(err)
    sys.exit(1)


def tune_case(name, args, kernel, axes):
    rc, out, err = run(*args, "--json", "--reps", "3")
    check(rc == 0, f"{name}: exit {rc} ({err.strip()[-300:]})")
    if rc != 0:
        return None
    res = json.loads(out)
    con = sqlite3.connect(DB)
    cap = con.execute("select id, kind, status, note from capture where id = ?",
                      (res["capture"],)).fetchone()
    check(cap is not None and cap[1] == "tune" and cap[2] == "done",
          f"{name}: capture {res['capture']} is a done tune capture")
    check(json.loads(cap[3]) == res, f"{name}: the capture's note is the printed JSON")
    rows = con.execute("select id, kernel, verified, time_median_ns, params from measurement "
                       "where capture_id = ?", (res["capture"],)).fetchall()
    check(len(rows) == res["measured"], f"{name}: {len(rows)} rows, {res['measured']} measured")
    check(all(r[1] == kernel and r[2] == 1 for r in rows), f"{name}: all {kernel}, verified")
    byid = {r[0]: r for r in rows}
    for a in axes:
        check(all(a in json.loads(r[4]) for r in rows), f"{name}: {a} in every row's params")
    best = res["best"]
    check(best["measurement"] in byid, f"{name}: best is a measurement of the capture")
    check(min(r[3] for r in rows) == byid[best["measurement"]][3], f"{name}: best is the fastest")
    for ch in ("alg5", "exhaustive"):
        m = res[ch]["measured"]
        check(m is not None and m["measurement"] in byid, f"{name}: {ch} choice measured")
        if m:
            t = byid[m["measurement"]][3]
            check(abs(m["regret"] - t / byid[best["measurement"]][3]) < 1e-3 * m["regret"],
                  f"{name}: {ch} regret = time / best")
            check(m["regret"] >= 1 - 1e-9, f"{name}: {ch} regret >= 1")
    con.close()
    return res


tune_case("tsm2", ["tune", "tsm2", "--m", "2048", "--n", "4", "--k", "2048", "--t1", "128,256"],
          "tsm2_v3", ("t1", "t2", "t3"))
tune_case("ism2", ["tune", "ism2", "--m", "100000", "--n", "8", "--k", "8", "--tcf", "1,4,16",
                   "--precision", "fp64"], "ism2_opt1", ("t3", "tcf"))

rc, out, err = run("tune", "tsm2", "--m", "1024", "--n", "2", "--k", "1024", "--t1", "128")
check(rc == 0 and out.strip().splitlines()[-1].startswith("regret tsm2 tsm2_v3 fp32 1024x2x1024"),
      f"text: exit {rc}, last line '{out.strip().splitlines()[-1] if out.strip() else ''}'")
print("tune_gpu:", "ok" if not fails else f"{len(fails)} failed")
sys.exit(1 if fails else 0)
