/*
 * launch.cu - launch overhead of an empty kernel: back-to-back asynchronous
 * launches (events around a batch, time per launch), and the round trip of one
 * launch followed by cudaStreamSynchronize (common's monotonic clock, rk_now_s, per
 * iteration: what a program that waits for every kernel pays).
 *
 * The empty kernel has no work to verify; the check is that every launch returns
 * cudaSuccess and the stream drains.
 */
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

static int enqueue_batch(void *arg, cudaStream_t st)
{
    struct launch_job *j = (struct launch_job *)arg;
    for (int i = 0; i < j->batch; i++)
        k_empty<<<1, 1, 0, st>>>();
    RK_CUDA(cudaGetLastError());
    return RK_OK;
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
        r = pt_add_result(out, "launch_async");
        if (!r)
            return rk_error(RK_ENOMEM, "out of host memory");
        /* per launch in microseconds: ms * 1000 / batch; a time, not a rate */
        pt_stats(ms, reps, &r->min, &r->median, &r->max);
        r->min *= 1e3 / j.batch;
        r->median *= 1e3 / j.batch;
        r->max *= 1e3 / j.batch;
        r->value = r->median;
        r->reps = reps;
        r->kind = "launch";
        r->unit = "us";
        snprintf(r->method, sizeof r->method,
                 "%d back-to-back launches of an empty <<<1,1>>> kernel on one stream, CUDA "
                 "events around the batch, time per launch",
                 j.batch);
        snprintf(r->params, sizeof r->params, "{\"batch\":%d,\"grid\":1,\"block\":1}", j.batch);
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
