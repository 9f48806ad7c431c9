/*
 * gnuplot.c - writing gnuplot scripts and data files, and running gnuplot, for the charts of
 * charts.c and roofline.c (internal.h): quoting, data values ('?' missing), the head every
 * script shares, the list of charts with plots/all.gp, and the one gnuplot process that draws
 * them all (starting gnuplot costs more than drawing).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* Appends s as a gnuplot single-quoted string. */
void rp_gp_str(struct rp_buf *b, const char *s)
{
    rp_buf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            rp_buf_puts(b, "''");
        else if (*s == '\n')
            rp_buf_puts(b, " ");
        else
            rp_buf_add(b, s, 1);
    }
    rp_buf_puts(b, "'");
}

/* A data value: "?" for a missing one. */
void rp_dat_num(struct rp_buf *b, double v)
{
    if (isfinite(v))
        rp_buf_printf(b, " %.9g", v);
    else
        rp_buf_puts(b, " ?");
}

/* A number for a script: gnuplot's NaN for a missing one. */
const char *rp_gpv(char *buf, double v)
{
    if (isfinite(v))
        snprintf(buf, 32, "%.6g", v);
    else
        snprintf(buf, 32, "NaN");
    return buf;
}

void rp_file_safe(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            *s = '_';
}

/* height: the SVG's height in pixels; key: gnuplot's `set key` arguments. Charts with
 * many series put the key below the plot, so the plot keeps the page's width. */
void rp_gp_head_sized(struct rp_buf *s, const struct rp_chart *c, const char *what, int height,
                      const char *key)
{
    rp_gp_head_wh(s, c, what, 960, height, key);
}

void rp_gp_head_wh(struct rp_buf *s, const struct rp_chart *c, const char *what, int width,
                   int height, const char *key)
{
    rp_buf_printf(s,
                  "# %s.gp - %s\n"
                  "# Written by `roofkit report`. Edit it and run `gnuplot %s.gp` in this folder\n"
                  "# to re-plot %s.svg; the data are in %s.dat ('?' = missing value).\n",
                  c->name, what, c->name, c->name, c->name);
    rp_buf_printf(s,
                  "reset\nset encoding utf8\nset terminal svg size %d,%d noenhanced font "
                  "'Helvetica,12' background rgb 'white'\n",
                  width, height);
    rp_buf_printf(s, "set output '%s.svg'\nset datafile missing '?'\nset title ", c->name);
    rp_gp_str(s, c->title);
    rp_buf_printf(s, "\nset grid\nset key %s\nset border lc rgb '#444444'\n", key);
}

void rp_gp_head(struct rp_buf *s, const struct rp_chart *c, const char *what)
{
    rp_gp_head_sized(s, c, what, 600, "outside right top spacing 1.1");
}

/* Adds chart c with script and data; takes ownership of nothing. */
void rp_chart_add(struct rp_charts *cs, struct rp_out *o, const struct rp_chart *c,
                  struct rp_buf *script, struct rp_buf *data)
{
    char rel[160];
    if (cs->rc != RK_OK)
        return;
    if (script->oom || data->oom) {
        cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c->name);
        return;
    }
    rp_buf_puts(script, "unset output\n");
    if (cs->n == cs->cap) {
        int cap = cs->cap ? 2 * cs->cap : 16;
        struct rp_chart *p = realloc(cs->c, (size_t)cap * sizeof *p);
        if (!p) {
            cs->rc = rk_error(RK_ENOMEM, "out of memory writing chart %s", c->name);
            return;
        }
        cs->c = p;
        cs->cap = cap;
    }
    snprintf(rel, sizeof rel, "plots/%s.dat", c->name);
    cs->rc = rp_out_write(o, rel, data->p ? data->p : "", data->len);
    snprintf(rel, sizeof rel, "plots/%s.gp", c->name);
    if (cs->rc == RK_OK)
        cs->rc = rp_out_write(o, rel, script->p, script->len);
    if (cs->rc != RK_OK)
        return;
    cs->c[cs->n++] = *c;
    rp_buf_printf(&cs->all, "load '%s.gp'\n", c->name);
}

/* -------------------------------------------------------------- running it */

/* The gnuplot program to run, or NULL when it cannot be found. */
static char *find_program(const char *given)
{
    const char *path = getenv("PATH");
    if (given && strchr(given, '/'))
        return access(given, X_OK) == 0 ? strdup(given) : NULL;
    if (!given)
        given = "gnuplot";
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *full = malloc(len + strlen(given) + 2);
        if (!full)
            return NULL;
        snprintf(full, len + strlen(given) + 2, "%.*s/%s", (int)len, len ? p : ".", given);
        if (access(full, X_OK) == 0)
            return full;
        free(full);
        p += len + (e ? 1 : 0);
        if (!e)
            break;
    }
    return NULL;
}

int rp_run_gnuplot(struct rp_out *o, const char *gnuplot)
{
    char *prog = find_program(gnuplot);
    char *plots = NULL, *log = NULL;
    int rc = RK_OK, status = 0;
    pid_t pid;

    if (!prog)
        return rk_error(RK_ENOTOOL, "gnuplot is not installed; apt-get install gnuplot-nox "
                                    "(the tables and the scripts in plots/ are written)");
    size_t len = strlen(o->dir) + 32;
    plots = malloc(len);
    log = malloc(len);
    if (!plots || !log) {
        rc = rk_error(RK_ENOMEM, "out of memory running gnuplot");
        goto out;
    }
    snprintf(plots, len, "%s/plots", o->dir);
    snprintf(log, len, "%s/plots/gnuplot.log", o->dir);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        rc = rk_error(RK_EFAIL, "cannot start gnuplot: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int nul = open("/dev/null", O_RDWR);
        if (fd < 0 || nul < 0 || chdir(plots) != 0)
            _exit(126);
        dup2(nul, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(prog, "gnuplot", "all.gp", (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            rc = rk_error(RK_EFAIL, "waiting for gnuplot failed: %s", strerror(errno));
            goto out;
        }
    }
    rp_out_record(o, "plots/gnuplot.log");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = rk_error(RK_EFAIL, "gnuplot failed on the report's scripts (%s %d); see %s",
                      WIFEXITED(status) ? "exit status" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), log);
out:
    free(prog);
    free(plots);
    free(log);
    return rc;
}
