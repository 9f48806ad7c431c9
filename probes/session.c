/*
 * session.c - opening a device for probing, the timing loop every probe uses,
 * and the result helpers.
 *
 * Timing: warm-up first, then each repetition between two CUDA
 * events on one stream, all enqueued back to back; while the GPU works the host
 * polls the last event and takes NVML samples, so the clock, power and temperature
 * stored with a ceiling are those seen while its kernels ran.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "gpu.h"
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double pt_median(const double *v, int n)
{
    double tmp[PT_MAX_SAMPLES];
    int m = 0;
    for (int i = 0; i < n && m < PT_MAX_SAMPLES; i++)
        if (!isnan(v[i]))
            tmp[m++] = v[i];
    return model_median(tmp, (size_t)m);
}

void pt_stats(const double *v, int n, double *min, double *med, double *max)
{
    double lo = v[0], hi = v[0];
    for (int i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    *min = lo;
    *max = hi;
    *med = pt_median(v, n);
}

void pt_fill_stats(struct probes_result *r, const double *v, int n, const char *kind,
                   const char *level, const char *unit)
{
    pt_stats(v, n, &r->min, &r->median, &r->max);
    r->value = r->median;
    r->reps = n;
    r->kind = kind;
    r->level = level;
    r->unit = unit;
}

double pt_clock_seen(struct probes *s)
{
    double c = s->samples ? pt_median(s->samples->clock_mhz, s->samples->n) : NAN;
    if (!isnan(c) && c > 0)
        return c;
    return s->measured_clock_mhz > 0 ? s->measured_clock_mhz : s->dev.sm_clock_mhz;
}

double pt_mem_clock_seen(struct probes *s)
{
    double c = s->samples ? pt_median(s->samples->mem_clock_mhz, s->samples->n) : NAN;
    return (!isnan(c) && c > 0) ? c : s->dev.mem_clock_mhz;
}

int pt_time(struct probes *s, pt_enqueue_fn fn, void *arg, int warmup, int reps, double *ms)
{
    int rc;
    cudaError_t q;

    if (reps < 1 || reps > PT_MAX_REPS)
        RK_BUG("pt_time: repetitions out of range");
    for (int i = 0; i < warmup; i++)
        if ((rc = fn(arg, s->stream)) != RK_OK)
            return rc;
    for (int i = 0; i < reps; i++) {
        RK_CUDA(cudaEventRecord(s->ev[i], s->stream));
        if ((rc = fn(arg, s->stream)) != RK_OK)
            return rc;
    }
    RK_CUDA(cudaEventRecord(s->ev[reps], s->stream));
    /* Sample while the GPU works: at least once, then every ~2 ms until done. */
    pt_sample(s);
    while ((q = cudaEventQuery(s->ev[reps])) == cudaErrorNotReady) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        if (cudaEventQuery(s->ev[reps]) == cudaErrorNotReady)
            pt_sample(s);
    }
    RK_CUDA(q);
    for (int i = 0; i < reps; i++) {
        float t;
        RK_CUDA(cudaEventElapsedTime(&t, s->ev[i], s->ev[i + 1]));
        ms[i] = t;
    }
    return RK_OK;
}

