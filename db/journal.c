/*
 * journal.c - measurements that outlive the process that made them (db.h "journal").
 *
 * Why: `roofkit profile` records the launches of a program it does not control. A program that
 * the OOM killer or a batch system's time limit ends with SIGKILL runs no exit handler, so
 * whatever it still held in memory is lost. The injection library therefore appends each
 * launch, as soon as it is complete, to a journal file of its process; `roofkit profile`, the
 * parent that survives the program, stores the journals in the database afterwards (one
 * transaction per journal), whatever way the program ended. A later `roofkit profile` on the
 * same database stores the journals that a killed parent left behind.
 *
 * Invariants:
 *   - A line is written with one write(2) on an O_APPEND descriptor: once write returns, the
 *     line is in the kernel's page cache and survives the death of the process. A process
 *     killed inside write leaves at most one torn line, the last, without its newline: the
 *     fold skips it and counts it.
 *   - The writer holds an flock on its journal for as long as it lives (forked children close
 *     their copy), so a reader can tell a journal that is still growing (db_journal_busy).
 *   - The parent holds an flock on the capture's lock file while its program runs and until it
 *     has stored the journals (db_journal_lock_capture): another roofkit recovers only the
 *     journals of captures whose lock nobody holds.
 *   - The writer side prints nothing (it runs inside the profiled program); the reader side
 *     prints its errors as db/ does.
 *
 * Files, in the journal folder that `roofkit profile` names (DB path + ".journal"):
 *   c<CAPTURE>-<PID>-<N>.jrn   one per profiled process (N makes an exec'd process's new
 *                              session a file of its own)
 *   c<CAPTURE>.lock            the parent's lock
 * Format (text): the header "roofkit-journal 3 PID", then lines of tab-separated fields:
 *   M <measurement fields, in the order of `fields` below> NMETRICS {NAME RAW VALUE UNIT}...
 *   N KEY TEXT        a note: "mode" (the writer's collection mode, "MODE: REASON") and "end"
 *                     (the writer finished and closed the journal)
 * Text is escaped (\\ \t \n \r; \N for NULL); numbers are printed so that they read back
 * exactly (%.17g, "nan").
 */
#define _GNU_SOURCE
#include "internal.h"

#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "roofkit-journal 3" /* 2: with nvtx; 3: with the energy reading */

/* The stored fields of a measurement, in line order (all of struct db_measurement but the ids,
 * which the fold gives). */
