#!/usr/bin/env python3
"""format_cli.py ROOFKIT SQL WORKDIR [--no-cupti] - every machine-readable output of roofkit
read back by strict parsers, on the example database (examples/h100.sql) and on an empty one.

A strict JSON parser is json.loads with parse_constant raising: NaN, Infinity and -Infinity
are not JSON, and roofkit must write null for them. Case map:
  F1  --format json of list (kernels, suites, metrics, captures, devices), probe --list,
      model (summary; --check) and export (every table) parses strictly, as an array of
      objects; the JSON text stored in the database and exported (ceiling and measurement
      params, prediction details, a capture note that is JSON) parses strictly too
  F2  --format csv of the same: RFC 4180, a header line always (also for an empty table or
      listing), each row as wide as the header, the header equal to the JSON keys in order
      and as many rows as the JSON has objects
  F3  model explain --json parses strictly, also for inputs at the edges of the model
  F4  without a GPU (CUDA_VISIBLE_DEVICES empty) probe, run and list gpus with --format
      json or csv exit 4 and print nothing on stdout: no half-written array
  F5  --format with a bad value or none exits 2 with one error line; --format json with
      several GPUs is refused before any GPU is used (the per-GPU output would be one table
      per GPU)
  F6  text stays the default: list devices without --format prints its table header
--no-cupti: leave out list metrics (CUPTI's host library cannot load under AddressSanitizer).
"""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys

ROOFKIT, SQL, WORK = sys.argv[1:4]
NO_CUPTI = "--no-cupti" in sys.argv[4:]
FAILS = []
TABLES = ("device", "capture", "ceiling", "latency_point", "measurement", "metric", "prediction")


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def strict_json(text, what):
    def refuse(name):
        raise ValueError("%s is not JSON" % name)

    try:
        return json.loads(text, parse_constant=refuse)
    except ValueError as e:
        fail("%s: not strict JSON: %s" % (what, e))
        return None


def run(args, env=None):
    p = subprocess.run([ROOFKIT] + args, capture_output=True, env=env)  # bytes: CRLF kept
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def csv_rows(text, what):
    if not text.endswith("\r\n"):
        fail("%s: CSV does not end with CRLF" % what)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or not rows[0] or not all(rows[0]):
        fail("%s: CSV has no header line" % what)
        return None, []
    for i, r in enumerate(rows[1:]):
        if len(r) != len(rows[0]):
            fail("%s: CSV row %d has %d fields, the header %d" % (what, i + 1, len(r),
                                                                  len(rows[0])))
    return rows[0], rows[1:]


def check_pair(args, db, what, embedded=()):
    """Runs args with --format json and csv; both must succeed and agree (F1, F2)."""
    rc, out, err = run(["--db", db] + args + ["--format", "json"])
    if rc != 0:
        fail("%s --format json exited %d: %s" % (what, rc, err.strip()[-200:]))
        return None
    data = strict_json(out, what + " --format json")
    if data is None:
        return None
    if not isinstance(data, list) or not all(isinstance(o, dict) for o in data):
        fail("%s --format json is not an array of objects" % what)
        return None
    parsed = {}
    for o in data:
        for key in embedded:
            v = o.get(key)
            if isinstance(v, str) and v.startswith("{"):
                strict_json(v, "%s: the JSON text of %s" % (what, key))
                parsed[key] = parsed.get(key, 0) + 1
    # params and details are JSON objects on every row that has them (a note may be plain text)
    for key in ("params", "details"):
        if key in embedded and data and key in data[0] and not parsed.get(key):
            fail("%s: no %s holds JSON text to check" % (what, key))
    rc, out, err = run(["--db", db] + args + ["--format", "csv"])
    if rc != 0:
        fail("%s --format csv exited %d: %s" % (what, rc, err.strip()[-200:]))
        return data
    header, rows = csv_rows(out, what + " --format csv")
    if header is None:
        return data
    if data and list(data[0].keys()) != header:
        fail("%s: CSV header %s differs from the JSON keys %s" % (what, header,
                                                                  list(data[0].keys())))
    if len(rows) != len(data):
        fail("%s: %d CSV rows against %d JSON objects" % (what, len(rows), len(data)))
    return data


def load(sql, db):
    c = sqlite3.connect(db)
    c.executescript(open(sql).read())
    c.commit()
    c.close()


