/*
 * profile_journal.h - what `roofkit profile` (profile.c) asks of profile_journal.c: the journal
 * folder of its database, the lock of its capture, and storing the journals that the profiled
 * processes wrote, whatever way they ended (db.h "journal" says what a journal is).
 */
#ifndef RK_CLI_PROFILE_JOURNAL_H
#define RK_CLI_PROFILE_JOURNAL_H

#include "cli.h"
#include "db.h"

#include <limits.h>
#include <stdint.h>

/* One profiled process, as its journals tell it. */
struct pj_proc {
    long pid;
    int64_t stored, with_counters; /* launches stored from its journals, with counters */
    int ended;                     /* it wrote its end note: it finished (not killed) */
    char mode[600];                /* its last mode note: "counters", "timing: why", ... */
    double t_store;                /* seconds this roofkit spent storing its launches */
};

struct profile_journal {
    char dir[PATH_MAX]; /* DB path + ".journal" */
    int64_t capture;    /* the capture whose lock is held, 0 before */
    int lock_fd;
    struct pj_proc *proc; /* filled by profile_journal_store, one per process */
    int nproc;
    int left;                      /* journals left for a later run: their process still runs */
    int64_t stored, with_counters; /* over every process */
};

/*
 * The journal folder of the database at dbabs (an absolute path), made when missing; first
 * stores what roofkit profiles that died left there (their processes finished): one info line
 * per capture recovered, which is marked interrupted when it was still running. RK_OK, or
 * RK_EIO printed (the folder cannot be made).
 */
int profile_journal_open(struct rk_ctx *ctx, const char *dbabs, struct profile_journal *pj);

/* Holds capture's lock until profile_journal_close, so that no other roofkit takes its journals.
 * RK_OK or RK_EIO printed. */
int profile_journal_lock(struct profile_journal *pj, int64_t capture);

/*
 * After the program ended: stores the capture's journals in the database, one transaction and
 * one pj->proc entry per process, and removes them; a journal whose process still runs (a
 * descendant that outlived the program) is waited for briefly, then left for a later run with a
 * warning. RK_OK, or the first storing error (printed; the other journals are still tried and
 * a journal that failed is kept).
 */
int profile_journal_store(struct rk_ctx *ctx, struct profile_journal *pj);

/* Lets go of the lock, removes the folder when empty, frees pj->proc. */
void profile_journal_close(struct profile_journal *pj);

/*
 * The capture's status for a program that signal sig ended (0: it exited): interrupted for
 * the signals that stop a job from outside (SIGINT, SIGTERM, SIGKILL, SIGHUP, SIGXCPU, ...),
 * failed for those of a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP), done
 * otherwise.
 */
enum db_status profile_end_status(int sig);

/*
 * Appends to capture's note, and says once on stderr, how many launches were kept of a program
 * that signal sig killed (0: none) and of processes that died before finishing (pj->proc entries
 * without their end note).
 */
void profile_journal_note_kill(struct rk_ctx *ctx, const struct profile_journal *pj,
                               int64_t capture, const char *prog, int sig);

#endif /* RK_CLI_PROFILE_JOURNAL_H */
