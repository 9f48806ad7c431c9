#!/usr/bin/env python3
"""nvtx_check.py ROOFKIT NVTX_PROG WORKDIR - which launches `roofkit profile` stores under
Nsight Compute's NVTX options, against the kernels nvtx_prog.cu launches in known ranges and,
when `ncu` is on PATH (or in /usr/local/cuda/bin), against what `ncu --nvtx` profiles with the
same expressions. Label gpu; exit 77 (skipped) without a GPU. Prints, per case, the expected
set, roofkit's and ncu's.

Case map:
  N1-N12  --nvtx-include / --nvtx-exclude expressions (push/pop paths, '*' and '+', '[' and
          ']', domains, start/end ranges, several includes, include with exclude, a second
          thread's own stack): roofkit's set == the expected set == ncu's. Every launch
          before cudaProfilerStop: the program's last kernel, launched after it, is recorded
          by neither tool whatever the options
  N9      expressions ncu refuses ('*/', 'D@*/B/') or profiles nothing with ('D@*', '[*]'):
          roofkit refuses each with a usage error (exit 2) and stores nothing
  N13     --profile-from-start off: the launches between cudaProfilerStart and Stop
  N14     --nvtx alone: every launch before cudaProfilerStop, each with the ranges it ran in
          (the stored path); ncu profiles the same launches
  N15     the default metric set (application replay, two runs) with an include: the same
          launches, every one with counters
"""
import csv
import io
import os
import shutil
import sqlite3
import subprocess
import sys

ROOFKIT, PROG, WORK = sys.argv[1:4]
# every launch a profile records: k_after_stop runs after cudaProfilerStop
ALL = ["k_before_start", "k_outside", "k_outer", "k_inner", "k_leaf", "k_assemble",
       "k_outer_again", "k_phase", "k_phase_outer", "k_load", "k_worker", "k_last"]
OUTER = ["k_outer", "k_inner", "k_leaf", "k_assemble", "k_outer_again", "k_phase_outer"]
FAILS = []

# N9: refused by ncu ("Invalid configuration") or accepted and then nothing profiled; refused
# by roofkit
NOTHING = ["Solver@*", "IO@*", "*/", "[*]", "Solver@*/assemble/"]

# name, include expressions, exclude expressions, expected kernels
CASES = [
    ("N1 push/pop range anywhere on the stack", ["outer/"], [], OUTER),
    ("N2 B directly inside A", ["outer/inner/"], [], ["k_inner", "k_leaf", "k_assemble"]),
    ("N3 the whole stack, [ and ]", ["[outer/inner]"], [], ["k_inner", "k_assemble"]),
    ("N4a any ranges between", ["outer/*/leaf"], [], ["k_leaf"]),
    ("N4b exactly one between", ["outer/+/leaf"], [], ["k_leaf"]),
    ("N4c not directly inside", ["outer/leaf"], [], []),
    ("N5 another domain's push/pop", ["Solver@assemble/"], [], ["k_assemble"]),
    ("N6 a start/end range", ["phase"], [], ["k_phase", "k_phase_outer"]),
    ("N7 another domain's start/end", ["IO@load"], [], ["k_load"]),
    ("N8 a second thread's stack", ["worker/"], [], ["k_worker"]),
    ("N10 exclude alone", [], ["outer/"], [k for k in ALL if k not in OUTER]),
    ("N11 include with exclude", ["outer/"], ["inner/"],
     ["k_outer", "k_outer_again", "k_phase_outer"]),
    ("N12 two includes: either", ["phase", "IO@load"], [], ["k_phase", "k_phase_outer", "k_load"]),
]

PATHS = {  # N14: the stored ranges of some launches
    "k_outside": None,
    "k_leaf": "outer/inner/leaf/",
    "k_assemble": "outer/inner/;Solver@assemble/",
    "k_phase_outer": "outer/;phase",
    "k_load": "IO@load",
    "k_worker": "worker/",
}


def check(cond, what):
    print(("  ok    " if cond else "  FAIL  ") + what)
    if not cond:
        FAILS.append(what)


def base(name):
    """k_outer(int *) / void k_outer(int*) -> k_outer"""
    name = name.split("(")[0].strip()
    return name.split()[-1] if name else name


def roofkit(tag, opts):
    rc, rows, _ = roofkit_err(tag, opts)
    return rc, rows


