/*
 * launch.cu - launch overhead of an empty kernel: back-to-back asynchronous
 * launches (events around a batch, time per launch), the round trip of one
 * launch followed by cudaStreamSynchronize (common's monotonic clock, rk_now_s, per
 * iteration: what a program that waits for every kernel pays), and one launch between
 * two events queued behind a read of 4 x the L2, as the kernels' measurements are timed
 * (kernels/session.cu: L2 flush, start event, launch, stop event): the shortest time such a
 * measurement can show, whatever the kernel does.
 *
 * The empty kernel has no work to verify; the check is that every launch returns
 * cudaSuccess and the stream drains.
 */
#include "device.cuh"
#include "internal.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

__global__ void k_empty(void)
{
}

struct launch_job {
    int batch;
};

/* launch_event: reps launches of the empty kernel, each between two events and queued, with
 * its events, behind a read of 4 x the L2 (a buffer zeroed once), one repetition at a time.
 * ms[i] is repetition i's time. */
static int time_event_launches(struct probes *s, int reps, double *ms)
{
    const size_t bytes = (size_t)s->dev.l2_bytes * 4;
    void *buf = NULL;
    uint32_t *sink = NULL; /* pt_k_dram_read's two words */
    int rc = RK_OK;
    cudaError_t e = cudaMalloc(&buf, bytes);
    if (e == cudaSuccess)
        e = cudaMalloc(&sink, 2 * sizeof *sink);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(buf, 0, bytes, s->stream);
    for (int i = -2; i < reps && e == cudaSuccess; i++) { /* 2 untimed repetitions first */
        float t = 0;
        pt_k_dram_read<<<4 * s->dev.sm_count, 512, 0, s->stream>>>((const uint4 *)buf,
                                                                   bytes / sizeof(uint4), sink, 0);
        e = cudaEventRecord(s->ev[0], s->stream);
        if (e == cudaSuccess)
            k_empty<<<1, 1, 0, s->stream>>>();
        if (e == cudaSuccess)
            e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaEventRecord(s->ev[1], s->stream);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(s->ev[1]);
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&t, s->ev[0], s->ev[1]);
        if (e == cudaSuccess && i >= 0)
            ms[i] = t;
        if (i % 8 == 0)
            pt_sample(s);
    }
    if (e != cudaSuccess)
        rc = rk_error(RK_ECUDA,
                      "timing one launch of an empty kernel behind a %zu MB read failed: %s",
                      bytes >> 20, cudaGetErrorString(e));
    cudaFree(sink);
    cudaFree(buf);
    return rc;
}

static int enqueue_batch(void *arg, cudaStream_t st)
{
    struct launch_job *j = (struct launch_job *)arg;
    for (int i = 0; i < j->batch; i++)
        k_empty<<<1, 1, 0, st>>>();
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

/* A result of kind launch in microseconds from reps times ms (milliseconds) x scale: median
 * (its value), min and max; NULL when out of host memory. */
static struct probes_result *launch_result(struct probes_output *out, const char *name,
                                           const double *ms, int reps, double scale)
{
    struct probes_result *r = pt_add_result(out, name);
    if (!r)
        return NULL;
    pt_stats(ms, reps, &r->min, &r->median, &r->max);
    r->min *= scale;
    r->median *= scale;
    r->max *= scale;
    r->value = r->median;
    r->reps = reps;
    r->kind = "launch";
    r->unit = "us";
    return r;
}

int pt_launch(struct probes *s, int kind, struct probes_output *out)
{
    int rc = RK_OK;
    struct probes_result *r;

    if (kind == PT_LAUNCH_ASYNC) {
        const int reps = s->quick ? 5 : 10;
        struct launch_job j = {s->quick ? 500 : 2000};
        double ms[PT_MAX_REPS];
        if ((rc = pt_time(s, enqueue_batch, &j, 1, reps, ms)) != RK_OK)
            return rc;
        /* per launch in microseconds: ms * 1000 / batch; a time, not a rate */
        if (!(r = launch_result(out, "launch_async", ms, reps, 1e3 / j.batch)))
            return rk_error(RK_ENOMEM, "out of host memory");
        snprintf(r->method, sizeof r->method,
                 "%d back-to-back launches of an empty <<<1,1>>> kernel on one stream, CUDA "
                 "events around the batch, time per launch",
                 j.batch);
        snprintf(r->params, sizeof r->params, "{\"batch\":%d,\"grid\":1,\"block\":1}", j.batch);
    } else if (kind == PT_LAUNCH_EVENT) {
        const int reps = s->quick ? 10 : 40;
        double ms[PT_MAX_REPS];
        if ((rc = time_event_launches(s, reps, ms)) != RK_OK)
            return rc;
        if (!(r = launch_result(out, "launch_event", ms, reps, 1e3))) /* microseconds */
            return rk_error(RK_ENOMEM, "out of host memory");
        snprintf(r->method, sizeof r->method,
                 "one launch of an empty <<<1,1>>> kernel between two CUDA events, queued behind "
                 "a read of 4 x the L2 as the kernels' measurements are (L2 flush, event, "
                 "launch, event), median of %d: the shortest time a kernel measurement shows",
                 reps);
        snprintf(r->params, sizeof r->params, "{\"repetitions\":%d,\"grid\":1,\"block\":1}", reps);
    } else {
        const int iters = s->quick ? 200 : 1000;
        double *t = (double *)malloc((size_t)iters * sizeof *t);
        if (!t)
            return rk_error(RK_ENOMEM, "out of host memory");
        for (int i = 0; i < 20 + iters; i++) {
            double t0 = rk_now_s();
            k_empty<<<1, 1, 0, s->stream>>>();
            cudaError_t e = cudaStreamSynchronize(s->stream);
            double t1 = rk_now_s();
            if (e == cudaSuccess)
                e = cudaGetLastError();
            if (e != cudaSuccess) {
                free(t);
                return rk_error(RK_ECUDA, "an empty kernel launch failed: %s",
                                cudaGetErrorString(e));
            }
            if (i >= 20) /* the first 20 are warm-up; t in microseconds */
                t[i - 20] = (t1 - t0) * 1e6;
            if (i % 64 == 0)
                pt_sample(s);
        }
        r = pt_add_result(out, "launch_sync");
        if (!r) {
            free(t);
            return rk_error(RK_ENOMEM, "out of host memory");
        }
        pt_stats(t, iters, &r->min, &r->median, &r->max);
        free(t);
        r->value = r->median;
        r->reps = iters;
        r->kind = "launch";
        r->unit = "us";
        snprintf(r->method, sizeof r->method,
                 "launch of an empty <<<1,1>>> kernel then cudaStreamSynchronize, host "
                 "CLOCK_MONOTONIC per round trip, median of %d",
                 iters);
        snprintf(r->params, sizeof r->params, "{\"iterations\":%d,\"grid\":1,\"block\":1}", iters);
    }
    return RK_OK;
}
