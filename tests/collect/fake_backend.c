/*
 * fake_backend.c - a scripted stand-in for backend_cupti.cpp (collect/backend.h), so that the
 * session's decisions run on a CPU: tests "launch" kernels by calling the hooks the session
 * registered, choose the CUPTI error code each call returns, and read back what the session
 * asked for.
 *
 * Counter values are derived from the launch, so a wrong range-to-launch match shows: range i
 * of a batch evaluates metric j to 1000 * corr(i) + j, where corr(i) is the correlation id of
 * the i-th launch made while the profiler was started. fake.nan_metric makes one metric NaN.
 */
#include "fake_backend.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct fake fake;

static const char *f_strerror(int code)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "FAKE_ERROR_%d", code);
    return code ? buf : "FAKE_SUCCESS";
}

static int f_host_check(const char *chip, const char *raw, char *unit, size_t unit_size)
{
    (void)chip;
    fake.host_checks++;
    if (fake.unknown_raw && strcmp(raw, fake.unknown_raw) == 0)
        return BK_INVALID_METRIC_NAME;
    snprintf(unit, unit_size, "fakeunit");
    return BK_SUCCESS;
}

static int f_host_passes(const char *chip, const char *const *raw, int n, int *passes)
{
    (void)chip;
    (void)raw;
    *passes = n > 0 ? 1 + n / 20 : 0;
    return BK_SUCCESS;
}

static int f_chip_name(int device, char *buf, size_t size)
{
    (void)device;
    snprintf(buf, size, "GH100");
    return BK_SUCCESS;
}

static int f_trace_start(const struct bk_hooks *hooks, int timing_only)
{
    fake.trace_starts++;
    fake.timing_only = timing_only;
    if (fake.rc_trace_start)
        return fake.rc_trace_start;
    fake.hooks = *hooks;
    fake.tracing = 1;
    return BK_SUCCESS;
}

static int f_trace_flush(void)
{
    fake.flushes++;
    /* Deliver the queued Activity records, newest first: order must not matter. */
    for (int i = fake.nqueued - 1; i >= 0; i--)
        fake.hooks.kernel(fake.hooks.arg, &fake.queued[i]);
    fake.nqueued = 0;
    return BK_SUCCESS;
}

static void f_trace_stop(void)
{
    fake.tracing = 0;
}

/* Records of finished kernels: the fake's queue, as trace_flush delivers it. */
static int f_trace_poll(void)
{
    fake.polls++;
    return f_trace_flush();
}

static int f_prof_enable(void *ctx, const char *const *raw, int n, int max_ranges,
                         int user_replay_ok, void **prof, int *passes, char *chip, size_t chip_size)
{
    fake.enables++;
    fake.user_replay_ok = user_replay_ok;
    snprintf(chip, chip_size, "GH100");
    int rc = fake.rc_enable;
    if (rc == BK_INVALID_METRIC_NAME && fake.unknown_raw) {
        int has = 0;
        for (int i = 0; i < n; i++)
            has |= strcmp(raw[i], fake.unknown_raw) == 0;
        rc = has ? BK_INVALID_METRIC_NAME : BK_SUCCESS;
    }
    if (rc)
        return rc;
    fake.nraw = n;
    fake.max_ranges = max_ranges;
    fake.prof_ctx = ctx;
    *passes = 2;
    *prof = &fake; /* any non-NULL handle */
    return BK_SUCCESS;
}

static int f_prof_start(void *prof)
{
    (void)prof;
    fake.starts++;
    if (fake.rc_start)
        return fake.rc_start;
    fake.started = 1;
    return BK_SUCCESS;
}

static int f_prof_stop(void *prof)
{
    (void)prof;
    fake.stops++;
    fake.started = 0;
    return fake.rc_stop;
}

static int f_prof_decode(void *prof, int *nranges, int *ndropped)
{
    (void)prof;
    fake.decodes++;
    fake.ndecoded = fake.nranges;
    memcpy(fake.decoded_corr, fake.range_corr, sizeof fake.decoded_corr);
    *nranges = fake.nranges + fake.extra_ranges;
    *ndropped = 0;
    fake.nranges = 0;
    return fake.rc_decode;
}

static int f_prof_eval(void *prof, int range, double *values)
{
    (void)prof;
    if (range < 0 || range >= fake.ndecoded)
        return BK_UNKNOWN;
    for (int j = 0; j < fake.nraw; j++)
        values[j] = j == fake.nan_metric - 1 ? NAN : 1000.0 * fake.decoded_corr[range] + j;
    return BK_SUCCESS;
}

