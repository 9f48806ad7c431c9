/*
 * test_journal.c - db/journal.c: measurements written by a process that may be killed, stored by
 * the one that outlives it. Label `unit`.
 *
 * Case map:
 *   J1 round trip: every field of a measurement (NULL text, NaN, tabs, newlines and backslashes in
 *      text, the NVTX ranges) and its metrics come back from the database as written; notes
 *      give the mode and the end; lines are stored in the order written
 *   J2 a last line torn by the writer's death is skipped and counted; the rest is stored
 *   J3 a writer killed with SIGKILL: its journal is busy while it lives, free afterwards, and
 *      every line written before the kill is stored; no end note
 *   J4 an empty journal stores nothing; a file that is not a journal is refused with one line
 *      and nothing stored
 *   J5 a journal whose rows cannot be stored (a capture that is not there) stores none of them
 *   J6 the folder: journals listed per capture in order; the capture lock excludes a second
 *      holder until it is let go, and its file is removed
 *   J7 a folding process killed with SIGKILL mid-transaction leaves a database that passes
 *      integrity_check with all of the journal or none of it
 */
#define _GNU_SOURCE
#include "db_fixture.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A fresh journal folder in the temporary folder. */
static const char *new_dir(char *buf, size_t size)
{
    static int n;
    snprintf(buf, size, "%s/journal-%d", tmpdir, n++);
    assert_int_equal(mkdir(buf, 0755), 0);
    return buf;
}

/* A new database with one profile capture; *cap gets its id. */
static struct db *db_with_capture(const char *stem, int64_t *cap)
{
    char path[512];
    struct db *db = NULL;
    open_rw(new_path(path, sizeof path, stem), &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_PROFILE, "roofkit profile", "t", cap),
                     RK_OK);
    return db;
}

/* db_with_capture and a new journal of its capture (path gets its name): the journal's fd. */
static int with_journal(const char *stem, struct db **db, int64_t *cap, char *path, size_t size)
{
    char dir[512];
    int fd = -1;
    *db = db_with_capture(stem, cap);
    assert_int_equal(db_journal_create(new_dir(dir, sizeof dir), *cap, path, size, &fd), RK_OK);
    return fd;
}

/* How many measurements capture cap (0: all) holds. */
static int rows_of(struct db *db, int64_t cap)
{
    struct db_measurement_row *rows = NULL;
    int n = 0;
    assert_int_equal(db_query_measurements(db, cap, &rows, &n), RK_OK);
    db_free_measurements(rows, n);
    return n;
}

static struct db_measurement launch(const char *kernel, int64_t index)
{
    struct db_measurement m = sample_measurement(kernel);
    m.family = NULL;
    m.source = "profile";
    m.cache_state = "warm";
    m.launch_index = index;
    m.correlation_id = 1000 + index;
    return m;
}

static void expect_same(const struct db_measurement *a, const struct db_measurement *b)
{
    assert_string_equal(a->kernel, b->kernel);
    assert_true((a->family == NULL) == (b->family == NULL));
    if (a->family)
        assert_string_equal(a->family, b->family);
    assert_string_equal(a->params, b->params);
    assert_int_equal(a->m, b->m);
    assert_int_equal(a->k, b->k);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(a->grid[i], b->grid[i]);
        assert_int_equal(a->block[i], b->block[i]);
    }
    assert_int_equal(a->registers, b->registers);
    assert_int_equal(a->smem_dynamic, b->smem_dynamic);
    assert_true(a->time_median_ns == b->time_median_ns);
    assert_true(a->flops == b->flops);
    assert_true(isnan(a->bytes_l2) && isnan(b->bytes_l2));
    assert_true(isnan(a->rel_error) ? isnan(b->rel_error) : a->rel_error == b->rel_error);
    assert_int_equal(a->verified, b->verified);
    assert_string_equal(a->cache_state, b->cache_state);
    assert_string_equal(a->source, b->source);
    assert_int_equal(a->launch_index, b->launch_index);
    assert_int_equal(a->correlation_id, b->correlation_id);
    assert_true((a->nvtx == NULL) == (b->nvtx == NULL));
    if (a->nvtx)
        assert_string_equal(a->nvtx, b->nvtx);
}

