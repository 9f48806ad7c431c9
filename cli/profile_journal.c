/*
 * profile_journal.c - the parent's half of "nothing recorded is lost" (db.h "journal"): the
 * profiled program's processes append each complete launch to a journal of their own
 * (collect/inject.c), and `roofkit profile`, which outlives them however they end, stores the
 * journals afterwards and says how many launches a killed program kept.
 *
 * Where: the database's path + ".journal" (beside the database, not in /tmp, so that a later
 * `roofkit profile` on the same database finds what a killed roofkit left: a batch system's time
 * limit kills the whole job, roofkit with it). A roofkit holds its capture's lock from before
 * the program starts until its journals are stored; a journal is locked by its writer while the
 * writer lives. So a later roofkit takes exactly the journals of captures nobody waits for whose
 * writers are gone.
 *
 * Each journal is stored in one transaction and removed right after the commit: a roofkit killed
 * between the two (microseconds) would store that journal twice on recovery; one killed during
 * the transaction stores nothing of it, and its recovery stores all of it.
 */
#define _GNU_SOURCE
#include "profile_journal.h"

#include "common.h"
#include "db.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long the parent waits for a process that outlived the program to finish its journal. */
#define BUSY_WAIT_S 2.0

enum db_status profile_end_status(int sig)
{
    switch (sig) {
    case 0:
        return DB_DONE;
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGABRT:
    case SIGSYS:
    case SIGTRAP:
        return DB_FAILED;
    default:
        return DB_INTERRUPTED; /* SIGINT, SIGTERM, SIGKILL (OOM killer, time limits), SIGXCPU */
    }
}

/* Stores the journals of a capture whose roofkit died (profile_journal_open). */
static void recover(struct rk_ctx *ctx, const char *dir, const struct db_journal_file *f, int n)
{
    int64_t cap = f[0].capture_id, stored = 0;
    int lock = -1, nleft = 0, nstored = 0;
    struct db_capture c;
    if (db_journal_lock_capture(dir, cap, 0, &lock) != RK_OK)
        return; /* its roofkit lives: the journals are its own */
    if (db_get_capture(ctx->db, cap, &c) != RK_OK) {
        rk_warn("'%s' holds journals of capture %lld, which is not in '%s'; they are left there "
                "(remove them, or profile into the database they belong to)",
                dir, (long long)cap, db_path(ctx->db));
        close(lock); /* the lock file stays with the journals */
        return;
    }
    for (int i = 0; i < n; i++) {
        struct db_journal_stats st;
        if (db_journal_busy(f[i].path) != 0) {
            nleft++;
            continue;
        }
        if (db_journal_fold(ctx->db, cap, f[i].path, &st) != RK_OK) {
            nleft++;
            continue;
        }
        unlink(f[i].path);
        stored += st.stored;
        nstored++;
    }
    if (nstored > 0) {
        char note[1400];
        snprintf(note, sizeof note,
                 "%s%s%lld launches stored later from the journals of %d processes: the roofkit "
                 "that ran them ended before storing them",
                 c.note ? c.note : "", c.note ? "; " : "", (long long)stored, nstored);
        db_capture_note(ctx->db, cap, note);
        if (c.status == DB_RUNNING)
            db_capture_end(ctx->db, cap, DB_INTERRUPTED);
        rk_info("stored %lld launches of capture %lld left in journals by a roofkit profile that "
                "ended before storing them%s",
                (long long)stored, (long long)cap,
                c.status == DB_RUNNING ? "; the capture is marked interrupted" : "");
    }
    db_capture_release(&c);
    if (nleft == 0)
        db_journal_unlock_capture(dir, cap, lock);
    else
        close(lock);
}

int profile_journal_open(struct rk_ctx *ctx, const char *dbabs, struct profile_journal *pj)
{
    struct db_journal_file *f = NULL;
    int n = 0;
    memset(pj, 0, sizeof *pj);
    pj->lock_fd = -1;
    if (snprintf(pj->dir, sizeof pj->dir, "%s.journal", dbabs) >= (int)sizeof pj->dir)
        return rk_error(RK_EIO, "the database path '%s' is too long; pass a shorter --db", dbabs);
    if (mkdir(pj->dir, 0755) != 0 && errno != EEXIST)
        return rk_error(RK_EIO,
                        "cannot create the journal folder '%s': %s; make the database's folder "
                        "writable or pass --db",
                        pj->dir, strerror(errno));
    if (db_journal_list(pj->dir, 0, &f, &n) != RK_OK)
        return rk_error(RK_EIO, "cannot read the journal folder '%s': %s; check its permissions",
                        pj->dir, strerror(errno));
    for (int i = 0, j; i < n; i = j) {
        for (j = i; j < n && f[j].capture_id == f[i].capture_id; j++) {
        }
        recover(ctx, pj->dir, f + i, j - i);
    }
    db_journal_free_list(f, n);
    return RK_OK;
}

int profile_journal_lock(struct profile_journal *pj, int64_t capture)
{
    if (db_journal_lock_capture(pj->dir, capture, 1, &pj->lock_fd) != RK_OK)
        return rk_error(RK_EIO,
                        "cannot create the lock of capture %lld in '%s': %s; check the "
                        "folder's permissions",
                        (long long)capture, pj->dir, strerror(errno));
    pj->capture = capture;
    return RK_OK;
}