static int f_prof_reset(void *prof)
{
    (void)prof;
    fake.resets++;
    return fake.rc_reset;
}

static int f_prof_dump(void *prof, const char *path)
{
    (void)prof;
    (void)path;
    return BK_SUCCESS;
}

static void f_prof_disable(void *prof)
{
    (void)prof;
    fake.disables++;
}

const struct bk_ops fake_ops = {
    "fake",        f_strerror,   f_host_check,  f_host_passes,  f_chip_name,  f_trace_start,
    f_trace_flush, f_trace_stop, f_prof_enable, f_prof_start,   f_prof_stop,  f_prof_decode,
    f_prof_eval,   f_prof_reset, f_prof_dump,   f_prof_disable, f_trace_poll, NULL,
};

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
    bk_active = &fake_ops;
}

static struct bk_launch mk(void *ctx, uint32_t corr, const char *symbol, int graph)
{
    struct bk_launch l;
    memset(&l, 0, sizeof l);
    l.ctx = ctx;
    l.corr = corr;
    l.symbol = symbol;
    l.graph = graph;
    l.registers = l.static_smem = l.local_mem = -1;
    return l;
}

void fake_launch(void *ctx, uint32_t corr, const char *symbol)
{
    struct bk_launch l = mk(ctx, corr, symbol, 0);
    fake.hooks.launch_enter(fake.hooks.arg, &l, 0);
    if (fake.started && fake.nranges < FAKE_MAX)
        fake.range_corr[fake.nranges++] = corr; /* the kernel runs inside a range */
    fake.hooks.launch_exit(fake.hooks.arg, &l, 0);
}

void fake_launch_nested(void *outer_ctx, uint32_t outer_corr, void *inner_ctx, uint32_t inner_corr,
                        const char *symbol)
{
    struct bk_launch outer = mk(outer_ctx, outer_corr, symbol, 0);
    struct bk_launch inner = mk(inner_ctx, inner_corr, symbol, 0);
    /* the driver call knows the configuration and ptxas's registers */
    inner.has_config = 1;
    inner.grid[0] = 7, inner.grid[1] = inner.grid[2] = 1;
    inner.block[0] = 128, inner.block[1] = inner.block[2] = 1;
    inner.dynamic_smem = 2048;
    inner.registers = 12;
    inner.static_smem = 1024;
    inner.local_mem = 0;
    fake.hooks.launch_enter(fake.hooks.arg, &outer, 0);
    fake.hooks.launch_enter(fake.hooks.arg, &inner, 1);
    if (fake.started && fake.nranges < FAKE_MAX)
        fake.range_corr[fake.nranges++] = outer_corr;
    fake.hooks.launch_exit(fake.hooks.arg, &inner, 1);
    fake.hooks.launch_exit(fake.hooks.arg, &outer, 0);
}

void fake_launch_ids(void *ctx, uint32_t corr, const char *symbol, uint32_t device, uint32_t stream)
{
    struct bk_launch l = mk(ctx, corr, symbol, 0);
    l.has_ids = 1;
    l.device = device;
    l.context = 1;
    l.stream = stream;
    l.has_config = 1; /* the driver call: the ids come with its configuration */
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = l.block[1] = l.block[2] = 32;
    fake.hooks.launch_enter(fake.hooks.arg, &l, 0);
    fake.hooks.launch_exit(fake.hooks.arg, &l, 0);
}

void fake_profiler(int on)
{
    fake.hooks.profiler(fake.hooks.arg, on);
}

void fake_sync(void *ctx)
{
    fake.hooks.sync(fake.hooks.arg, ctx);
}

void fake_graph_launch(void *ctx, uint32_t corr)
{
    struct bk_launch l = mk(ctx, corr, NULL, 1);
    fake.hooks.launch_enter(fake.hooks.arg, &l, 0);
    fake.hooks.launch_exit(fake.hooks.arg, &l, 0);
}

void fake_record(uint32_t corr, const char *name, uint64_t start, uint64_t end, uint64_t graph_node)
{
    if (fake.nqueued == FAKE_MAX)
        return;
    struct bk_kernel *k = &fake.queued[fake.nqueued++];
    memset(k, 0, sizeof *k);
    k->corr = corr;
    k->name = name;
    k->grid[0] = corr;
    k->grid[1] = k->grid[2] = 1;
    k->block[0] = 256;
    k->block[1] = k->block[2] = 1;
    k->registers = 32;
    k->static_smem = 1024;
    k->dynamic_smem = 2048;
    k->start = start;
    k->end = end;
    k->graph_node = graph_node;
}