/* ------------------------------------------------------------------- J1 */

static void j1_round_trip(void **state)
{
    (void)state;
    char path[1024];
    int64_t cap = 0;
    struct db *db = NULL;
    int fd = with_journal("j1", &db, &cap, path, sizeof path);
    struct db_measurement w[3] = {launch("k\tab\\le\nnew", 0), launch("plain(float*)", 1),
                                  launch("third", 2)};
    w[1].params = "{\"a\":\"x\\ty\"}";
    w[1].time_median_ns = 0.1 + 0.2;               /* exactly, through %.17g */
    w[1].nvtx = "outer/in\\/ner/;phase;Solver@x/"; /* NVTX ranges, escapes and all */
    w[2].verified = -1;
    w[2].rel_error = NAN;
    assert_int_equal(db_journal_note(fd, "mode", "counters"), RK_OK);
    assert_int_equal(db_journal_append(fd, &w[0], sample_metrics, NSAMPLE_METRICS), RK_OK);
    assert_int_equal(db_journal_append(fd, &w[1], NULL, 0), RK_OK);
    assert_int_equal(db_journal_note(fd, "mode", "timing: no permission\tto read counters"), RK_OK);
    assert_int_equal(db_journal_append(fd, &w[2], sample_metrics, 2), RK_OK);
    assert_int_equal(db_journal_note(fd, "end", ""), RK_OK);
    close(fd);

    struct db_journal_stats st;
    assert_int_equal(db_journal_fold(db, cap, path, &st), RK_OK);
    assert_int_equal(st.stored, 3);
    assert_int_equal(st.with_metrics, 2);
    assert_int_equal(st.torn, 0);
    assert_int_equal(st.bad, 0);
    assert_int_equal(st.ended, 1);
    assert_int_equal(st.pid, (long)getpid());
    assert_string_equal(st.mode, "timing: no permission\tto read counters");

    struct db_measurement_row *rows = NULL;
    int n = 0;
    assert_int_equal(db_query_measurements(db, cap, &rows, &n), RK_OK);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++)
        expect_same(&w[i], &rows[i].m);
    assert_int_equal(rows[0].n_metrics, NSAMPLE_METRICS);
    for (int i = 0; i < NSAMPLE_METRICS; i++) {
        assert_string_equal(rows[0].metrics[i].name, sample_metrics[i].name);
        assert_true((rows[0].metrics[i].raw_name == NULL) == (sample_metrics[i].raw_name == NULL));
        assert_true(isnan(sample_metrics[i].value)
                        ? isnan(rows[0].metrics[i].value)
                        : rows[0].metrics[i].value == sample_metrics[i].value);
    }
    assert_int_equal(rows[1].n_metrics, 0);
    assert_int_equal(rows[2].n_metrics, 2);
    db_free_measurements(rows, n);
    db_close(db);
}

/* ------------------------------------------------------------------- J2 */

static void j2_torn_line(void **state)
{
    (void)state;
    char path[1024];
    int64_t cap = 0;
    struct db *db = NULL;
    int fd = with_journal("j2", &db, &cap, path, sizeof path);
    struct db_measurement m = launch("k", 0);
    assert_int_equal(db_journal_append(fd, &m, sample_metrics, 3), RK_OK);
    m.launch_index = 1;
    assert_int_equal(db_journal_append(fd, &m, sample_metrics, 3), RK_OK);
    /* the writer died inside its third write */
    const char torn[] = "M\tk\t\\N\tfp64\t10240\t16";
    assert_int_equal(write(fd, torn, sizeof torn - 1), (ssize_t)(sizeof torn - 1));
    close(fd);
    struct db_journal_stats st;
    assert_int_equal(db_journal_fold(db, cap, path, &st), RK_OK);
    assert_int_equal(st.stored, 2);
    assert_int_equal(st.torn, 1);
    assert_int_equal(st.ended, 0);
    db_close(db);
}

