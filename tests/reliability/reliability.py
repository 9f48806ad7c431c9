#!/usr/bin/env python3
"""reliability.py ROOFKIT MODEL_FIXTURE WORKDIR - databases and folders that roofkit cannot
use, as a user meets them: each case runs the roofkit command and expects one line
"roofkit: error: ...", a documented exit code (docs/exit-codes.md) and the stored data
unchanged (sha256 of the file, or row counts while another process holds it).

The databases come from tests/cli/model_fixture (through db/ only): a device, a probe
capture with ceilings, a run capture of measurements. `roofkit model` writes to it,
`roofkit list captures` and `roofkit report` read it. db/'s own tests (tests/db/test_db.c)
cover the same refusals at the library level; these are the command's.

Case map:
  B1  read-only file (0444): model exits 7 "read-only"; list and report still read it
  B2  read-only folder (0555) around a writable file: model exits 7, and so does list
      (a WAL database is readable only where SQLite can create its -shm), nothing created
  B3  locked past the busy timeout (python3 sqlite3 holding BEGIN EXCLUSIVE): model
      exits 7 "locked by another process" after ~5 s; the rows are unchanged
  B4  truncated to half its size: list, model, report exit 7, file unchanged
  B5  corrupt: bytes flipped inside a b-tree page: list, model, report exit 7, unchanged
  B6  newer schema (user_version 999): list, model, report exit 7 "newer", unchanged
  B7  report --out that cannot be written: under a file (exit 8), in a read-only
      folder (exit 8); the database unchanged, no report
  B8  gnuplot missing (PATH without it): report exits 11 naming gnuplot, the tables and
      the gnuplot scripts are written anyway, the database unchanged
  B9  two `roofkit model` processes on one database at once: both exit 0, two model
      captures marked done, one prediction per (measurement, model) as after one run,
      and model --check passes
Cases B1 (the write), B2 and B7's read-only folder run roofkit as user nobody when the test
runs as root (root writes anyway); they are skipped when that is not possible.
"""
import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time

ROOFKIT, FIXTURE, WORK = sys.argv[1:4]
FAILS = []
SKIPS = []
AS_NOBODY = []  # the command prefix that drops root, when running as root
if os.geteuid() == 0:
    if shutil.which("setpriv"):
        AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    else:
        AS_NOBODY = None


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def listing(folder):
    return sorted(os.listdir(folder))


def run(db, *args, env=None, nobody=False):
    cmd = [ROOFKIT, "--db", db, *args]
    if nobody and AS_NOBODY:
        cmd = AS_NOBODY + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expect_error(case, res, code, text):
    rc, _, err = res
    lines = [l for l in err.splitlines() if l.startswith("roofkit: error:")]
    check(rc == code, f"{case}: exit {rc}, expected {code} (stderr: {err.strip()[:300]})")
    check(len(lines) == 1, f"{case}: {len(lines)} error lines, expected 1: {err.strip()[:300]}")
    if lines and text:
        check(text in lines[0], f"{case}: error line lacks '{text}': {lines[0]}")


def fresh_dir(name, public=False):
    """A new empty folder; public ones live in /tmp, writable by user nobody."""
    if public:
        d = tempfile.mkdtemp(prefix=f"rk-rel-{name}-")
        os.chmod(d, 0o777)
        return d
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def fixture(folder, name="fix.db"):
    path = os.path.join(folder, name)
    subprocess.run([FIXTURE, "full", path], check=True, capture_output=True)
    for suffix in ("-wal", "-shm"):  # a closed WAL database has no side files
        check(not os.path.exists(path + suffix), f"fixture left {path}{suffix}")
    return path


def counts(path):
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("device", "capture", "ceiling", "measurement", "prediction")}
    finally:
        c.close()


def nobody_ok(case):
    if AS_NOBODY is None:
        SKIPS.append(case)
        print(f"SKIP: {case}: running as root and setpriv is missing")
        return False
    return True


