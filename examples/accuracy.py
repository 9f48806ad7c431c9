#!/usr/bin/env python3
"""accuracy.py DB - the accuracy and bound figures of examples/model-h100.md from a roofkit
database that holds predictions (`roofkit --db DB model` first).

Prints, for roofkit's suites (verified rows) and for the profiled kernels of at least 5 us,
each model's rows, median, mean and 90th-percentile absolute error (the 90th percentile
interpolated between ranks, as model_percentile does) and the rows within 10 and 25 %; then
the bound check of `overlap` on the profiled kernels: the share of those it calls DRAM-bound
that reach 70 % of the DRAM read ceiling (counters' DRAM bytes over the time), and, for those
it calls compute-bound on a tensor ceiling, the fraction of that ceiling their busiest tensor
counter reaches.
"""
import json
import sqlite3
import sys

MODELS = ("roofline", "hierarchical", "tsm2", "roofline_counters", "occupancy", "issue",
          "issue_counters", "overlap")
SUITES = "m.source = 'suite' AND (m.verified IS NULL OR m.verified = 1)"
PROFILED = "m.source = 'profile' AND m.time_median_ns >= 5000"
TENSOR_OPS = ("tensor_ops_fp64", "tensor_ops_tf32", "tensor_ops_fp16", "tensor_ops_bf16",
              "tensor_ops_fp8", "tensor_ops_int8", "tensor_ops_tf32_wgmma",
              "tensor_ops_fp16_wgmma", "tensor_ops_bf16_wgmma", "tensor_ops_int8_wgmma",
              "tensor_ops_tf32_mma", "tensor_ops_fp16_mma", "tensor_ops_bf16_mma",
              "tensor_ops_int8_mma")
UNITS = {"TFLOP/s": 1e12, "TOP/s": 1e12, "GFLOP/s": 1e9, "GB/s": 1e9, "TB/s": 1e12}


def percentile(v, q):
    v = sorted(v)
    r = (len(v) - 1) * q / 100.0
    lo = int(r)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (r - lo)


def errors(db, model, where):
    rows = db.execute("SELECT p.predicted_time_ns, m.time_median_ns FROM measurement m JOIN "
                      "prediction p ON p.measurement_id = m.id WHERE p.model = ? AND "
                      "p.predicted_time_ns IS NOT NULL AND " + where, (model,))
    return [abs(p / t - 1.0) * 100.0 for p, t in rows]


def metric(db, mid, name):
    r = db.execute("SELECT value FROM metric WHERE measurement_id = ? AND name = ?",
                   (mid, name)).fetchone()
    return r[0] if r and r[0] is not None else None


def ceiling(db, name):
    r = db.execute("SELECT value, unit FROM ceiling WHERE name = ? ORDER BY id DESC LIMIT 1",
                   (name,)).fetchone()
    return r[0] * UNITS.get(r[1], 1.0) if r else None


def main():
    db = sqlite3.connect(sys.argv[1])
    for label, where in (("suites", SUITES), ("profiled >= 5 us", PROFILED)):
        print("%s\n%-18s %5s %8s %8s %8s %6s %6s" % (label, "model", "rows", "median", "mean",
                                                     "p90", "<=10%", "<=25%"))
        for model in MODELS:
            e = errors(db, model, where)
            if e:
                print("%-18s %5d %7.1f%% %7.1f%% %7.1f%% %6d %6d" % (
                    model, len(e), percentile(e, 50), sum(e) / len(e), percentile(e, 90),
                    sum(x <= 10 for x in e), sum(x <= 25 for x in e)))
    dram, tensor = bound_check(db)
    bw = ceiling(db, "bw_dram_read")
    print("\noverlap's bound on the profiled kernels >= 5 us:")
    print("  dram-bound: %d of %d at >= 70 %% of bw_dram_read (%.0f GB/s)" % (
        sum(f >= 0.7 for f in dram), len(dram), bw / 1e9))
    print("  tensor-bound: %d of %d at >= 50 %% of their tensor ceiling (%s)" % (
        sum(f >= 0.5 for f in tensor), len(tensor),
        ", ".join("%.0f %%" % (100 * f) for f in sorted(tensor))))


def bound_check(db):
    """The profiled kernels >= 5 us that overlap calls DRAM-bound: their DRAM throughput over
    bw_dram_read; those it calls compute-bound on a tensor ceiling: their busiest tensor
    counter's rate over that ceiling."""
    bw = ceiling(db, "bw_dram_read")
    rows = db.execute("SELECT m.id, m.time_median_ns, p.bound, p.details FROM measurement m "
                      "JOIN prediction p ON p.measurement_id = m.id AND p.model = 'overlap' "
                      "WHERE p.predicted_time_ns IS NOT NULL AND " + PROFILED).fetchall()
    dram = []
    tensor = []
    for mid, t, bound, details in rows:
        seconds = t * 1e-9
        if bound == "dram":
            r, w = metric(db, mid, "dram_read_bytes"), metric(db, mid, "dram_write_bytes")
            if r is not None and w is not None:
                dram.append((r + w) / seconds / bw)
        peak_name = json.loads(details).get("ceilings", {}).get("compute", {}).get("name", "")
        if bound == "compute" and peak_name.startswith("peak_tensor"):
            ops = max(metric(db, mid, a) or 0.0 for a in TENSOR_OPS)
            tensor.append(ops / seconds / ceiling(db, peak_name))
    return dram, tensor


if __name__ == "__main__":
    main()
