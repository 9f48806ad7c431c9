/*
 * internal.h - what the files of probes/ share and nothing outside probes/ may
 * include: the session, the registry row, the timing loop, NVML sampling and the
 * result helpers. The public interface is probes.h.
 *
 * The session state machine is trivial: probes_open() → OPEN (stream, events,
 * NVML) → probes_run()* → probes_close(). Large buffers (DRAM arrays, GEMM
 * matrices, the chase buffer) are allocated by the first probe that needs them
 * and kept until probes_close(), so a full run allocates each once.
 */
#ifndef RK_PROBES_INTERNAL_H
#define RK_PROBES_INTERNAL_H

#include <cuda_runtime_api.h>

#include "common.h"
#include "model.h" /* struct model_energy_work */
#include "probes.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PT_MAX_REPS    64   /* timed repetitions of one configuration, at most */
#define PT_MAX_SAMPLES 4096 /* NVML samples kept per probe */

/* NVML loaded at run time (nvml.c). */
struct pt_nvml {
    void *lib;    /* dlopen handle, NULL when NVML is absent */
    void *device; /* nvmlDevice_t */
    int (*get_clock)(void *dev, int type, unsigned *mhz);
    int (*get_power)(void *dev, unsigned *mw);
    int (*get_temp)(void *dev, int sensor, unsigned *c);
    int (*shutdown)(void);
    /* NVLink queries, NULL where the driver lacks them (pt_nvml_nvlinks) */
    int (*nvlink_state)(void *dev, unsigned link, int *active);
    int (*nvlink_remote_pci)(void *dev, unsigned link, void *pci_info);
    int (*nvlink_remote_type)(void *dev, unsigned link, int *type);
    /* nvmlDeviceGetTotalEnergyConsumption [mJ], NULL where the driver lacks it */
    int (*get_energy)(void *dev, unsigned long long *mj);
    /* nvmlDeviceGetEnforcedPowerLimit [mW], NULL where the driver lacks it */
    int (*get_power_limit)(void *dev, unsigned *mw);
};

struct pt_samples {
    int n;
    double clock_mhz[PT_MAX_SAMPLES];
    double mem_clock_mhz[PT_MAX_SAMPLES];
    double power_w[PT_MAX_SAMPLES];
    double temp_c[PT_MAX_SAMPLES];
};

struct probes {
    struct rk_gpu dev;
    int quick;
    cudaStream_t stream;
    cudaEvent_t ev[PT_MAX_REPS + 1];
    int n_ev;
    struct pt_nvml nvml;
    struct pt_samples *samples; /* of the probe now running */
    double measured_clock_mhz;  /* clock64 over %globaltimer, 0 until measured */

    /* DRAM arrays (bandwidth.cu): three buffers of dram_bytes each */
    void *dram[3];
    size_t dram_bytes;
    /* the chase buffer (latency.cu) */
    void *chase;
    size_t chase_bytes;
    /* GEMM matrices and cuBLASLt (tensor.cu) */
    void *gemm[3];
    size_t gemm_bytes;
    void *lt;        /* cublasLtHandle_t */
    void *blas;      /* cublasHandle_t */
    void *workspace; /* cuBLASLt workspace */
    size_t workspace_bytes;
    /* the energy probe's points (energy.cu), NULL outside it: the tensor probes add theirs
     * while it runs them */
    struct pt_energy_set *energy;
};

/*
 * PT_CUDA(call): RK_CUDA for functions with a `goto out` cleanup: sets the local
 * `rc` and jumps to `out` instead of returning.
 */