def b1_readonly_file():
    if not nobody_ok("B1"):
        return
    d = fresh_dir("b1", public=True)
    db = fixture(d)
    os.chmod(db, 0o444)
    before, files = sha(db), listing(d)
    expect_error("B1 model", run(db, "model", nobody=True), 7, "read-only")
    check(sha(db) == before and listing(d) == files, "B1: model changed the folder")
    rc, out, err = run(db, "list", "captures", nobody=True)
    check(rc == 0 and "run" in out, f"B1: list captures on a read-only file: {rc} {err.strip()}")
    check(sha(db) == before, "B1: list changed the file")
    shutil.rmtree(d)


def b2_readonly_folder():
    if not nobody_ok("B2"):
        return
    d = fresh_dir("b2", public=True)
    db = fixture(d)
    os.chmod(db, 0o666)
    os.chmod(d, 0o555)
    before, files = sha(db), listing(d)
    expect_error("B2 model", run(db, "model", nobody=True), 7, "")
    # Reading needs the WAL side files too (SQLite: a WAL database is read only where its
    # -shm can be created): a clear refusal that names the folder.
    expect_error("B2 list", run(db, "list", "captures", nobody=True), 7, "folder")
    check(sha(db) == before and listing(d) == files, "B2: the read-only folder changed")
    os.chmod(d, 0o755)
    shutil.rmtree(d)


def b3_locked():
    d = fresh_dir("b3")
    db = fixture(d)
    before = counts(db)
    held, release = threading.Event(), threading.Event()

    def holder():
        c = sqlite3.connect(db, timeout=0, isolation_level=None)
        c.execute("BEGIN EXCLUSIVE")
        held.set()
        release.wait(60)
        c.execute("ROLLBACK")
        c.close()

    t = threading.Thread(target=holder)
    t.start()
    held.wait(10)
    t0 = time.monotonic()
    res = run(db, "model")
    waited = time.monotonic() - t0
    release.set()
    t.join()
    expect_error("B3 model", res, 7, "locked by another process")
    check(waited >= 4.0, f"B3: gave up after {waited:.1f} s, before the 5 s busy timeout")
    check(counts(db) == before, "B3: rows changed while the database was locked")
    check(run(db, "model", "--check")[0] == 12, "B3: a prediction was stored while locked")


def broken(case, db, code, text):
    d = os.path.dirname(db)
    before, files = sha(db), listing(d)
    out = os.path.join(d, "report-out")
    expect_error(f"{case} list", run(db, "list", "captures"), code, text)
    expect_error(f"{case} model", run(db, "model"), code, text)
    expect_error(f"{case} report", run(db, "report", "--out", out), code, text)
    check(sha(db) == before, f"{case}: the database file changed")
    check(listing(d) == files, f"{case}: files appeared: {sorted(set(listing(d)) - set(files))}")