/* ------------------------------------------------------------------- J3 */

static void j3_killed_writer(void **state)
{
    (void)state;
    char dir[512], path[1024];
    int64_t cap = 0;
    int go[2], ready[2];
    struct db *db = db_with_capture("j3", &cap);
    new_dir(dir, sizeof dir);
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = -1;
        char p[1024], c;
        if (db_journal_create(dir, cap, p, sizeof p, &fd) != RK_OK)
            _exit(2);
        for (int i = 0; i < 40; i++) {
            struct db_measurement m = launch("killed_kernel", i);
            if (db_journal_append(fd, &m, sample_metrics, NSAMPLE_METRICS) != RK_OK)
                _exit(3);
        }
        if (write(ready[1], p, strlen(p) + 1) < 0 || read(go[0], &c, 1) < 0)
            _exit(4);
        raise(SIGKILL); /* as the OOM killer would: no exit handler runs */
        _exit(5);
    }
    ssize_t got = read(ready[0], path, sizeof path);
    assert_true(got > 0);
    assert_int_equal(db_journal_busy(path), 1); /* its writer lives */
    assert_int_equal(write(go[1], "x", 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(db_journal_busy(path), 0);
    struct db_journal_stats st;
    assert_int_equal(db_journal_fold(db, cap, path, &st), RK_OK);
    assert_int_equal(st.stored, 40);
    assert_int_equal(st.with_metrics, 40);
    assert_int_equal(st.ended, 0);
    assert_int_equal(st.pid, (long)pid);
    db_close(db);
}

/* ------------------------------------------------------------------- J4 */

static void j4_empty_and_foreign(void **state)
{
    (void)state;
    char dir[512], path[1024];
    int64_t cap = 0;
    struct db *db = db_with_capture("j4", &cap);
    struct db_journal_stats st;
    snprintf(path, sizeof path, "%s/c%lld-1-0.jrn", new_dir(dir, sizeof dir), (long long)cap);
    write_file(path, "", 0);
    assert_int_equal(db_journal_fold(db, cap, path, &st), RK_OK);
    assert_int_equal(st.stored, 0);
    write_file(path, "M\tk\n", 4);
    stderr_begin();
    assert_int_equal(db_journal_fold(db, cap, path, &st), RK_EIO);
    const char *err = stderr_end();
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "is not a journal of this roofkit"));
    assert_int_equal(st.stored, 0);
    assert_int_equal(rows_of(db, cap), 0);
    db_close(db);
}

/* ------------------------------------------------------------------- J5 */

static void j5_all_or_none(void **state)
{
    (void)state;
    char path[1024];
    int64_t cap = 0;
    struct db *db = NULL;
    int fd = with_journal("j5", &db, &cap, path, sizeof path);
    for (int i = 0; i < 5; i++) {
        struct db_measurement m = launch("k", i);
        assert_int_equal(db_journal_append(fd, &m, sample_metrics, 2), RK_OK);
    }
    close(fd);
    struct db_journal_stats st;
    stderr_begin();
    assert_int_not_equal(db_journal_fold(db, cap + 99, path, &st), RK_OK); /* no such capture */
    stderr_end();
    assert_int_equal(st.stored, 0);
    assert_int_equal(rows_of(db, 0), 0);
    /* and the same file into the right capture afterwards: all of it */
    assert_int_equal(db_journal_fold(db, cap, path, &st), RK_OK);
    assert_int_equal(st.stored, 5);
    db_close(db);
}

/* ------------------------------------------------------------------- J6 */

