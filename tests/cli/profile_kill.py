#!/usr/bin/env python3
"""profile_kill.py ROOFKIT JOURNAL_PROG WORKDIR - what `roofkit profile` keeps of a program that
dies, with no GPU: journal_prog writes the journal the injection library would write, then ends
as told (tests/cli/journal_prog.c). Label unit.

Case map:
  K1 a program killed with SIGKILL after 50 launches: exit 137, all 50 stored with their
     counters, the capture interrupted, its note and one warning say how many were kept, the
     file passes integrity_check, the journal folder is gone
  K2 a program that finishes: exit 0, its launches stored, the capture done, no kill note
  K3 a crash (SIGSEGV): exit 139, launches kept, the capture failed
  K4 roofkit and its program killed together (a batch system's time limit): the capture stays
     running with nothing stored; the next `roofkit profile` on the database stores the 30
     launches left in the journal into it and marks it interrupted
  K5 SIGTERM to roofkit alone: forwarded, exit 130, the capture interrupted, launches kept
  K6 a process that outlives the program: roofkit waits for it briefly, stores the program's
     launches, warns and leaves the outliving one's journal, which the next run stores into
     the same capture once it has finished
"""
import os
import signal
import sqlite3
import subprocess
import sys
import time

ROOFKIT, PROG, WORK = sys.argv[1:4]
FAILS = []
os.makedirs(WORK, exist_ok=True)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def fresh(name):
    db = os.path.join(WORK, name + ".db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    return db


def profile(db, *prog, **kw):
    return subprocess.run([ROOFKIT, "--db", db, "profile", "--metrics", "none", "--", *prog],
                          capture_output=True, text=True, timeout=120, **kw)


def q(db, sql, *args):
    c = sqlite3.connect(db)
    try:
        return c.execute(sql, args).fetchone()
    finally:
        c.close()


def capture(db, cid):
    return q(db, "select status, coalesce(note, ''), (select count(*) from measurement where "
             "capture_id = capture.id), (select count(distinct measurement_id) from metric join "
             "measurement m on m.id = measurement_id where m.capture_id = capture.id) from "
             "capture where id = ?", cid)


def intact(db):
    return q(db, "pragma integrity_check")[0] == "ok"


# K1
db = fresh("k1")
p = profile(db, PROG, "50", "kill")
status, note, n, counted = capture(db, 1)
print("K1: a program killed with SIGKILL after 50 launches: %d launches stored (%d with "
      "counters), capture %s" % (n, counted, status))
check(p.returncode == 137, "K1 exit 137 (got %d)" % p.returncode)
check(n == 50 and counted == 50, "K1 50 launches stored with counters (got %d, %d)" % (n, counted))
check(status == "interrupted", "K1 capture interrupted (got %s)" % status)
check("killed by" in note and "50 launches" in note, "K1 the note says what was kept: " + note)
check("warning: '%s' was killed by" % PROG in p.stderr, "K1 one warning line: " + p.stderr)
check(intact(db), "K1 integrity_check ok")
check(not os.path.exists(db + ".journal"), "K1 the journal folder is removed")

# K2
db = fresh("k2")
p = profile(db, PROG, "20", "exit")
status, note, n, counted = capture(db, 1)
check(p.returncode == 0 and status == "done", "K2 exit 0, capture done (%d, %s)" %
      (p.returncode, status))
check(n == 20 and "killed" not in note, "K2 20 launches, no kill note (%d, %s)" % (n, note))
check("recorded 20 kernel launches" in p.stderr, "K2 the summary counts them: " + p.stderr)

# K3
db = fresh("k3")
p = profile(db, PROG, "7", "segv")
status, note, n, counted = capture(db, 1)
check(p.returncode == 139 and status == "failed" and n == 7,
      "K3 a crash: exit 139, capture failed, 7 launches (%d, %s, %d)" % (p.returncode, status, n))

# K4
db = fresh("k4")
r = subprocess.Popen([ROOFKIT, "--db", db, "profile", "--metrics", "none", "--", PROG, "30",
                      "hang"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                     start_new_session=True)
check(r.stdout.readline().strip() == "ready", "K4 the program ran")
os.killpg(r.pid, signal.SIGKILL)  # roofkit and the program at once
r.wait()
status, note, n, counted = capture(db, 1)
check(status == "running" and n == 0, "K4 nothing stored yet (%s, %d)" % (status, n))
p = profile(db, "true")
status, note, n, counted = capture(db, 1)
print("K4: roofkit killed with its program; the next run stored %d launches of capture 1" % n)
check(n == 30 and counted == 30 and status == "interrupted",
      "K4 the next run stores the 30 launches, capture interrupted (%d, %s)" % (n, status))
check("stored 30 launches of capture 1" in p.stderr, "K4 one line says so: " + p.stderr)
check(capture(db, 2)[0] == "done", "K4 the new capture is done")
check(intact(db), "K4 integrity_check ok")

# K5
db = fresh("k5")
r = subprocess.Popen([ROOFKIT, "--db", db, "profile", "--metrics", "none", "--", PROG, "12",
                      "hang"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
check(r.stdout.readline().strip() == "ready", "K5 the program ran")
r.send_signal(signal.SIGTERM)  # a job scheduler's SIGTERM to roofkit alone
out, err = r.communicate(timeout=60)
status, note, n, counted = capture(db, 1)
check(r.returncode == 130 and status == "interrupted" and n == 12,
      "K5 exit 130, capture interrupted, 12 launches (%d, %s, %d)" % (r.returncode, status, n))

# K6
db = fresh("k6")
t0 = time.time()
p = profile(db, PROG, "10", "daemon")
status, note, n, counted = capture(db, 1)
check(p.returncode == 0 and n == 10, "K6 the program's 10 launches (%d, %d)" % (p.returncode, n))
check("still runs" in p.stderr, "K6 a warning names the process that still runs: " + p.stderr)
time.sleep(max(0.0, 4.0 - (time.time() - t0)))  # the outliving process finishes
p = profile(db, "true")
status, note, n, counted = capture(db, 1)
check(n == 20 and status == "done", "K6 the next run adds its 10 launches (%d, %s)" % (n, status))

if FAILS:
    print("%d checks failed" % len(FAILS))
    sys.exit(1)
print("profile_kill: all passed")