def b4_truncated():
    d = fresh_dir("b4")
    db = fixture(d)
    size = os.path.getsize(db)
    with open(db, "r+b") as f:
        f.truncate(size // 2)
    broken("B4", db, 7, "")


def b5_corrupt():
    d = fresh_dir("b5")
    db = fixture(d)
    c = sqlite3.connect(db)
    page = c.execute("PRAGMA page_size").fetchone()[0]
    root = c.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'measurement'").fetchone()[0]
    c.close()
    with open(db, "r+b") as f:  # the b-tree page header of the measurement table
        f.seek((root - 1) * page)
        f.write(bytes([0x55] * 12))
    broken("B5", db, 7, "")


def b6_newer():
    d = fresh_dir("b6")
    db = fixture(d)
    c = sqlite3.connect(db)
    c.execute("PRAGMA user_version = 999")
    c.commit()
    c.close()
    broken("B6", db, 7, "newer")


def b7_unwritable_out():
    d = fresh_dir("b7")
    db = fixture(d)
    before = sha(db)
    plain = os.path.join(d, "plain-file")
    with open(plain, "w") as f:
        f.write("x\n")
    expect_error("B7 under a file", run(db, "report", "--out", os.path.join(plain, "r")), 8, "")
    check(sha(db) == before, "B7: report changed the database")
    if not nobody_ok("B7 read-only folder"):
        return
    p = fresh_dir("b7ro", public=True)
    shutil.copy(db, os.path.join(p, "fix.db"))
    pdb = os.path.join(p, "fix.db")
    os.chmod(pdb, 0o444)
    ro = os.path.join(p, "ro")
    os.makedirs(ro)
    os.chmod(ro, 0o555)
    before_p = sha(pdb)
    expect_error("B7 read-only folder",
                 run(pdb, "report", "--out", os.path.join(ro, "r"), nobody=True), 8, "")
    check(listing(ro) == [], "B7: something was written in the read-only folder")
    check(sha(pdb) == before_p, "B7: report changed the database")
    os.chmod(ro, 0o755)
    shutil.rmtree(p)


def b8_no_gnuplot():
    d = fresh_dir("b8")
    db = fixture(d)
    before = sha(db)
    bindir = os.path.join(d, "bin")  # a PATH with the usual tools but no gnuplot
    os.makedirs(bindir)
    for tool in ("sh", "cat", "mkdir", "rm"):
        where = shutil.which(tool)
        if where:
            os.symlink(where, os.path.join(bindir, tool))
    env = dict(os.environ, PATH=bindir)
    out = os.path.join(d, "report")
    res = run(db, "report", "--out", out, env=env)
    expect_error("B8 report", res, 11, "gnuplot")
    check(os.path.exists(os.path.join(out, "index.html")), "B8: no index.html without gnuplot")
    plots = os.path.join(out, "plots")
    check(os.path.isdir(plots) and any(f.endswith(".gp") for f in os.listdir(plots)),
          "B8: the gnuplot scripts were not written")
    check(sha(db) == before, "B8: report changed the database")


def b9_two_writers():
    d = fresh_dir("b9")
    db = fixture(d)
    single = fixture(d, "single.db")
    check(run(single, "model")[0] == 0, "B9: model on the reference copy failed")
    want = counts(single)["prediction"]
    procs = [subprocess.Popen([ROOFKIT, "--db", db, "--quiet", "model"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for i, p in enumerate(procs):
        _, err = p.communicate(timeout=120)
        check(p.returncode == 0, f"B9: writer {i} exited {p.returncode}: {err.strip()[:300]}")
    c = sqlite3.connect(db)
    caps = c.execute("SELECT status FROM capture WHERE kind = 'model'").fetchall()
    npred = c.execute("SELECT count(*) FROM prediction").fetchone()[0]
    pairs = c.execute("SELECT count(*) FROM (SELECT DISTINCT measurement_id, model "
                      "FROM prediction)").fetchone()[0]
    integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
    c.close()
    check(caps == [("done",), ("done",)], f"B9: model captures {caps}, expected two done")
    check(npred == want and pairs == want, f"B9: {npred} predictions ({pairs} pairs), want {want}")
    check(integrity == "ok", f"B9: integrity_check says {integrity}")
    check(run(db, "model", "--check")[0] == 0, "B9: model --check fails after two writers")


def main():
    os.makedirs(WORK, exist_ok=True)
    cases = [b1_readonly_file, b2_readonly_folder, b3_locked, b4_truncated, b5_corrupt,
             b6_newer, b7_unwritable_out, b8_no_gnuplot, b9_two_writers]
    for case in cases:
        try:
            case()
        except Exception as e:  # a case that cannot run is a failure, not a pass
            check(False, f"{case.__name__}: {type(e).__name__}: {e}")
    print(f"reliability: {len(cases)} cases, {len(FAILS)} failures, {len(SKIPS)} skipped")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
