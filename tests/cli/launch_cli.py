#!/usr/bin/env python3
"""launch_cli.py ROOFKIT MODEL_FIXTURE WORKDIR - roofkit under a launcher, with no GPU and no
launcher installed: each launcher's variables are set by hand.

Case map:
  N1  --db placeholders: under Open MPI, Hydra and Slurm variables, `roofkit --db
      'job-%h-%r.db' list devices` names job-HOST-RANK.db (the file is missing: exit 7, one
      error line naming the expanded file), %q{VAR} and %p (roofkit's pid: a number) too
  N2  the origin stored with a capture: `roofkit model` on a fixture named through
      placeholders, under each launcher's variables, stores a model capture with this host,
      the rank, local rank and world size the variables say, a fresh 32-hex-digit uid and
      gpus_concurrent = local size - 1 (NULL where the launcher does not say); without a
      launcher rank, local rank and world size are NULL and gpus_concurrent is 0
  N3  two captures never share a uid
"""
import os
import re
import socket
import sqlite3
import subprocess
import sys

ROOFKIT, FIXTURE, WORK = sys.argv[1:4]
FAILS = []
HOST = socket.gethostname()
LAUNCHER_VARS = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
                 "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE",
                 "MPI_LOCALNRANKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS")


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def env_with(extra):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    env.update(extra)
    return env


def run(extra, *args):
    p = subprocess.run([ROOFKIT, *args], capture_output=True, text=True, cwd=WORK,
                       env=env_with(extra))
    return p.returncode, p.stdout, p.stderr


def q(db, sql):
    c = sqlite3.connect(db)
    try:
        return c.execute(sql).fetchall()
    finally:
        c.close()


LAUNCHERS = {
    "open-mpi": ({"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
                  "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"},
                 (5, 1, 8, 3)),
    "hydra": ({"PMI_RANK": "2", "MPI_LOCALRANKID": "0", "PMI_SIZE": "4", "MPI_LOCALNRANKS": "2"},
              (2, 0, 4, 1)),
    "slurm": ({"SLURM_PROCID": "7", "SLURM_LOCALID": "3", "SLURM_NTASKS": "16"},
              (7, 3, 16, None)),
    "none": ({}, (None, None, None, 0)),
}


def n1_placeholders():
    for name, (env, (rank, _, _, _)) in LAUNCHERS.items():
        want = f"job-{HOST}-{rank if rank is not None else 0}.db"
        rc, _, err = run(env, "--db", "job-%h-%r.db", "list", "devices")
        check(rc == 7 and want in err and err.count("roofkit: error:") == 1,
              f"N1 {name}: --db job-%h-%r.db names {want} (rc {rc}, {err.strip()})")
    rc, _, err = run({"JOBTAG": "nightly"}, "--db", "%q{JOBTAG}/p%p.db", "list", "devices")
    check(rc == 7 and re.search(r"nightly/p[0-9]+\.db", err) is not None,
          f"N1 %q and %p expand ({err.strip()})")


def n2_origin():
    uids = set()
    for name, (env, (rank, local, size, concurrent)) in LAUNCHERS.items():
        path = os.path.join(WORK, f"fx-{name}-{rank if rank is not None else 0}.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        subprocess.run([FIXTURE, "full", path], check=True)
        rc, _, err = run(dict(env, LNAME=name), "--quiet", "--db", "fx-%q{LNAME}-%r.db", "model")
        check(rc == 0, f"N2 {name}: model exits 0 ({rc}: {err.strip()})")
        rows = q(path, "SELECT host, rank, local_rank, world_size, gpus_concurrent, uid"
                       " FROM capture WHERE kind = 'model'")
        check(len(rows) == 1, f"N2 {name}: one model capture ({len(rows)})")
        if not rows:
            continue
        host, r, lr, ws, conc, uid = rows[0]
        check(host == HOST, f"N2 {name}: host {host!r}, expected {HOST!r}")
        check((r, lr, ws) == (rank, local, size),
              f"N2 {name}: rank, local rank, world size {(r, lr, ws)}, expected "
              f"{(rank, local, size)}")
        check(conc == concurrent, f"N2 {name}: gpus_concurrent {conc}, expected {concurrent}")
        check(uid is not None and re.fullmatch(r"[0-9a-f]{32}", uid) is not None,
              f"N2 {name}: uid {uid!r} is 32 hex digits")
        for (u,) in q(path, "SELECT uid FROM capture"):
            check(u not in uids, f"N3 uid {u} appears in two captures")
            uids.add(u)


os.makedirs(WORK, exist_ok=True)
n1_placeholders()
n2_origin()
if FAILS:
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1)
print("launch_cli: all cases pass")
