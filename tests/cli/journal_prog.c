/*
 * journal_prog.c - a stand-in for a profiled CUDA program on a machine without a GPU: it writes
 * the journal that the injection library (collect/inject.c) would write for its launches, from
 * the environment `roofkit profile` sets (ROOFKIT_JOURNAL, ROOFKIT_CAPTURE), then ends the way
 * it is told. profile_kill.py runs it under `roofkit profile` to check what the parent stores
 * and records when a program dies.
 *
 * Usage: journal_prog N HOW, HOW one of
 *   exit    N launches, the end note, exit 0
 *   kill    N launches, then SIGKILL to itself (the OOM killer: no exit handler runs)
 *   segv    N launches, then SIGSEGV (a crash)
 *   hang    N launches, "ready" on stdout, then sleep until killed
 *   daemon  N launches and exit 0, leaving a child that writes N more to a journal of its own
 *           over 3 s and then finishes (a process that outlives the program)
 */
#define _GNU_SOURCE
#include "common.h"
#include "db.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int journal(void)
{
    const char *dir = getenv("ROOFKIT_JOURNAL"), *cap = getenv("ROOFKIT_CAPTURE");
    char path[4096];
    int fd = -1;
    if (!dir || !cap || db_journal_create(dir, atoll(cap), path, sizeof path, &fd) != RK_OK) {
        fprintf(stderr, "journal_prog: no journal (ROOFKIT_JOURNAL, ROOFKIT_CAPTURE)\n");
        exit(3);
    }
    db_journal_note(fd, "mode", "counters");
    return fd;
}

static void launches(int fd, int n, int first)
{
    static const struct db_metric mt[2] = {
        {0, 0, "dram_read_bytes", "dram__bytes_read.sum", 1048576.0, "byte"},
        {0, 0, "gpu_time", "gpu__time_duration.sum", 2500.0, "nsecond"},
    };
    for (int i = first; i < first + n; i++) {
        char params[96];
        struct db_measurement m;
        memset(&m, 0, sizeof m);
        snprintf(params, sizeof params, "{\"pid\":%ld,\"mode\":\"counters\"}", (long)getpid());
        m.kernel = i % 2 ? "scale(float*, float const*, float, unsigned long)" : "triad";
        m.params = params;
        m.grid[0] = m.grid[1] = m.grid[2] = 1;
        m.block[0] = 256, m.block[1] = m.block[2] = 1;
        m.reps = 1;
        m.time_min_ns = m.time_median_ns = m.time_max_ns = 2500.0;
        m.flops = m.bytes_dram = m.bytes_l2 = m.bytes_l1 = m.bytes_shared = m.rel_error = NAN;
        m.verified = -1;
        m.cache_state = "warm";
        m.source = "profile";
        m.launch_index = i;
        m.correlation_id = 100 + i;
        if (db_journal_append(fd, &m, mt, 2) != RK_OK)
            exit(4);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int n = atoi(argv[1]), fd = journal();
    const char *how = argv[2];
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* a crash leaves no core file behind */
    launches(fd, n, 0);
    if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(how, "segv") == 0) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn it into an exit */
        raise(SIGSEGV);
    }
    if (strcmp(how, "hang") == 0) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (strcmp(how, "daemon") == 0) {
        int ready[2];
        char c;
        if (pipe(ready) != 0)
            return 6;
        pid_t pid = fork();
        if (pid == 0) {
            FILE *null = freopen("/dev/null", "w", stdout);
            if (!null || !freopen("/dev/null", "w", stderr))
                _exit(5); /* roofkit's caller must not wait for our output */
            close(fd);    /* the parent's journal ends with the parent */
            int cfd = journal();
            if (write(ready[1], "x", 1) != 1) /* its journal exists before the program ends */
                _exit(6);
            for (int i = 0; i < n; i++) {
                launches(cfd, 1, i);
                usleep(3000000 / (unsigned)(n > 0 ? n : 1));
            }
            db_journal_note(cfd, "end", "");
            _exit(0);
        }
        if (pid < 0 || read(ready[0], &c, 1) != 1)
            return 6;
    }
    db_journal_note(fd, "end", "");
    return 0;
}
