#!/usr/bin/env python3
"""model_cli.py ROOFKIT MODEL_FIXTURE WORKDIR - `roofkit model` end to end.

Builds databases with model_fixture (through db/ only), runs the command and reads the
result with python3's sqlite3 module. Case map:
  M1  model on the full fixture: exit 0, one model capture marked done, details are
      JSON objects naming the model and its ceilings, one prediction
      per (measurement, applicable model): roofline and hierarchical for every row with
      analytic counts, tsm2 exactly for the tsm2/ism2 rows, nothing for the profiled row;
      every other (measurement, model) pair stores its reason (no time, details "skipped")
  M2  values by hand (ceilings as in model_fixture.c): the roofline of stmvb, the
      hierarchical roofline of stmvb and of cublas_dgemm (fp64 tensor ceiling), the TSM2
      model of tsm2_v2 fp64 and tsm2_v0 (t2 = t3 = 1); details name the ceilings' ids
  M3  model --check exits 0 and changes nothing; a tampered time or bound exits 9
      naming the measurement; running model again replaces (one row per pair) and
      --check passes again
  M4  errors write nothing: --capture 999 (12), a probe capture (12), a database with no
      probe capture (12, "run 'roofkit probe'"), --check on a database with no
      predictions (12); --model tsm2 writes only tsm2 rows
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

ROOFKIT, FIXTURE, WORK = sys.argv[1:4]
FAILS = []

ALL_MODELS = ("roofline", "hierarchical", "tsm2", "roofline_counters", "occupancy", "issue",
              "issue_counters", "overlap")

# The fixture's ceilings in SI units (model_fixture.c add_ceilings).
BW_DRAM_READ = 3174e9
BW_L2, BW_L1, BW_SHARED = 8177e9, 33190e9, 33270e9
PEAK_FP32, PEAK_FP64, PEAK_TC_FP64 = 66.2e12, 33.4e12, 59.1e12
LAT_DRAM, LAT_FMA_FP32, LAT_FMA_FP64 = 693.0, 4.0, 8.0
SMS, CLOCK, REGS_SM, SMEM_SM, THREADS_SM = 132, 1.98e9, 65536, 233472, 2048


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def rel_close(a, b, tol=1e-12):
    return abs(a - b) <= tol * abs(b)


def run(db, *args):
    p = subprocess.run([ROOFKIT, "--db", db, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def fixture(kind, name):
    path = os.path.join(WORK, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    subprocess.run([FIXTURE, kind, path], check=True)
    return path


def q(db, sql, *args):
    c = sqlite3.connect(db)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


def meas(db, kernel, precision=None):
    rows = q(db, "SELECT id, m, n, k, flops, bytes_dram, bytes_l2, bytes_l1, bytes_shared, "
             "registers FROM measurement WHERE kernel = ?" +
             (" AND precision = ?" if precision else ""),
             *((kernel, precision) if precision else (kernel,)))
    check(len(rows) == 1, f"one {kernel} {precision} measurement in the fixture")
    return rows[0]


def pred(db, mid, model):
    rows = q(db, "SELECT predicted_time_ns, bound, details FROM prediction "
             "WHERE measurement_id = ? AND model = ? AND predicted_time_ns IS NOT NULL", mid,
             model)
    check(len(rows) == 1, f"one {model} prediction of measurement {mid}, got {len(rows)}")
    return rows[0] if rows else (float("nan"), None, "")


def tsm2_by_hand(m, n, k, e, t2, t3, regs, peak, bw, lat_comp):
    """004 §3.6.2 and Alg. 5 at (t2, t3), C = registers - (3 t2 + 2 t3) e / 4."""
    r_formula = (3 * t2 + 2 * t3) * e / 4
    r_thread = r_formula + max(0.0, regs - r_formula)
    occ = min(THREADS_SM, REGS_SM / r_thread, SMEM_SM / (t2 * e))
    util_mem = occ * t3 / (LAT_DRAM * bw / (SMS * CLOCK))
    util_comp = occ * t3 * t2 / (lat_comp * peak / (SMS * CLOCK))
    r = t2 / e * bw / peak
    if r <= 1:
        return m * k * n / t2 * e / (bw * min(1.0, util_mem)) * 1e9, "dram"
    return 2.0 * m * n * k / (peak * min(1.0, util_comp)) * 1e9, "compute"


def m1_m2_m3():
    db = fixture("full", "full.db")
    rc, out, err = run(db, "model")
    check(rc == 0, f"model exits 0 (got {rc}: {err.strip()})")
    check("every run and profile capture" in err, "model says which measurements it took")
    check("roofline" in out and "tsm2" in out and "median APE" in out, "summary table printed")
    # the rows within 10 % and 25 % (the accuracy targets' terms): 0 <= w10 <= w25 <= rows,
    # and w25 agrees with the stored predictions of that model
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "roofline" and f[1].isdigit():
            made, w10, w25 = int(f[1]), int(f[6]), int(f[7])
            check(0 <= w10 <= w25 <= made, f"roofline within 10/25 %: {w10} <= {w25} <= {made}")
            stored = q(db, "SELECT COUNT(*) FROM prediction p JOIN measurement m ON "
                           "m.id = p.measurement_id WHERE p.model = 'roofline' AND "
                           "(m.verified IS NULL OR m.verified = 1) AND "
                           "abs(p.predicted_time_ns / m.time_median_ns - 1) <= 0.25")[0][0]
            check(w25 == stored, f"roofline within 25 %: {w25} printed, {stored} stored")
            break
    else:
        check(False, f"no roofline summary row with the within columns:\n{out}")
    caps = q(db, "SELECT id, status FROM capture WHERE kind = 'model'")
    check(len(caps) == 1 and caps[0][1] == "done", f"one model capture, done: {caps}")

    # M1: which predictions exist
    rows = q(db, "SELECT id, kernel, family, flops FROM measurement")
    for mid, kernel, family, flops in rows:
        models = {r[0] for r in q(db, "SELECT model FROM prediction WHERE measurement_id = ? "
                                  "AND predicted_time_ns IS NOT NULL", mid)}
        reasons = {r[0] for r in q(db, "SELECT model FROM prediction WHERE measurement_id = ? "
                                   "AND predicted_time_ns IS NULL", mid)}
        want = set()
        if flops is not None:
            # roofline_counters needs DRAM counters, which the fixture does not store
            want |= {"roofline", "hierarchical", "occupancy", "issue"}
            if family in ("tsm2", "ism2"):
                want.add("tsm2")
        check(models == want, f"{kernel}: models {sorted(models)}, expected {sorted(want)}")
        applies = set(ALL_MODELS) - ({"tsm2"} if family not in ("tsm2", "ism2") else set())
        check(reasons == applies - want,
              f"{kernel}: reasons for {sorted(reasons)}, expected {sorted(applies - want)}")
        caps_of = q(db, "SELECT DISTINCT capture_id FROM prediction WHERE measurement_id = ?",
                    mid)
        check(all(c[0] == caps[0][0] for c in caps_of), f"{kernel}: predictions in the model capture")

    for model, det, t in q(db, "SELECT model, details, predicted_time_ns FROM prediction"):
        try:
            d = json.loads(det)
            if t is None:
                check(d["model"] == model and d.get("skipped"), f"{model} reason: {det}")
                continue
            check(d["model"] == model and "ceilings" in d, f"{model} details: model, ceilings")
        except ValueError as e:
            check(False, f"{model} details are not JSON ({e}): {det[:80]}")

    # M2: roofline of stmvb by hand: max(flops / peak_fp32_fma, bytes_dram / bw_dram_read)
    mid, m, n, k, flops, bd, b2, b1, bs, regs = meas(db, "stmvb")
    t, bound, det = pred(db, mid, "roofline")
    want = max(flops / PEAK_FP32, bd / BW_DRAM_READ) * 1e9
    check(rel_close(t, want), f"stmvb roofline {t} ns, by hand {want} ns")
    check(bound == ("compute" if flops / PEAK_FP32 >= bd / BW_DRAM_READ else "dram"),
          f"stmvb roofline bound {bound}")
    check('"name":"bw_dram_read"' in det and '"name":"peak_fp32_fma"' in det,
          "roofline details name its ceilings")
    # hierarchical of stmvb: compulsory DRAM 4 (mk + kn + mn), L2/L1/shared as stored
    t, bound, det = pred(db, mid, "hierarchical")
    terms = {"compute": flops / PEAK_FP32, "dram": 4.0 * (m * k + k * n + m * n) / BW_DRAM_READ,
             "l2": b2 / BW_L2, "l1": b1 / BW_L1, "shared": bs / BW_SHARED}
    wb = max(terms, key=terms.get)
    check(rel_close(t, terms[wb] * 1e9), f"stmvb hierarchical {t} ns, by hand {terms[wb] * 1e9}")
    check(bound == wb, f"stmvb hierarchical bound {bound}, by hand {wb}")
    check('"dram_bytes":"compulsory' in det, "hierarchical details say the DRAM bytes are compulsory")
    # cublas_dgemm: the fp64 tensor ceiling, compute-bound at 4096^3
    mid, m, n, k, flops, bd, b2, b1, bs, regs = meas(db, "cublas_dgemm")
    t, bound, det = pred(db, mid, "hierarchical")
    want = max(flops / PEAK_TC_FP64, 8.0 * (m * k + k * n + m * n) / BW_DRAM_READ,
               b2 / BW_L2, b1 / BW_L1) * 1e9
    check(rel_close(t, want) and bound == "compute",
          f"cublas_dgemm hierarchical {t} ns {bound}, by hand {want} ns compute")
    check('"name":"peak_tensor_fp64"' in det, "cublas_dgemm uses peak_tensor_fp64")
    # TSM2 V2 fp64: the kernel's own t2 = 16, t3 = 8 (model_fixture.c)
    mid, m, n, k, flops, bd, b2, b1, bs, regs = meas(db, "tsm2_v2", "fp64")
    t, bound, det = pred(db, mid, "tsm2")
    want, wb = tsm2_by_hand(m, n, k, 8, 16, 8, regs, PEAK_FP64, BW_DRAM_READ, LAT_FMA_FP64)
    check(rel_close(t, want), f"tsm2_v2 fp64 tsm2 {t} ns, by hand {want} ns")
    check(bound == wb, f"tsm2_v2 fp64 tsm2 bound {bound}, by hand {wb}")
    for key in ('"t2":16', '"t3":8', '"name":"lat_chase_dram"', '"name":"lat_fma_fp64"',
                '"max_occupancy"'):
        check(key in det, f"tsm2 details hold {key}")
    # TSM2 V0: Alg. 1 read as t2 = t3 = 1
    mid, m, n, k, flops, bd, b2, b1, bs, regs = meas(db, "tsm2_v0")
    t, bound, det = pred(db, mid, "tsm2")
    want, wb = tsm2_by_hand(m, n, k, 4, 1, 1, regs, PEAK_FP32, BW_DRAM_READ, LAT_FMA_FP32)
    check(rel_close(t, want) and bound == wb, f"tsm2_v0 tsm2 {t} ns {bound}, by hand {want} {wb}")

    # occupancy of cublas_dgemm (no launch configuration stored): launch_async + the
    # hierarchical time, no derating
    mid = meas(db, "cublas_dgemm")[0]
    th, _, _ = pred(db, mid, "hierarchical")
    to, _, det = pred(db, mid, "occupancy")
    d = json.loads(det)
    check(d["occupancy"]["util"] == 1 and rel_close(to, th + d["launch_s"] * 1e9),
          f"cublas_dgemm occupancy {to} ns = hierarchical {th} ns + launch {d['launch_s']} s")
    # occupancy of tsm2_v2: util in (0, 1], time = launch + hierarchical at bw * util
    mid = meas(db, "tsm2_v2", "fp64")[0]
    to, _, det = pred(db, mid, "occupancy")
    d = json.loads(det)
    o = d["occupancy"]
    check(0 < o["util"] <= 1 and o["bytes_in_flight_per_thread"] == 8 * 8,
          f"tsm2_v2 fp64 occupancy: t3 = 8 elements of 8 B in flight, util {o['util']}")
    want = d["launch_s"] + max(d["time_compute_s"],
                               *[lv["time_s"] for lv in d["levels"].values()])
    check(rel_close(to, want * 1e9), f"tsm2_v2 occupancy {to} ns, from its terms {want * 1e9}")
    # its DRAM term by hand: A, B and C once (the compulsory bytes) at the read ceiling
    # derated by the stored utilisation
    m, n, k = meas(db, "tsm2_v2", "fp64")[1:4]
    dram = d["levels"]["dram"]
    check(dram["bytes"] == (m * k + k * n + m * n) * 8,
          f"tsm2_v2 occupancy DRAM bytes {dram['bytes']}, by hand {(m * k + k * n + m * n) * 8}")
    check(rel_close(dram["time_s"], dram["bytes"] / (BW_DRAM_READ * o["util"])),
          f"tsm2_v2 occupancy DRAM term {dram['time_s']} s, by hand "
          f"{dram['bytes'] / (BW_DRAM_READ * o['util'])} s")

    # M3: --check passes and writes nothing (105 rows: 59 predictions and 46 stored reasons)
    before = q(db, "SELECT count(*) FROM capture")[0][0]
    rc, out, err = run(db, "model", "--check")
    check(rc == 0 and "checked 105 predictions" in out, f"--check exits 0 ({rc}: {out}{err})")
    check(q(db, "SELECT count(*) FROM capture")[0][0] == before, "--check adds no capture")
    rc, out, err = run(db, "model", "--check", "--capture", str(caps[0][0]))
    check(rc == 0 and "checked 105" in out, f"--check --capture MODEL_CAPTURE exits 0 ({rc})")
    rc, out, err = run(db, "model", "--check", "--capture", "2", "--model", "tsm2")
    check(rc == 0 and "checked 7 predictions" in out, f"--check of capture 2, tsm2 only ({out})")

    # tamper one time, then one bound
    c = sqlite3.connect(db)
    pid, mid = c.execute("SELECT id, measurement_id FROM prediction WHERE model = 'roofline' "
                         "AND predicted_time_ns IS NOT NULL ORDER BY id LIMIT 1").fetchone()
    c.execute("UPDATE prediction SET predicted_time_ns = predicted_time_ns * 1.000001 "
              "WHERE id = ?", (pid,))
    c.commit()
    c.close()
    rc, out, err = run(db, "model", "--check")
    check(rc == 9, f"--check after tampering a time exits 9 (got {rc})")
    check(f"measurement {mid} " in err and "roofline" in err, f"--check names the row: {err}")
    check(err.count("roofkit: error:") == 1 and "1 of 105" in err, f"one error line: {err}")
    rc, out, err = run(db, "model")
    check(rc == 0, "model runs again")
    check(q(db, "SELECT count(*) FROM prediction")[0][0] == 105,
          "running again replaces: one prediction per (measurement, model)")
    rc, out, err = run(db, "model", "--check")
    check(rc == 0, f"--check after re-running model exits 0 ({err})")
    c = sqlite3.connect(db)
    c.execute("UPDATE prediction SET bound = 'l2' WHERE model = 'tsm2' AND bound = 'dram'")
    c.commit()
    c.close()
    rc, out, err = run(db, "model", "--check")
    check(rc == 9 and "stored bound l2" in err, f"--check after tampering bounds exits 9 ({rc})")


def m4_errors():
    db = fixture("full", "errors.db")

    def unchanged(args, want_rc, text):
        before = q(db, "SELECT count(*) FROM capture")[0][0]
        rc, out, err = run(db, *args)
        check(rc == want_rc and text in err, f"{args}: exit {rc} ({err.strip()}), expected "
              f"{want_rc} with '{text}'")
        check(err.count("roofkit: error:") == 1, f"{args}: one error line")
        check(q(db, "SELECT count(*) FROM capture")[0][0] == before, f"{args}: nothing written")

    unchanged(["model", "--capture", "999"], 12, "there is no capture 999")
    unchanged(["model", "--capture", "1"], 12, "capture 1 is a probe capture")
    unchanged(["model", "--check"], 12, "no stored predictions to check")
    rc, out, err = run(db, "model", "--model", "tsm2", "--capture", "2")
    check(rc == 0, f"--model tsm2 --capture 2 exits 0 ({err})")
    models = {r[0] for r in q(db, "SELECT DISTINCT model FROM prediction")}
    check(models == {"tsm2"}, f"--model tsm2 writes only tsm2 rows: {models}")

    nop = fixture("noprobe", "noprobe.db")
    before = q(nop, "SELECT count(*) FROM capture")[0][0]
    rc, out, err = run(nop, "model")
    check(rc == 12 and "run 'roofkit probe'" in err, f"no probe capture: exit {rc} ({err})")
    check(q(nop, "SELECT count(*) FROM capture")[0][0] == before, "no probe capture: nothing written")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    m1_m2_m3()
    m4_errors()
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("model_cli: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