def emptied(src, db):
    """The example's schema with no rows: an empty roofkit database."""
    shutil.copy(src, db)
    c = sqlite3.connect(db)
    c.execute("pragma foreign_keys = off")
    for t in reversed(TABLES):
        c.execute("delete from " + t)
    c.commit()
    c.close()


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    full = os.path.join(WORK, "h100.db")
    empty = os.path.join(WORK, "empty.db")
    load(SQL, full)
    emptied(full, empty)

    for db, name in ((full, "example"), (empty, "empty")):
        # F1, F2: listings, probe --list, export of every table
        subjects = ["kernels", "suites", "captures", "devices"] + ([] if NO_CUPTI else ["metrics"])
        for s in subjects:
            data = check_pair(["list", s], db, "%s: list %s" % (name, s))
            if data is not None and db == full and not data:
                fail("example: list %s --format json is empty" % s)
        check_pair(["probe", "--list"], db, "%s: probe --list" % name)
        for t in TABLES:
            data = check_pair(["export", "--table", t], db, "%s: export %s" % (name, t),
                              embedded=("params", "details", "note"))
            if data is not None and (db == full) != bool(data):
                fail("%s: export %s has %d rows" % (name, t, len(data)))

    # F1, F2: the model's summary on a copy (it writes a capture), then --check
    model_db = os.path.join(WORK, "model.db")
    shutil.copy(full, model_db)
    data = check_pair(["model", "--model", "roofline,hierarchical,overlap"], model_db,
                      "example: model")
    if data is not None:
        models = {o["model"] for o in data if o["family"] is None and o["quantity"] == "time"}
        if models != {"roofline", "hierarchical", "overlap"}:
            fail("example: model --format json summarises %s" % sorted(models))
        if any(o["n"] > 0 and o["median_ape_pct"] is None for o in data):
            fail("example: model --format json has a group with samples and no median")
    data = check_pair(["model", "--check"], model_db, "example: model --check")
    if data is not None and (len(data) != 1 or data[0]["differ"] != 0 or data[0]["checked"] < 1):
        fail("example: model --check --format json: %s" % data)
    for fmt in ("json", "csv"):
        rc, out, err = run(["--db", empty, "model", "--format", fmt])
        if rc != 12 or out:
            fail("empty: model --format %s exited %d with %d bytes on stdout" % (fmt, rc,
                                                                                 len(out)))

    # F3: model explain --json, ordinary and at the edges
    for extra in ([], ["--peak-flops", "1e-300", "--bandwidth", "1e300", "--m", "1", "--n", "1",
                       "--k", "1"], ["--t1", "1", "--t2", "1", "--t3", "1"],
                  ["--mem-latency", "1", "--comp-latency", "100000"]):
        args = ["model", "explain", "--json", "--peak-flops", "66.9e12", "--bandwidth", "3.35e12",
                "--m", "10240", "--n", "16", "--k", "10240"] + extra
        rc, out, err = run(args)
        if rc != 0:
            fail("%s exited %d: %s" % (" ".join(args), rc, err.strip()))
        elif not isinstance(strict_json(out, " ".join(args)), dict):
            fail("%s: not one JSON object" % " ".join(args))

    # F4: no GPU, machine formats: exit 4, nothing on stdout
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    scratch = os.path.join(WORK, "scratch.db")
    for args in (["probe", "--quick"], ["run", "--kernel", "naive", "--sizes", "256",
                                        "--metrics", "none"], ["list", "gpus"]):
        for fmt in ("json", "csv"):
            rc, out, err = run(["--db", scratch] + args + ["--format", fmt], env=env)
            if rc != 4 or out:
                fail("no GPU: %s --format %s exited %d with stdout %r" % (" ".join(args), fmt,
                                                                         rc, out[:80]))

    # F5: bad --format; several GPUs
    for args in (["list", "kernels", "--format", "xml"], ["list", "kernels", "--format"],
                 ["probe", "--format", "yaml"], ["run", "--format=JSON"],
                 ["model", "--format", ""], ["export", "--format", "tsv"]):
        rc, out, err = run(["--db", full] + args)
        lines = [l for l in err.splitlines() if l.startswith("roofkit: error:")]
        if rc != 2 or len(lines) != 1 or "--format" not in lines[0] or out:
            fail("%s: exit %d, stderr %r" % (" ".join(args), rc, err))
    rc, out, err = run(["--db", scratch, "--device", "0,1", "probe", "--format", "json"],
                       env=env)
    if rc not in (2, 4) or out:  # 4: the GPU list is resolved first, and there is none
        fail("--device 0,1 probe --format json: exit %d, stdout %r" % (rc, out[:80]))
    if os.path.exists(scratch):
        fail("a failed invocation created %s" % scratch)

    # F6: text is the default
    rc, out, err = run(["--db", full, "list", "devices"])
    if rc != 0 or not out.startswith("id   name"):
        fail("list devices without --format: exit %d, %r" % (rc, out[:60]))

    print("format_cli: %s" % ("%d failures" % len(FAILS) if FAILS else "F1-F6 passed"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
