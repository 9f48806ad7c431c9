/*
 * fake_backend.h - the scripted CUPTI stand-in of fake_backend.c, for session tests.
 */
#ifndef RK_TEST_FAKE_BACKEND_H
#define RK_TEST_FAKE_BACKEND_H

#include "backend.h"

#define FAKE_MAX 4096

struct fake {
    /* error codes to return (0 = success) */
    int rc_trace_start, rc_enable, rc_start, rc_stop, rc_decode, rc_reset;
    const char *unknown_raw; /* host_check and prof_enable reject this raw name */
    int nan_metric;          /* 1-based raw index evaluated as NaN; 0 = none */
    int extra_ranges;        /* decode reports this many ranges more than ran */
    /* what the session did */
    int trace_starts, timing_only, tracing, flushes, enables, starts, stops, decodes, resets,
        disables, host_checks, polls;
    int started, nraw, max_ranges;
    int user_replay_ok; /* what the last prof_enable was allowed */
    void *prof_ctx;
    struct bk_hooks hooks;
    /* ranges of the open batch and of the last decoded one */
    uint32_t range_corr[FAKE_MAX], decoded_corr[FAKE_MAX];
    int nranges, ndecoded;
    /* Activity records waiting for trace_flush */
    struct bk_kernel queued[FAKE_MAX];
    int nqueued;
};

extern struct fake fake;
extern const struct bk_ops fake_ops;

/* Clears the script and makes the session use the fake backend. */
void fake_reset(void);
/* One launch (enter, the kernel, exit) on ctx with correlation id corr. */
void fake_launch(void *ctx, uint32_t corr, const char *symbol);
/* A runtime launch with a driver launch inside it, which knows the context. */
void fake_launch_nested(void *outer_ctx, uint32_t outer_corr, void *inner_ctx, uint32_t inner_corr,
                        const char *symbol);
void fake_graph_launch(void *ctx, uint32_t corr);
/* A driver launch that knows the ids its Activity record will carry. */
void fake_launch_ids(void *ctx, uint32_t corr, const char *symbol, uint32_t device,
                     uint32_t stream);
/* The program called cu(da)ProfilerStart (1) or cu(da)ProfilerStop (0). */
void fake_profiler(int on);
/* A synchronizing call returned on ctx. */
void fake_sync(void *ctx);
/* Queues the Activity record of a kernel (grid.x = corr, block 256, 32 registers). */
void fake_record(uint32_t corr, const char *name, uint64_t start, uint64_t end,
                 uint64_t graph_node);

#endif