#define PT_CUDA(call)                                                                              \
    do {                                                                                           \
        cudaError_t pt_e_ = (call);                                                                \
        if (pt_e_ != cudaSuccess) {                                                                \
            rc = rk_error(pt_e_ == cudaErrorMemoryAllocation ? RK_ENOMEM : RK_ECUDA,               \
                          "%s failed: %s (%s:%d)", #call, cudaGetErrorString(pt_e_), __FILE__,     \
                          __LINE__);                                                               \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* A row of the registry (registry.c). */
struct pt_probe {
    struct probes_info info;
    /* NULL when runnable, else why not; may be NULL (always runnable) */
    const char *(*waive)(const struct rk_gpu *dev, int arg);
    int (*run)(struct probes *s, int arg, struct probes_output *out);
    int arg; /* which precision or direction the run function measures */
};

/* probes_open with the warning about a missing NVML printed only when warn_nvml != 0 (the
 * peer probes open GPUs that probes_open has already warned about). */
int pt_open(int index, int quick, int warn_nvml, struct probes **out /* OUT */);

/* ---- timing (timing.c) ---- */

/* Enqueues one repetition on the stream; returns RK_OK or an rk_err (message printed). */
typedef int (*pt_enqueue_fn)(void *arg, cudaStream_t stream);

/*
 * Runs `warmup` untimed and `reps` timed repetitions of fn back to back, each
 * between two CUDA events, samples NVML while the GPU works, and writes each
 * repetition's time in milliseconds to ms[0..reps). reps <= PT_MAX_REPS.
 */
int pt_time(struct probes *s, pt_enqueue_fn fn, void *arg, int warmup, int reps,
            double *ms /* OUT */);

/* min, median, max of v[0..n) (n >= 1). */
void pt_stats(const double *v, int n, double *min, double *med, double *max);
/* r's min, median, max and value (the median) from v[0..n), its reps (n), kind, level and
 * unit (static strings). */
void pt_fill_stats(struct probes_result *r, const double *v, int n, const char *kind,
                   const char *level, const char *unit);
/* The median of v[0..n)'s values that are not NaN (model_median on a copy of at most
 * PT_MAX_SAMPLES of them; v untouched); NaN when there are none. */
double pt_median(const double *v, int n);

/* Takes one NVML sample into s->samples (no-op without NVML). */
void pt_sample(struct probes *s);

/* Median NVML SM clock of this probe's samples, else the measured clock (MHz). */
double pt_clock_seen(struct probes *s);
/* Memory clock seen (NVML), else the device's peak memory clock (MHz). */
double pt_mem_clock_seen(struct probes *s);

/* ---- results ---- */

/* Appends a result with every number NaN and the strings empty; NULL when out of memory. */
struct probes_result *pt_add_result(struct probes_output *out, const char *name);
/* Appends a curve point; RK_OK or RK_ENOMEM. */
int pt_add_point(struct probes_output *out, const struct probes_point *p);
/* Fills r's min/median/max/value/reps from times converted by `scale / ms`. */
void pt_fill_rate(struct probes_result *r, const double *ms, int reps, double scale);
/*
 * Params JSON (common's rk_buf and rk_json_*): pt_json_fixed appends "key":v (key NULL: v
 * alone), after a comma unless it opens the object or array, with `decimals` digits after the
 * point, the digits a measurement means, or null when v is not finite; pt_set_params moves the
 * object built in b into r->params and releases b: RK_OK, RK_ENOMEM, or RK_EFAIL (a bug: params too
 * small for it), message printed.
 */
void pt_json_fixed(struct rk_buf *b, const char *key, double v, int decimals);
int pt_set_params(struct probes_result *r, struct rk_buf *b);

/* ---- NVML (nvml.c) ---- */
int pt_nvml_open(struct pt_nvml *n, const char *pci_bus_id);
void pt_nvml_close(struct pt_nvml *n);
/*
 * Active NVLinks of n's GPU that reach the GPU at PCI bus id `peer` ("0000:19:00.0"): links
 * to it directly, or to an NVSwitch (*switched set to 1; every GPU on the switches is then
 * reached through all of them); 0 when there is none or the GPU has no NVLink; -1 without
 * NVML, its NVLink queries, or an answer from them.
 */
int pt_nvml_nvlinks(const struct pt_nvml *n, const char *peer, int *switched /* OUT */);

/* ---- energy (energy.cu, meter.c) ---- */

#define PT_ENERGY_MAX_POINTS 64
struct pt_energy_point {
    char name[40];              /* "dram_fp32_k16", "tensor_bf16" */
    struct model_energy_work w; /* one call's flops and bytes, its time and measured energy */
    struct probes_energy r;     /* the reading */
};
struct pt_energy_set {
    struct probes_meter *meter;
    int n;
    struct pt_energy_point p[PT_ENERGY_MAX_POINTS];
};

/*
 * Measures the energy of one call of fn (call_ms long, its work in *work: flops and bytes of
 * ONE call) with the session's meter: a batch sized for PROBES_ENERGY_BATCH_S, once more twice
 * as long if the counter did not move enough; appends the point named name to s->energy.
 * RK_OK, RK_ECUDA, RK_ENODATA (the counter did not move: printed), RK_EINTR.
 */
int pt_energy_point(struct probes *s, pt_enqueue_fn fn, void *arg, double call_ms,
                    const struct model_energy_work *work, const char *name);

/* ---- the probes' run functions and their kernels' launchers (*.cu) ---- */
int pt_bw_dram(struct probes *s, int arg, struct probes_output *out);
int pt_bw_cache(struct probes *s, int arg, struct probes_output *out);
int pt_issue_shared(struct probes *s, int arg, struct probes_output *out);
int pt_bw_host(struct probes *s, int arg, struct probes_output *out);
int pt_lat_chase(struct probes *s, int arg, struct probes_output *out);
int pt_lat_shared(struct probes *s, int arg, struct probes_output *out);
int pt_lat_stage(struct probes *s, int arg, struct probes_output *out);
int pt_lat_fma(struct probes *s, int arg, struct probes_output *out);
int pt_peak_fma(struct probes *s, int arg, struct probes_output *out);
int pt_peak_tensor(struct probes *s, int arg, struct probes_output *out);
int pt_launch(struct probes *s, int arg, struct probes_output *out);
int pt_lat_loaded(struct probes *s, int arg, struct probes_output *out);
int pt_energy(struct probes *s, int arg, struct probes_output *out);

/* The DRAM probes' three buffers (>= 8x the L2, >= 1 GiB each), allocated once (bandwidth.cu). */
int pt_alloc_dram(struct probes *s);

/*
 * The pointer chase of pt_lat_chase through memory that a GPU other than the one chasing may
 * own (latency.cu, for peer.cu): with `own`'s GPU current, builds one random cyclic order of
 * bytes / 128 lines in buf (own's memory) and checks it; then from n_sms SMs spread over
 * `run`'s GPU, one after the other, each from its own place in the cycle and after
 * flush_bytes of flush (own's memory; NULL: none) were written to empty own's L2: 256
 * untimed loads, then segs (<= 8) timed segments of `steps`. cycles[i]: SM i's median
 * segment, in `run`'s clock64 cycles per load. Leaves run's GPU current.
 */
int pt_chase_far(struct probes *own, struct probes *run, void *buf, size_t bytes, void *flush,
                 size_t flush_bytes, int n_sms, long steps, int segs, double *cycles /* OUT */);

/* Measures the SM clock with clock64 over %globaltimer for about `ms` (latency.cu). */
int pt_measure_clock(struct probes *s, double ms, double *mhz /* OUT */);

/* Frees what tensor.cu keeps in the session. */
void pt_tensor_release(struct probes *s);

enum { PT_DRAM_READ, PT_DRAM_WRITE, PT_DRAM_COPY, PT_DRAM_TRIAD };
enum { PT_CACHE_L2, PT_CACHE_L1, PT_CACHE_SHARED, PT_CACHE_SHARED32 };
enum { PT_HOST_H2D, PT_HOST_D2H };
enum { PT_FP64, PT_FP32, PT_FP16X2, PT_BF16X2, PT_FP16 };
enum { PT_TC_BF16, PT_TC_FP16, PT_TC_TF32, PT_TC_FP64, PT_TC_INT8, PT_TC_FP8 };
enum { PT_LAUNCH_ASYNC, PT_LAUNCH_SYNC, PT_LAUNCH_EVENT };

#ifdef __cplusplus
}
#endif
#endif /* RK_PROBES_INTERNAL_H */