enum ftype { F_TEXT, F_I64, F_INT, F_DBL };
static const struct field {
    enum ftype type;
    size_t off;
} fields[] = {
#define OFF(f) offsetof(struct db_measurement, f)
    {F_TEXT, OFF(kernel)},
    {F_TEXT, OFF(family)},
    {F_TEXT, OFF(precision)},
    {F_I64, OFF(m)},
    {F_I64, OFF(n)},
    {F_I64, OFF(k)},
    {F_TEXT, OFF(params)},
    {F_INT, OFF(grid[0])},
    {F_INT, OFF(grid[1])},
    {F_INT, OFF(grid[2])},
    {F_INT, OFF(block[0])},
    {F_INT, OFF(block[1])},
    {F_INT, OFF(block[2])},
    {F_INT, OFF(registers)},
    {F_INT, OFF(smem_static)},
    {F_INT, OFF(smem_dynamic)},
    {F_INT, OFF(reps)},
    {F_DBL, OFF(time_min_ns)},
    {F_DBL, OFF(time_median_ns)},
    {F_DBL, OFF(time_max_ns)},
    {F_DBL, OFF(flops)},
    {F_DBL, OFF(bytes_dram)},
    {F_DBL, OFF(bytes_l2)},
    {F_DBL, OFF(bytes_l1)},
    {F_DBL, OFF(bytes_shared)},
    {F_INT, OFF(verified)},
    {F_DBL, OFF(rel_error)},
    {F_TEXT, OFF(cache_state)},
    {F_TEXT, OFF(source)},
    {F_I64, OFF(launch_index)},
    {F_I64, OFF(correlation_id)},
    {F_TEXT, OFF(nvtx)},
    {F_DBL, OFF(energy_j)},
    {F_DBL, OFF(power_w)},
    {F_DBL, OFF(sm_clock_mhz)},
    {F_DBL, OFF(temp_c)},
    {F_I64, OFF(energy_launches)},
#undef OFF
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* ------------------------------------------------------------------ writing */

static void put_text(struct rk_buf *b, const char *s)
{
    rk_buf_puts(b, "\t");
    if (!s) {
        rk_buf_puts(b, "\\N");
        return;
    }
    for (const char *p = s; *p; p++) {
        const char *esc = *p == '\\'   ? "\\\\"
                          : *p == '\t' ? "\\t"
                          : *p == '\n' ? "\\n"
                          : *p == '\r' ? "\\r"
                                       : NULL;
        if (esc) {
            rk_buf_puts(b, esc);
        } else {
            char c[2] = {*p, '\0'};
            rk_buf_puts(b, c);
        }
    }
}

static void put_double(struct rk_buf *b, double v)
{
    if (isnan(v))
        rk_buf_puts(b, "\tnan");
    else
        rk_buf_printf(b, "\t%.17g", v);
}

/* Writes all of b with one write (the page cache has it once write returns); RK_EIO. */
static int put_line(int fd, struct rk_buf *b)
{
    int rc = RK_OK;
    if (b->oom || !b->s)
        rc = RK_ENOMEM;
    else if (write(fd, b->s, b->len) != (ssize_t)b->len)
        rc = RK_EIO;
    rk_buf_release(b);
    return rc;
}

int db_journal_create(const char *dir, int64_t capture_id, char *path, size_t size, int *fd)
{
    *fd = -1;
    for (int n = 0; n < 1000; n++) {
        int w = snprintf(path, size, "%s/c%lld-%ld-%d.jrn", dir, (long long)capture_id,
                         (long)getpid(), n);
        if (w < 0 || (size_t)w >= size)
            return RK_EIO;
        int f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (f < 0 && errno == EEXIST)
            continue;
        if (f < 0)
            return RK_EIO;
        struct rk_buf b = RK_BUF_INIT;
        rk_buf_printf(&b, "%s %ld\n", MAGIC, (long)getpid());
        if (flock(f, LOCK_EX | LOCK_NB) != 0 || put_line(f, &b) != RK_OK) {
            close(f);
            unlink(path);
            return RK_EIO;
        }
        *fd = f;
        return RK_OK;
    }
    return RK_EIO;
}

int db_journal_append(int fd, const struct db_measurement *m, const struct db_metric *metrics,
                      int n)
{
    struct rk_buf b = RK_BUF_INIT;
    rk_buf_puts(&b, "M");
    for (int i = 0; i < NFIELDS; i++) {
        const char *p = (const char *)m + fields[i].off;
        switch (fields[i].type) {
        case F_TEXT:
            put_text(&b, *(const char *const *)p);
            break;
        case F_I64:
            rk_buf_printf(&b, "\t%lld", (long long)*(const int64_t *)p);
            break;
        case F_INT:
            rk_buf_printf(&b, "\t%d", *(const int *)p);
            break;
        case F_DBL:
            put_double(&b, *(const double *)p);
            break;
        }
    }
    rk_buf_printf(&b, "\t%d", n);
    for (int i = 0; i < n; i++) {
        put_text(&b, metrics[i].name);
        put_text(&b, metrics[i].raw_name);
        put_double(&b, metrics[i].value);
        put_text(&b, metrics[i].unit);
    }
    rk_buf_puts(&b, "\n");
    return put_line(fd, &b);
}

int db_journal_note(int fd, const char *key, const char *text)
{
    struct rk_buf b = RK_BUF_INIT;
    rk_buf_puts(&b, "N");
    put_text(&b, key);
    put_text(&b, text);
    rk_buf_puts(&b, "\n");
    return put_line(fd, &b);
}

/* ------------------------------------------------------------------ reading */

/* The next tab-separated field of *cur (NULL past the end); unescapes in place. *null is set for
 * \N. The line has no newline any more. */
static char *next_field(char **cur, int *null)
{
    char *s = *cur, *out, *in;
    if (!s)
        return NULL;
    char *tab = strchr(s, '\t');
    *cur = tab ? tab + 1 : NULL;
    if (tab)
        *tab = '\0';
    *null = strcmp(s, "\\N") == 0;
    for (out = in = s; *in; in++) {
        if (*in == '\\' && in[1]) {
            in++;
            *out++ = *in == 't' ? '\t' : *in == 'n' ? '\n' : *in == 'r' ? '\r' : *in;
        } else {
            *out++ = *in;
        }
    }
    *out = '\0';
    return s;
}

static int parse_i64(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = s && *s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || errno)
        return 0;
    *v = x;
    return 1;
}