struct probes_result *pt_add_result(struct probes_output *out, const char *name)
{
    struct probes_result *r;
    if (out->n_results == out->cap_results) {
        int cap = out->cap_results ? 2 * out->cap_results : 8;
        struct probes_result *p = realloc(out->results, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        out->results = p;
        out->cap_results = cap;
    }
    r = &out->results[out->n_results++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->kind = "bandwidth";
    r->unit = "";
    r->value = r->min = r->median = r->max = NAN;
    r->theoretical = r->sm_clock_mhz = r->power_w = r->temp_c = NAN;
    snprintf(r->params, sizeof r->params, "{}");
    return r;
}

int pt_add_point(struct probes_output *out, const struct probes_point *p)
{
    if (out->n_points == out->cap_points) {
        int cap = out->cap_points ? 2 * out->cap_points : 64;
        struct probes_point *q = realloc(out->points, (size_t)cap * sizeof *q);
        if (!q)
            return rk_error(RK_ENOMEM, "out of host memory for the latency curve");
        out->points = q;
        out->cap_points = cap;
    }
    out->points[out->n_points++] = *p;
    return RK_OK;
}

void pt_fill_rate(struct probes_result *r, const double *ms, int reps, double scale)
{
    double lo, med, hi;
    pt_stats(ms, reps, &lo, &med, &hi);
    r->min = scale / hi; /* the slowest repetition gives the lowest rate */
    r->max = scale / lo;
    r->median = scale / med;
    r->value = r->median;
    r->reps = reps;
}

void pt_json_fixed(struct rk_buf *b, const char *key, double v, int decimals)
{
    const char last = b->len ? b->s[b->len - 1] : '{';
    if (last != '{' && last != '[')
        rk_buf_puts(b, ",");
    if (key) {
        rk_json_str(b, key);
        rk_buf_puts(b, ":");
    }
    if (isfinite(v))
        rk_buf_printf(b, "%.*f", decimals, v);
    else
        rk_json_num(b, v); /* null */
}

int pt_set_params(struct probes_result *r, struct rk_buf *b)
{
    int rc = RK_OK;
    if (b->oom)
        rc = rk_error(RK_ENOMEM, "out of host memory");
    else if (b->len >= sizeof r->params)
        rc = rk_error(RK_EFAIL, "internal error: the params of %s take %zu bytes, more than %zu",
                      r->name, b->len, sizeof r->params - 1);
    else
        memcpy(r->params, b->s, b->len + 1);
    rk_buf_release(b);
    return rc;
}

void probes_output_release(struct probes_output *out)
{
    if (!out)
        return;
    free(out->results);
    free(out->points);
    memset(out, 0, sizeof *out);
}

const struct rk_gpu *probes_device(const struct probes *s)
{
    return &s->dev;
}

int probes_open(int index, int quick, struct probes **out)
{
    return pt_open(index, quick, 1, out);
}

int pt_open(int index, int quick, int warn_nvml, struct probes **out)
{
    struct probes *s = NULL;
    int count = 0, rc = RK_OK;
    cudaError_t e;

    *out = NULL;
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return rk_error(RK_ENOGPU,
                        "no usable CUDA GPU (%s); run 'roofkit probe' on a machine with one",
                        e == cudaErrorInsufficientDriver
                            ? "no NVIDIA driver, or one older than this CUDA runtime"
                        : e != cudaSuccess ? cudaGetErrorString(e)
                                           : "none found");
    if (index < 0 || index >= count)
        return rk_error(RK_ENOGPU, "no CUDA device %d (this machine has %d); pass --device 0..%d",
                        index, count, count - 1);
    s = calloc(1, sizeof *s);
    if (!s)
        return rk_error(RK_ENOMEM, "out of host memory opening the device");
    s->samples = calloc(1, sizeof *s->samples);
    if (!s->samples) {
        rc = rk_error(RK_ENOMEM, "out of host memory opening the device");
        goto out;
    }
    s->quick = quick;
    e = cudaSetDevice(index);
    if (e == cudaSuccess)
        e = cudaFree(NULL); /* creates the context now, not inside the first timing */
    if (e != cudaSuccess) {
        rc = rk_error(RK_ENOGPU, "cannot use CUDA device %d: %s; check the driver", index,
                      cudaGetErrorString(e));
        goto out;
    }
    if ((rc = rk_gpu_read(index, &s->dev)) != RK_OK)
        goto out;
    if (cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking) != cudaSuccess) {
        rc = rk_error(RK_ECUDA, "cannot create a CUDA stream on device %d", index);
        goto out;
    }
    for (; s->n_ev <= PT_MAX_REPS; s->n_ev++)
        if (cudaEventCreate(&s->ev[s->n_ev]) != cudaSuccess) {
            rc = rk_error(RK_ECUDA, "cannot create CUDA events on device %d", index);
            goto out;
        }
    if (pt_nvml_open(&s->nvml, s->dev.pci_bus_id) != 0 && warn_nvml)
        rk_warn("NVML (libnvidia-ml.so.1) is not available: clocks, power and temperature "
                "are not stored; theoretical ceilings use the SM clock measured with clock64");
out:
    if (rc != RK_OK) {
        probes_close(s);
        return rc;
    }
    *out = s;
    return RK_OK;
}

void probes_close(struct probes *s)
{
    if (!s)
        return;
    pt_tensor_release(s);
    for (int i = 0; i < 3; i++) {
        cudaFree(s->dram[i]);
        cudaFree(s->gemm[i]);
    }
    cudaFree(s->chase);
    for (int i = 0; i < s->n_ev; i++)
        cudaEventDestroy(s->ev[i]);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    pt_nvml_close(&s->nvml);
    free(s->samples);
    free(s);
}
