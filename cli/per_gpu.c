/*
 * per_gpu.c - one roofkit per GPU for `--device all` (or a list): the parent starts
 * `roofkit --db DB --device G CMD ARGS...` for each GPU and waits for them.
 *
 * Why processes and not threads: a CUDA context per process keeps each GPU's measurement
 * alone (no shared runtime locks, no shared host thread), a crash on one GPU cannot take the
 * others down, and each child is exactly the one-GPU roofkit every test covers. Why a fresh
 * program (posix_spawn of /proc/self/exe) rather than fork(): the parent may have initialised
 * CUDA to resolve the list, and CUDA does not survive fork().
 *
 * The children write into the one database (SQLite serialises their short transactions; each
 * row commits on its own). Their output comes through pipes and is written here line by line
 * with "[gpu G] " in front, so that lines of two GPUs never interleave mid-line. A child learns
 * how many other GPUs are measured at the same time from RK_PER_GPU_ENV, and stores it with its
 * capture. SIGINT and SIGTERM that reach the parent are forwarded once to the running children,
 * which finish their current row and stop as usual.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "common.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* One child: its GPU, pid, the read ends of its stdout and stderr, and their partial lines. */
struct child {
    int gpu;
    pid_t pid;
    int fd[2];
    struct rk_buf line[2];
    int status; /* waitpid's */
};

/* Writes the complete lines of buf (and, at_eof, the rest) with the child's prefix. */
static void flush_lines(struct child *c, int which, int at_eof)
{
    struct rk_buf *b = &c->line[which];
    FILE *to = which ? stderr : stdout;
    size_t start = 0;
    if (!b->s)
        return;
    for (size_t i = 0; i < b->len; i++) {
        if (b->s[i] == '\n') {
            fprintf(to, "[gpu %d] %.*s\n", c->gpu, (int)(i - start), b->s + start);
            start = i + 1;
        }
    }
    if (at_eof && start < b->len) {
        fprintf(to, "[gpu %d] %.*s\n", c->gpu, (int)(b->len - start), b->s + start);
        start = b->len;
    }
    fflush(to);
    memmove(b->s, b->s + start, b->len - start);
    b->len -= start;
    b->s[b->len] = '\0';
}

/* The child's argv: roofkit [--quiet] --db DB --device G ARGS... (malloc'd; strings borrowed
 * but for the device number, in *num). */
static char **child_argv(const struct rk_ctx *ctx, int argc, char **argv, int gpu, char *num,
                         size_t numlen)
{
    char **a = calloc((size_t)argc + 8, sizeof *a);
    int k = 0;
    if (!a)
        return NULL;
    snprintf(num, numlen, "%d", gpu);
    a[k++] = (char *)ctx->argv0;
    if (ctx->quiet)
        a[k++] = "--quiet";
    a[k++] = "--db";
    a[k++] = (char *)ctx->db_path;
    a[k++] = "--device";
    a[k++] = num;
    for (int i = 0; i < argc; i++)
        a[k++] = argv[i];
    a[k] = NULL;
    return a;
}

static int start_child(const struct rk_ctx *ctx, int argc, char **argv, struct child *c,
                       int concurrent)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, rc;
    char num[16], env_val[16];
    char **a = child_argv(ctx, argc, argv, c->gpu, num, sizeof num);
    posix_spawn_file_actions_t fa;

    if (!a)
        return rk_error(RK_ENOMEM, "out of host memory");
    if (pipe(out) != 0 || pipe(err) != 0) {
        free(a);
        return rk_error(RK_EIO, "cannot make a pipe for the roofkit of GPU %d: %s", c->gpu,
                        strerror(errno));
    }
    /* The child inherits the environment with the count of GPUs measured beside it. */
    snprintf(env_val, sizeof env_val, "%d", concurrent);
    setenv(RK_PER_GPU_ENV, env_val, 1);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, err[0]);
    rc = posix_spawn(&c->pid, "/proc/self/exe", &fa, NULL, a, environ);
    posix_spawn_file_actions_destroy(&fa);
    unsetenv(RK_PER_GPU_ENV);
    close(out[1]);
    close(err[1]);
    free(a);
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        return rk_error(RK_EIO, "cannot start roofkit for GPU %d: %s", c->gpu, strerror(rc));
    }
    c->fd[0] = out[0];
    c->fd[1] = err[0];
    return RK_OK;
}