static int parse_double(const char *s, double *v)
{
    char *end;
    if (!s || !*s)
        return 0;
    *v = strtod(s, &end);
    return *end == '\0';
}

/* A text field: NULL for \N, else the unescaped text (pointing into the line). */
static int get_text(char **cur, const char **out)
{
    int null = 0;
    char *s = next_field(cur, &null);
    if (!s)
        return 0;
    *out = null ? NULL : s;
    return 1;
}

/*
 * Parses an "M" line (after its tag) into *m and *mt (malloc'd, *nmt entries; the strings point
 * into the line). Returns 1, or 0 for a malformed line.
 */
static int parse_measurement(char *cur, struct db_measurement *m, struct db_metric **mt, int *nmt)
{
    int null = 0;
    int64_t v = 0;
    memset(m, 0, sizeof *m);
    *mt = NULL;
    *nmt = 0;
    for (int i = 0; i < NFIELDS; i++) {
        char *p = (char *)m + fields[i].off;
        if (fields[i].type == F_TEXT) {
            if (!get_text(&cur, (const char **)p))
                return 0;
            continue;
        }
        char *s = next_field(&cur, &null);
        if (fields[i].type == F_DBL) {
            if (!parse_double(s, (double *)p))
                return 0;
        } else if (!parse_i64(s, &v)) {
            return 0;
        } else if (fields[i].type == F_I64) {
            *(int64_t *)p = v;
        } else {
            *(int *)p = (int)v;
        }
    }
    if (!parse_i64(next_field(&cur, &null), &v) || v < 0 || v > 100000)
        return 0;
    if (v > 0 && !(*mt = calloc((size_t)v, sizeof **mt)))
        return 0;
    for (int i = 0; i < (int)v; i++) {
        struct db_metric *x = &(*mt)[i];
        if (!get_text(&cur, &x->name) || !get_text(&cur, &x->raw_name) ||
            !parse_double(next_field(&cur, &null), &x->value) || !get_text(&cur, &x->unit) ||
            !x->name) {
            free(*mt);
            *mt = NULL;
            return 0;
        }
    }
    *nmt = (int)v;
    return !cur && m->kernel && m->cache_state && m->source; /* nothing left over */
}

int db_journal_busy(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int busy = flock(fd, LOCK_EX | LOCK_NB) != 0;
    close(fd);
    return busy;
}

