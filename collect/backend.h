/*
 * backend.h - collect/'s internal interface to CUPTI (not part of the public API). One
 * function table, two implementations:
 *   backend_cupti.cpp  the real one (Activity, callbacks, Range Profiler, host evaluation);
 *   tests' fake        replays scripted records and injects CUPTI error codes.
 * session.c holds every decision (which launch is recorded, when a counter batch is decoded,
 * which mode a failure leads to) and calls the table; a backend only does what it is told and
 * reports launches and Activity records through the hooks.
 *
 * Return values of the table are CUPTI result codes (0 = CUPTI_SUCCESS), so that session.c
 * can map each code to a mode and tests can inject any of them.
 */
#ifndef RK_COLLECT_BACKEND_H
#define RK_COLLECT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUPTI result codes session.c decides on (values from cupti_result.h). */
enum {
    BK_SUCCESS = 0,
    BK_INVALID_PARAMETER = 1,
    BK_INVALID_OPERATION = 7,
    BK_NOT_INITIALIZED = 15,
    BK_INVALID_METRIC_NAME = 17,
    BK_NOT_COMPATIBLE = 26,
    BK_VIRTUALIZED_DEVICE_NOT_SUPPORTED = 33,
    BK_INSUFFICIENT_PRIVILEGES = 35,
    BK_MULTIPLE_SUBSCRIBERS = 39,
    BK_VIRTUALIZED_INSUFFICIENT_PRIVILEGES = 40,
    BK_CONFIDENTIAL_COMPUTING = 41,
    BK_CMP_DEVICE = 42,
    BK_MIG_DEVICE = 43,
    BK_SLI_DEVICE = 44,
    BK_WSL_DEVICE = 45,
    BK_NOT_SUPPORTED = 27,
    BK_UNKNOWN = 999,
};

/* A kernel launch seen by an API callback, before the launch happens (enter) or after (exit). */
struct bk_launch {
    void *ctx;          /* CUcontext; NULL when none is current yet */
    uint32_t corr;      /* correlation id of this API call */
    const char *symbol; /* mangled kernel name (valid during the callback only) */
    int graph;          /* 1 for a graph launch: its kernels are not recorded one by one */
    /* From a driver launch's parameters and cuFuncGetAttribute (has_config = 1), else 0: */
    int has_config;
    uint32_t grid[3], block[3];
    int dynamic_smem;
    int registers;   /* ptxas's count (CU_FUNC_ATTRIBUTE_NUM_REGS), -1 unknown */
    int static_smem; /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, -1 unknown */
    int local_mem;   /* CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, -1 unknown */
    /* The ids the kernel's Activity record will carry, known from the driver call (has_ids = 1):
     * a launch handed over before its record (counter mode) still names its GPU. */
    int has_ids;
    uint32_t device, context, stream;
};

/* A kernel's Activity record (CUpti_ActivityKernel10), reduced to what roofkit stores. */
struct bk_kernel {
    uint32_t corr;
    const char *name; /* valid during the hook only */
    uint32_t grid[3], block[3], cluster[3];
    int registers, static_smem, dynamic_smem, local_mem;
    uint64_t start, end;
    uint32_t device, context, stream;
    uint64_t graph_node;
};

/* Called by a backend; arg is hooks->arg. May come from any thread. */
struct bk_hooks {
    void *arg;
    /* Runtime or driver launch API entry/exit. nested = 1 for a launch call made inside
     * another (cuLaunchKernel inside cudaLaunchKernel): its corr is an alias of the outer
     * launch, and its context may be the first one known. */
    void (*launch_enter)(void *arg, const struct bk_launch *l, int nested);
    void (*launch_exit)(void *arg, const struct bk_launch *l, int nested);
    void (*kernel)(void *arg, const struct bk_kernel *k);
    void (*context_destroy)(void *arg, void *ctx);
    /* A module was loaded: its cubin (ELF), valid during the hook only. */
    void (*module)(void *arg, const void *cubin, size_t size);
    void (*dropped)(void *arg, size_t n);
    /* A synchronizing call (cudaDeviceSynchronize, cu{Ctx,Stream,Event}Synchronize, ...)
     * returned on ctx (NULL: unknown): the work it waited for has finished. */
    void (*sync)(void *arg, void *ctx);
    /* The program called cu(da)ProfilerStart (on = 1, at its end) or cu(da)ProfilerStop (0, at
     * its start). */
    void (*profiler)(void *arg, int on);
};

struct bk_ops {
    const char *name;
    const char *(*strerror)(int code);

    /* Host side, no GPU: validate one metric (fills its unit) and count passes of a set. */
    int (*host_check)(const char *chip, const char *raw, char *unit, size_t unit_size);
    int (*host_passes)(const char *chip, const char *const *raw, int n, int *passes);
    int (*chip_name)(int device, char *buf, size_t size);

    /* Tracing: subscribe to launch callbacks and enable Activity kernel records. */
    int (*trace_start)(const struct bk_hooks *hooks, int timing_only);
    int (*trace_flush)(void); /* deliver all completed Activity records now */
    void (*trace_stop)(void);

    /* Counters for one context: the range profiler, AutoRange. KernelReplay, or UserReplay
     * when session.c allows it (user_replay_ok: no SASS-patched metric among raw) and the
     * set is one pass: each Start..Stop is then that pass, with nothing replayed. */
    int (*prof_enable)(void *ctx, const char *const *raw, int n, int max_ranges, int user_replay_ok,
                       void **prof /* OUT */, int *passes /* OUT */, char *chip, size_t chip_size);
    int (*prof_start)(void *prof);
    int (*prof_stop)(void *prof);
    int (*prof_decode)(void *prof, int *nranges /* OUT */, int *ndropped /* OUT */);
    int (*prof_eval)(void *prof, int range, double *values /* OUT: n of prof_enable */);
    int (*prof_reset)(void *prof); /* re-initialize the counter data image for the next batch */
    int (*prof_dump)(void *prof, const char *path); /* counter data image to a file */
    void (*prof_disable)(void *prof);
    /* Deliver the Activity records whose kernels have finished (no forced flush); any thread
     * but CUPTI's callbacks. */
    int (*trace_poll)(void);
    /* Now on the clock of bk_kernel's start and end [ns] (the energy meter's time base in the
     * injection library, energy.c); any thread. */
    uint64_t (*timestamp)(void);
};

extern const struct bk_ops bk_cupti;

/* The backend sessions use; tests replace it before collect_session_begin(). */
extern const struct bk_ops *bk_active;

/*
 * ptxas's register count of each kernel in a cubin (cubin.c): calls fn(arg, mangled name,
 * registers) for each; returns how many it found (0 for anything it cannot read).
 */
typedef void (*bk_regcount_fn)(void *arg, const char *name, int registers);
int bk_cubin_registers(const uint8_t *elf, size_t size, bk_regcount_fn fn, void *arg);

/* Demangles an Itanium C++ name; malloc'd copy of `name` when it is not mangled. NULL on OOM. */
char *bk_demangle(const char *name);

/*
 * Evaluates a counter data image file captured by prof_dump on the host (no GPU): values of
 * raw[0..n) for range `range`; *nranges gets the image's range count. CUPTI result code.
 */
int bk_eval_image(const char *chip, const uint8_t *image, size_t size, int range,
                  const char *const *raw, int n, double *values, int *nranges);

#ifdef __cplusplus
}
#endif
#endif /* RK_COLLECT_BACKEND_H */