def roofkit_err(tag, opts):
    """roofkit profile OPTS -- PROG into WORK/TAG.db: (exit code, stored rows, stderr)."""
    db = os.path.join(WORK, tag + ".db")
    for s in ("", "-wal", "-shm"):
        if os.path.exists(db + s):
            os.remove(db + s)
    p = subprocess.run([ROOFKIT, "--db", db, "profile", *opts, "--", PROG], capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        print("  roofkit exited %d: %s" % (p.returncode, p.stderr.strip()[-600:]))
    if not os.path.exists(db):
        return p.returncode, [], p.stderr
    c = sqlite3.connect(db)
    try:
        rows = c.execute("select m.kernel, m.nvtx, (select count(*) from metric where "
                         "measurement_id = m.id and value is not null) from measurement m "
                         "order by m.id").fetchall()
    except sqlite3.OperationalError:  # a refused command may leave an empty file
        rows = []
    finally:
        c.close()
    return p.returncode, [(base(k), nvtx, n) for k, nvtx, n in rows], p.stderr


def find_ncu():
    for c in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if c and os.access(c, os.X_OK):
            return c
    return None


def ncu(tool, opts):
    p = subprocess.run([tool, *opts, "--metrics", "gpu__time_duration.sum", "--csv",
                        "--print-summary", "none", PROG], capture_output=True, text=True,
                       timeout=600)
    lines = [l for l in p.stdout.splitlines() if l.startswith('"')]
    names = []
    seen = set()
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if row.get("ID") not in seen:
            seen.add(row.get("ID"))
            names.append(base(row.get("Kernel Name", "")))
    if p.returncode != 0:
        return None, (p.stdout + p.stderr).strip()[-400:]
    return names, None


def show(label, names):
    return "%-8s %s" % (label, ", ".join(sorted(names)) if names else "(none)")


def main():
    os.makedirs(WORK, exist_ok=True)
    if subprocess.run([PROG], capture_output=True).returncode != 0:
        print("no usable GPU (nvtx_prog failed): skipped")
        return 77
    tool = find_ncu()
    print("ncu: %s" % (tool or "not found: roofkit's sets are checked against the expected "
                       "ones only"))
    for i, (name, inc, exc, want) in enumerate(CASES):
        opts = ["--metrics", "none", "--nvtx"]
        nopts = ["--nvtx"]
        for e in inc:
            opts += ["--nvtx-include", e]
            nopts += ["--nvtx-include", e]
        for e in exc:
            opts += ["--nvtx-exclude", e]
            nopts += ["--nvtx-exclude", e]
        print("%s: include %s exclude %s" % (name, inc, exc))
        rc, rows = roofkit("case%d" % i, opts)
        got = [k for k, _, _ in rows]
        print("  " + show("expected", want))
        print("  " + show("roofkit", got))
        check(rc == 0 and sorted(got) == sorted(want), name + ": roofkit stores the expected set")
        if tool:
            names, err = ncu(tool, nopts)
            if names is None:
                print("  ncu     failed: " + err)
                check(False, name + ": ncu ran")
            else:
                print("  " + show("ncu", names))
                check(sorted(names) == sorted(got), name + ": the same set as ncu")

    for e in NOTHING:
        print("N9 --nvtx-include %s: ncu profiles nothing, roofkit refuses" % e)
        rc, rows, err = roofkit_err("n9", ["--metrics", "none", "--nvtx-include", e])
        print("  roofkit exit %d: %s" % (rc, err.strip().splitlines()[-1] if err.strip() else ""))
        check(rc == 2 and not rows and "--nvtx-include" in err,
              "N9 %s refused with a usage error naming the option, nothing stored" % e)
        if tool:
            names, nerr = ncu(tool, ["--nvtx", "--nvtx-include", e])
            print("  " + (show("ncu", names) if names is not None else "ncu failed: " + nerr))
            check(names == [] or (names is None and "Invalid configuration" in nerr),
                  "N9 %s: ncu profiles nothing or refuses it" % e)

    print("N13 --profile-from-start off")
    rc, rows = roofkit("from_start", ["--metrics", "none", "--profile-from-start", "off"])
    want = [k for k in ALL if k not in ("k_before_start", "k_after_stop")]
    got = [k for k, _, _ in rows]
    print("  " + show("expected", want))
    print("  " + show("roofkit", got))
    check(rc == 0 and sorted(got) == sorted(want), "N13 roofkit records between cudaProfilerStart and Stop")
    if tool:
        names, err = ncu(tool, ["--profile-from-start", "off"])
        print("  " + (show("ncu", names) if names is not None else "ncu failed: " + err))
        check(names is not None and sorted(names) == sorted(got), "N13 the same set as ncu")

    print("N14 --nvtx alone: the stored ranges")
    rc, rows = roofkit("paths", ["--metrics", "none", "--nvtx"])
    stored = {k: nvtx for k, nvtx, _ in rows}
    # the rows, not the dict's keys: a launch stored twice must show (each runs once)
    check(rc == 0 and sorted(k for k, _, _ in rows) == sorted(ALL),
          "N14 every launch before cudaProfilerStop stored, once")
    if tool:
        names, err = ncu(tool, ["--nvtx"])
        print("  " + (show("ncu", names) if names is not None else "ncu failed: " + err))
        check(names is not None and sorted(names) == sorted(stored), "N14 the same set as ncu")
    for k, want_path in PATHS.items():
        print("  %-14s %s" % (k, stored.get(k)))
        check(stored.get(k) == want_path, "N14 %s ran in %s" % (k, want_path))

    print("N15 the default metric set (application replay) with --nvtx-include outer/inner/")
    rc, rows = roofkit("counters", ["--nvtx-include", "outer/inner/"])
    got = [k for k, _, _ in rows]
    counted = [k for k, _, n in rows if n > 0]
    print("  " + show("roofkit", got))
    print("  " + show("counted", counted))
    check(sorted(got) == ["k_assemble", "k_inner", "k_leaf"] and sorted(counted) == sorted(got),
          "N15 the same launches in both runs, all with counters")

    if FAILS:
        print("%d checks failed" % len(FAILS))
        return 1
    print("nvtx_check: all passed")
    return 0


sys.exit(main())