/* Pumps the output of children [0, n) until all have closed it, then reaps them. */
static void pump(struct child *c, int n)
{
    int open_fds = 0, forwarded = 0;
    struct pollfd *p = calloc((size_t)n * 2, sizeof *p);
    char buf[4096];

    /* SIGINT and SIGTERM stay blocked but while ppoll waits, so one that comes between the
     * check below and the wait interrupts the wait instead of waiting for output to come */
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &old);
    for (int i = 0; i < n; i++)
        open_fds += (c[i].fd[0] >= 0) + (c[i].fd[1] >= 0);
    while (open_fds > 0 && p) {
        for (int i = 0; i < n; i++)
            for (int w = 0; w < 2; w++) {
                p[2 * i + w].fd = c[i].fd[w];
                p[2 * i + w].events = POLLIN;
            }
        if (rk_interrupted && !forwarded) {
            for (int i = 0; i < n; i++)
                if (c[i].pid > 0)
                    kill(c[i].pid, rk_interrupted);
            forwarded = 1;
        }
        if (ppoll(p, (nfds_t)n * 2, NULL, &old) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < n; i++)
            for (int w = 0; w < 2; w++) {
                struct pollfd *q = &p[2 * i + w];
                ssize_t got;
                if (q->fd < 0 || !(q->revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                got = read(q->fd, buf, sizeof buf);
                if (got > 0) {
                    rk_buf_printf(&c[i].line[w], "%.*s", (int)got, buf);
                    flush_lines(&c[i], w, 0);
                } else if (got == 0 || errno != EINTR) {
                    flush_lines(&c[i], w, 1);
                    close(c[i].fd[w]);
                    c[i].fd[w] = -1;
                    open_fds--;
                }
            }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(p);
    for (int i = 0; i < n; i++) {
        while (c[i].pid > 0 && waitpid(c[i].pid, &c[i].status, 0) < 0 && errno == EINTR)
            ;
        for (int w = 0; w < 2; w++) {
            if (c[i].fd[w] >= 0)
                close(c[i].fd[w]);
            c[i].fd[w] = -1;
            rk_buf_release(&c[i].line[w]);
        }
    }
}

/* The exit code a child's wait status stands for. */
static int child_rc(const struct child *c)
{
    if (c->pid <= 0)
        return RK_EFAIL;
    if (WIFEXITED(c->status))
        return WEXITSTATUS(c->status);
    if (WIFSIGNALED(c->status))
        return WTERMSIG(c->status) == SIGINT || WTERMSIG(c->status) == SIGTERM ? RK_EINTR
                                                                               : RK_EFAIL;
    return RK_EFAIL;
}

int rk_run_per_gpu(struct rk_ctx *ctx, int argc, char **argv, const int *gpus, int n)
{
    struct child *c = calloc((size_t)n, sizeof *c);
    int rc = RK_OK, started = 0;
    double t0 = rk_now_s();

    if (!c)
        return rk_error(RK_ENOMEM, "out of host memory");
    rk_info("%s on %d GPUs %s, one roofkit each, into %s", argv[0], n,
            ctx->serial ? "one after another" : "at once", ctx->db_path);
    for (int i = 0; i < n; i++) {
        c[i].gpu = gpus[i];
        c[i].fd[0] = c[i].fd[1] = -1;
    }
    for (int i = 0; i < n && rc == RK_OK && !rk_interrupted; i++) {
        rc = start_child(ctx, argc, argv, &c[i], ctx->serial ? 0 : n - 1);
        if (rc == RK_OK)
            started++;
        if (ctx->serial && rc == RK_OK)
            pump(&c[i], 1);
    }
    if (!ctx->serial)
        pump(c, started);
    for (int i = 0; i < started; i++) {
        int crc = child_rc(&c[i]);
        if (crc != RK_OK) {
            rk_warn("the roofkit of GPU %d ended with exit code %d (%s)", c[i].gpu, crc,
                    rk_strerror(crc));
            if (rc == RK_OK)
                rc = crc;
        }
    }
    if (rc == RK_OK && rk_interrupted)
        rc = RK_EINTR;
    rk_info("%s on %d GPUs took %.1f s", argv[0], n, rk_now_s() - t0);
    free(c);
    return rc;
}