static void j6_folder(void **state)
{
    (void)state;
    char dir[512], p[1024];
    int fds[4], lock = -1, lock2 = -1;
    new_dir(dir, sizeof dir);
    assert_int_equal(db_journal_create(dir, 7, p, sizeof p, &fds[0]), RK_OK);
    assert_int_equal(db_journal_create(dir, 3, p, sizeof p, &fds[1]), RK_OK);
    assert_int_equal(db_journal_create(dir, 7, p, sizeof p, &fds[2]), RK_OK); /* an exec'd one */
    write_file(strcat(strcpy(p, dir), "/notes.txt"), "x", 1);
    struct db_journal_file *f = NULL;
    int n = 0;
    assert_int_equal(db_journal_list(dir, 0, &f, &n), RK_OK);
    assert_int_equal(n, 3);
    assert_int_equal(f[0].capture_id, 3);
    assert_int_equal(f[1].capture_id, 7);
    assert_int_equal(f[2].capture_id, 7);
    assert_int_equal(f[1].pid, (long)getpid());
    assert_true(strcmp(f[1].path, f[2].path) < 0);
    db_journal_free_list(f, n);
    assert_int_equal(db_journal_list(dir, 7, &f, &n), RK_OK);
    assert_int_equal(n, 2);
    db_journal_free_list(f, n);
    for (int i = 0; i < 3; i++)
        close(fds[i]);

    assert_int_equal(db_journal_lock_capture(dir, 7, 0, &lock), RK_OK);
    assert_int_equal(db_journal_lock_capture(dir, 7, 0, &lock2), RK_ENODATA);
    db_journal_unlock_capture(dir, 7, lock);
    snprintf(p, sizeof p, "%s/c7.lock", dir);
    assert_false(exists(p));
    assert_int_equal(db_journal_lock_capture(dir, 7, 0, &lock2), RK_OK);
    db_journal_unlock_capture(dir, 7, lock2);
    assert_int_equal(db_journal_list("/nonexistent/folder", 0, &f, &n), RK_OK);
    assert_int_equal(n, 0);
}

/* ------------------------------------------------------------------- J7 */

static void j7_fold_killed(void **state)
{
    (void)state;
    char dir[512], path[1024], dbpath[512];
    int64_t cap = 0;
    int fd = -1;
    enum { N = 20000 };
    struct db *db = NULL;
    open_rw(new_path(dbpath, sizeof dbpath, "j7"), &db);
    assert_int_equal(db_capture_begin(db, 0, DB_CAPTURE_PROFILE, "roofkit profile", "t", &cap),
                     RK_OK);
    db_close(db);
    assert_int_equal(db_journal_create(new_dir(dir, sizeof dir), cap, path, sizeof path, &fd),
                     RK_OK);
    for (int i = 0; i < N; i++) {
        struct db_measurement m = launch("many", i);
        assert_int_equal(db_journal_append(fd, &m, sample_metrics, NSAMPLE_METRICS), RK_OK);
    }
    close(fd);
    static const int delays_ms[] = {5, 40, 150, 400, -1}; /* -1: let it finish */
    for (int t = 0; t < 5; t++) {
        int delay_ms = delays_ms[t];
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            struct db *d = NULL;
            struct db_journal_stats st;
            if (db_open(dbpath, DB_RW, &d) != RK_OK)
                _exit(2);
            db_journal_fold(d, cap, path, &st);
            _exit(0);
        }
        if (delay_ms > 0) {
            usleep((useconds_t)delay_ms * 1000);
            kill(pid, SIGKILL);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_string_equal(
            raw_int(dbpath, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check "
                            "= 'ok'") == 1
                ? "ok"
                : "corrupt",
            "ok");
        long long stored = raw_int(dbpath, "SELECT count(*) FROM measurement");
        if (delay_ms > 0)
            printf("j7: a fold killed after %d ms left %lld of %d rows stored\n", delay_ms, stored,
                   N);
        assert_true(stored % N == 0); /* all of a fold, or none */
        if (delay_ms < 0)
            assert_true(stored >= N);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(j1_round_trip),    cmocka_unit_test(j2_torn_line),
        cmocka_unit_test(j3_killed_writer), cmocka_unit_test(j4_empty_and_foreign),
        cmocka_unit_test(j5_all_or_none),   cmocka_unit_test(j6_folder),
        cmocka_unit_test(j7_fold_killed),
    };
    return fixture_main(tests, sizeof tests / sizeof tests[0], NULL);
}