int db_journal_fold(struct db *db, int64_t capture_id, const char *path,
                    struct db_journal_stats *st)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = RK_OK;
    memset(st, 0, sizeof *st);
    FILE *f = fopen(path, "r");
    if (!f)
        return rk_error(RK_EIO, "cannot read the journal '%s': %s; check the folder's permissions",
                        path, strerror(errno));
    if ((len = getline(&line, &cap, f)) < 0) { /* empty: its process died before writing */
        free(line);
        fclose(f);
        return RK_OK;
    }
    if (strncmp(line, MAGIC " ", strlen(MAGIC) + 1) != 0 || line[len - 1] != '\n') {
        free(line);
        fclose(f);
        return rk_error(RK_EIO,
                        "'%s' is not a journal of this roofkit (a newer or older one, or another "
                        "file); remove it",
                        path);
    }
    st->pid = strtol(line + strlen(MAGIC) + 1, NULL, 10);
    if ((rc = db_begin(db)) != RK_OK) {
        free(line);
        fclose(f);
        return rc;
    }
    while (rc == RK_OK && (len = getline(&line, &cap, f)) >= 0) {
        struct db_measurement m;
        struct db_metric *mt = NULL;
        int nmt = 0, null = 0;
        if (line[len - 1] != '\n') { /* the writer died inside this write */
            st->torn++;
            continue;
        }
        line[len - 1] = '\0';
        char *cur = line;
        char *tag = next_field(&cur, &null);
        if (strcmp(tag, "M") == 0 && parse_measurement(cur, &m, &mt, &nmt)) {
            rc = db_insert_measurement(db, capture_id, &m, mt, nmt, NULL);
            st->stored += rc == RK_OK;
            st->with_metrics += rc == RK_OK && nmt > 0;
        } else if (strcmp(tag, "N") == 0) {
            const char *key = NULL, *text = NULL;
            if (!get_text(&cur, &key) || !get_text(&cur, &text) || !key)
                st->bad++;
            else if (strcmp(key, "mode") == 0)
                snprintf(st->mode, sizeof st->mode, "%s", text ? text : "");
            else if (strcmp(key, "end") == 0)
                st->ended = 1;
        } else {
            st->bad++;
        }
        free(mt);
    }
    free(line);
    fclose(f);
    if (rc != RK_OK) {
        db_rollback(db);
        st->stored = st->with_metrics = 0;
        return rc;
    }
    return db_commit(db);
}

/* ------------------------------------------------------------------ the folder */

int db_journal_lock_capture(const char *dir, int64_t capture_id, int wait, int *fd)
{
    char path[4096];
    *fd = -1;
    if (snprintf(path, sizeof path, "%s/c%lld.lock", dir, (long long)capture_id) >=
        (int)sizeof path)
        return RK_EIO;
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0)
        return RK_EIO;
    if (flock(f, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
        close(f);
        return RK_ENODATA; /* held by a living roofkit */
    }
    *fd = f;
    return RK_OK;
}

void db_journal_unlock_capture(const char *dir, int64_t capture_id, int fd)
{
    char path[4096];
    if (fd < 0)
        return;
    if (snprintf(path, sizeof path, "%s/c%lld.lock", dir, (long long)capture_id) < (int)sizeof path)
        unlink(path); /* while still locked: nobody takes a lock on a file being removed */
    close(fd);
}

/* Sorts journals by capture, then by name (a process's files in the order it made them). */
static int cmp_entry(const void *a, const void *b)
{
    const struct db_journal_file *x = a, *y = b;
    if (x->capture_id != y->capture_id)
        return x->capture_id < y->capture_id ? -1 : 1;
    return strcmp(x->path, y->path);
}

int db_journal_list(const char *dir, int64_t capture_id, struct db_journal_file **out, int *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = RK_OK;
    *out = NULL;
    *n = 0;
    if (!d)
        return errno == ENOENT ? RK_OK : RK_EIO;
    while ((e = readdir(d)) != NULL) {
        long long c = 0;
        long pid = 0;
        int k = 0, used = 0;
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".jrn") != 0 ||
            sscanf(e->d_name, "c%lld-%ld-%d.jrn%n", &c, &pid, &k, &used) != 3 || used != (int)len ||
            c <= 0 || (capture_id && c != capture_id))
            continue;
        struct db_journal_file *grown = realloc(*out, (size_t)(*n + 1) * sizeof **out);
        char *path = NULL;
        if (!grown || asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
            if (grown)
                *out = grown;
            rc = RK_ENOMEM;
            break;
        }
        *out = grown;
        (*out)[*n].capture_id = c;
        (*out)[*n].pid = pid;
        (*out)[(*n)++].path = path;
    }
    closedir(d);
    if (rc != RK_OK) {
        db_journal_free_list(*out, *n);
        *out = NULL;
        *n = 0;
        return rc;
    }
    if (*n > 1)
        qsort(*out, (size_t)*n, sizeof **out, cmp_entry);
    return RK_OK;
}

void db_journal_free_list(struct db_journal_file *files, int n)
{
    for (int i = 0; files && i < n; i++)
        free(files[i].path);
    free(files);
}
