#!/usr/bin/env python3
"""check_model.py SQL WORKDIR - the model's targets on the example recording (examples/h100.sql),
from the predictions stored in it, so that a later change that records or predicts worse fails:

  M1 roofkit's suites (verified rows): `overlap` median |error| <= 10 %, p90 <= 25 %
  M2 profiled kernels of at least 5 us: the best counter-based model (`overlap`,
     `issue_counters`, `roofline_counters`) median |error| <= 12 %, p90 <= 30 %
  M3 the bound check on those profiled kernels: of the ones `overlap` calls DRAM-bound, at
     least 85 % reach 70 % of bw_dram_read (counters' DRAM bytes over the time); every one it
     calls compute-bound on a tensor ceiling reaches 50 % of that ceiling (the busiest tensor
     counter over the time)
  M4 the check can fail: the same recording with every prediction 1.5 times longer fails M1
     and M2, and with the DRAM-bound rows' times doubled fails M3

The figures are those of examples/accuracy.py (imported from there), which prints them in full.
"""
import os
import shutil
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import accuracy  # noqa: E402

COUNTER_MODELS = ("overlap", "issue_counters", "roofline_counters")


def load(sql, path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    with open(sql) as f:
        db.executescript(f.read())
    db.commit()
    return db


def figures(db):
    """(suites (median, p90), best profiled model and (median, p90), dram share, tensor list)"""
    e = accuracy.errors(db, "overlap", accuracy.SUITES)
    suites = (accuracy.percentile(e, 50), accuracy.percentile(e, 90)) if e else (None, None)
    best = None
    for model in COUNTER_MODELS:
        e = accuracy.errors(db, model, accuracy.PROFILED)
        if e:
            f = (accuracy.percentile(e, 50), accuracy.percentile(e, 90))
            if best is None or f[0] < best[1][0]:
                best = (model, f)
    dram, tensor = accuracy.bound_check(db)
    return suites, best, dram, tensor


def misses(db, label):
    suites, best, dram, tensor = figures(db)
    out = []
    print("%s:" % label)
    print("  M1 suites overlap median %.1f %%, p90 %.1f %% (targets 10, 25)" % suites)
    if not (suites[0] <= 10 and suites[1] <= 25):
        out.append("M1")
    print("  M2 profiled >= 5 us, best counter model %s: median %.1f %%, p90 %.1f %% (targets 12, "
          "30)" % (best[0], best[1][0], best[1][1]))
    if not (best[1][0] <= 12 and best[1][1] <= 30):
        out.append("M2")
    hit = sum(f >= 0.7 for f in dram)
    print("  M3 DRAM-bound %d of %d at >= 70 %% of bw_dram_read (target 85 %%); tensor-bound %d of "
          "%d at >= 50 %%" % (hit, len(dram), sum(f >= 0.5 for f in tensor), len(tensor)))
    # no DRAM- or no tensor-bound kernel at all is a recording that cannot show the target
    if not dram or not tensor or hit < 0.85 * len(dram) or any(f < 0.5 for f in tensor):
        out.append("M3")
    return out


def main():
    sql, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    db = load(sql, os.path.join(work, "model.db"))
    fails = misses(db, "the example recording")
    # M4: the check can fail
    slow = os.path.join(work, "slow.db")
    db.close()
    shutil.copy(os.path.join(work, "model.db"), slow)
    s = sqlite3.connect(slow)
    s.execute("UPDATE prediction SET predicted_time_ns = predicted_time_ns * 1.5")
    s.commit()
    got = misses(s, "M4 every prediction 1.5 times longer")
    if "M1" not in got or "M2" not in got:
        fails.append("M4 (predictions 1.5x: M1 and M2 should fail, got %s)" % got)
    s.execute("UPDATE prediction SET predicted_time_ns = predicted_time_ns / 1.5")
    s.execute("UPDATE measurement SET time_median_ns = time_median_ns * 2 WHERE id IN (SELECT "
              "measurement_id FROM prediction WHERE model = 'overlap' AND bound = 'dram')")
    s.commit()
    got = misses(s, "M4 the DRAM-bound rows twice as slow")
    if "M3" not in got:
        fails.append("M4 (DRAM-bound rows 2x slower: M3 should fail, got %s)" % got)
    s.close()
    if fails:
        print("check_model: FAILED %s" % ", ".join(fails))
        return 1
    print("check_model: all targets hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