/* The entry of process pid, added when new; NULL when out of memory. */
static struct pj_proc *proc_of(struct profile_journal *pj, long pid)
{
    for (int i = 0; i < pj->nproc; i++)
        if (pj->proc[i].pid == pid)
            return &pj->proc[i];
    struct pj_proc *grown = realloc(pj->proc, (size_t)(pj->nproc + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    pj->proc = grown;
    memset(&pj->proc[pj->nproc], 0, sizeof *pj->proc);
    pj->proc[pj->nproc].pid = pid;
    return &pj->proc[pj->nproc++];
}

int profile_journal_store(struct rk_ctx *ctx, struct profile_journal *pj)
{
    struct db_journal_file *f = NULL;
    int n = 0, rc = RK_OK;
    if (db_journal_list(pj->dir, pj->capture, &f, &n) != RK_OK)
        return rk_error(RK_EIO, "cannot read the journal folder '%s': %s; check its permissions",
                        pj->dir, strerror(errno));
    double give_up = rk_now_s() + BUSY_WAIT_S;
    for (int i = 0; i < n; i++) {
        struct db_journal_stats st;
        int busy;
        while ((busy = db_journal_busy(f[i].path)) == 1 && rk_now_s() < give_up)
            usleep(50000);
        if (busy == 1) {
            rk_warn("process %ld of the profiled program still runs: its launches so far stay in "
                    "'%s', and the next 'roofkit profile' on this database stores them in "
                    "capture %lld",
                    f[i].pid, f[i].path, (long long)pj->capture);
            pj->left++;
            continue;
        }
        double t0 = rk_now_s();
        int frc = db_journal_fold(ctx->db, pj->capture, f[i].path, &st);
        if (frc != RK_OK) {
            if (rc == RK_OK)
                rc = frc;
            pj->left++;
            continue;
        }
        unlink(f[i].path);
        struct pj_proc *p = proc_of(pj, st.pid ? st.pid : f[i].pid);
        if (!p) {
            rc = rk_error(RK_ENOMEM, "out of memory");
            continue;
        }
        p->stored += st.stored;
        p->with_counters += st.with_metrics;
        p->ended = st.ended; /* an exec'd process's last journal says how it ended */
        if (st.mode[0])
            snprintf(p->mode, sizeof p->mode, "%s", st.mode);
        p->t_store += rk_now_s() - t0;
        pj->stored += st.stored;
        pj->with_counters += st.with_metrics;
    }
    db_journal_free_list(f, n);
    return rc;
}

void profile_journal_close(struct profile_journal *pj)
{
    if (pj->capture && pj->lock_fd >= 0) {
        if (pj->left == 0)
            db_journal_unlock_capture(pj->dir, pj->capture, pj->lock_fd);
        else
            close(pj->lock_fd); /* a later run takes the journals left, lock file and all */
    }
    pj->lock_fd = -1;
    if (pj->dir[0])
        rmdir(pj->dir); /* only when empty */
    free(pj->proc);
    pj->proc = NULL;
    pj->nproc = 0;
}

/* "SIGKILL" and the like, for a note (strsignal says "Killed"). */
static const char *signal_name(int sig, char *buf, size_t size)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},
        {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGILL, "SIGILL"},   {SIGXCPU, "SIGXCPU"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGQUIT, "SIGQUIT"}, {SIGSYS, "SIGSYS"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    snprintf(buf, size, "signal %d", sig);
    return buf;
}

void profile_journal_note_kill(struct rk_ctx *ctx, const struct profile_journal *pj,
                               int64_t capture, const char *prog, int sig)
{
    int unfinished = 0;
    int64_t kept = 0, kept_counters = 0;
    for (int i = 0; i < pj->nproc; i++)
        if (!pj->proc[i].ended) {
            unfinished++;
            kept += pj->proc[i].stored;
            kept_counters += pj->proc[i].with_counters;
        }
    if (!sig && !unfinished)
        return;
    char what[1000], name[32];
    if (sig)
        snprintf(what, sizeof what,
                 "'%s' was killed by %s: %lld launches recorded before it died are stored in "
                 "capture %lld (%lld with counters), %lld of them from %d process%s that did "
                 "not finish",
                 prog, signal_name(sig, name, sizeof name), (long long)pj->stored,
                 (long long)capture, (long long)pj->with_counters, (long long)kept, unfinished,
                 unfinished == 1 ? "" : "es");
    else
        snprintf(what, sizeof what,
                 "%d process%s of '%s' did not finish (killed?): %lld launches they recorded "
                 "before are stored in capture %lld (%lld with counters)",
                 unfinished, unfinished == 1 ? "" : "es", prog, (long long)kept, (long long)capture,
                 (long long)kept_counters);
    rk_warn("%s", what);
    struct db_capture c;
    if (db_get_capture(ctx->db, capture, &c) != RK_OK)
        return;
    size_t len = (c.note ? strlen(c.note) + 2 : 0) + strlen(what) + 1;
    char *note = malloc(len);
    if (note) {
        snprintf(note, len, "%s%s%s", c.note ? c.note : "", c.note ? "; " : "", what);
        db_capture_note(ctx->db, capture, note);
        free(note);
    }
    db_capture_release(&c);
}
