/*
 * common.h - the few helpers that more than one roofkit module needs: the error
 * codes (which are also the command's exit codes), error and warning printing,
 * and terminal progress.
 *
 * Invariants:
 *   - Library code never calls exit(); it returns an enum rk_err. Only cli/ exits.
 *   - Diagnostics and progress go to stderr; data goes to stdout.
 *   - Messages are lowercase, say what failed, then what to do.
 */
#ifndef RK_COMMON_H
#define RK_COMMON_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Error codes. The numeric values are roofkit's exit codes: a contract documented
 * in `roofkit --help` and docs/exit-codes.md. Never renumber; append.
 */
enum rk_err {
    RK_OK = 0,     /* success */
    RK_EFAIL = 1,  /* internal error (a bug): please report it */
    RK_EUSAGE = 2, /* bad command line: unknown option, malformed number, ... */
    /* 3 is retired and unused (it meant "not available in this version yet"); never reuse it */
    RK_ENOGPU = 4,       /* no usable CUDA GPU */
    RK_ECUDA = 5,        /* a CUDA, cuBLAS or NVML call failed */
    RK_ECUPTI = 6,       /* a CUPTI call failed */
    RK_EDB = 7,          /* database: cannot open, not roofkit's, corrupt, newer schema, busy */
    RK_EIO = 8,          /* a file or directory could not be read or written */
    RK_EVERIFY = 9,      /* a kernel's result failed verification */
    RK_ENOMEM = 10,      /* not enough GPU or host memory for the request */
    RK_ENOTOOL = 11,     /* an external program (gnuplot) is missing */
    RK_ENODATA = 12,     /* the database holds nothing to work on */
    RK_EREGRESSION = 13, /* roofkit diff: a kernel is slower beyond noise and the threshold */
    RK_EINTR = 130,      /* interrupted by SIGINT/SIGTERM; stored rows are complete */
};

/* Short description of an error code, e.g. "bad command line". Never NULL. */
const char *rk_strerror(int err);

/* Verbosity shared by all modules: 0 = quiet (errors only), 1 = normal. */
void rk_set_quiet(int quiet);

/* Seconds on a monotonic clock (CLOCK_MONOTONIC), for timing roofkit's own phases. */
double rk_now_s(void);

/*
 * rk_error(code, fmt, ...) prints "roofkit: error: <message>" on stderr and
 * returns code, so callers write `return rk_error(RK_EUSAGE, "...")`.
 */
int rk_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rk_warn prints "roofkit: warning: <message>" unless quiet. */
void rk_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rk_info prints "roofkit: <message>" unless quiet. */
void rk_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Progress on a terminal: rk_progress(label, done, total) redraws one stderr line
 * when stderr is a terminal and not quiet; rk_progress_end() finishes the line.
 */
void rk_progress(const char *label, long done, long total);
void rk_progress_end(void);

/*
 * Set by the SIGINT/SIGTERM handler that cli/ installs, to the signal's number (0: none);
 * long loops poll it and stop between complete rows, returning RK_EINTR.
 */
extern volatile int rk_interrupted;

/*
 * pthread_create for roofkit's background threads (energy pollers, CUPTI's record poller),
 * started with every signal blocked: SIGINT and SIGTERM then reach the thread that waits for
 * them (profile takes them with sigwaitinfo), never a poller that would swallow them. Returns
 * pthread_create's result (0 on success).
 */
int rk_thread_start(pthread_t *t /* OUT */, void *(*fn)(void *), void *arg);

/*
 * Number parsing for every command-line and list parser: whole string must be a
 * finite number ("1430e9", "0x10" not accepted for doubles). Returns RK_OK or
 * RK_EUSAGE without printing.
 */
int rk_parse_double(const char *s, double *out /* OUT */);
int rk_parse_long(const char *s, long *out /* OUT */);

/*
 * The one comma-list parser. rk_parse_name_list splits a comma-separated list of names
 * ("dram_read_bytes,gpu_time") into a malloc'd array of malloc'd strings; free it with
 * rk_free_name_list(names, n). RK_OK, RK_EUSAGE (NULL or empty list, an empty name) or
 * RK_ENOMEM, nothing printed. Used by cli/ for --metrics, --model and the like, by probes'
 * --only and report's --format, and by collect/'s injection library for the lists roofkit
 * passes in the environment. rk_parse_long_list splits the same way, then parses each item
 * with rk_parse_long ("1024,2048,1e4"): a malloc'd array; RK_OK, RK_EUSAGE or RK_ENOMEM.
 */
int rk_parse_name_list(const char *s, char ***out /* OUT */, int *n /* OUT */);
void rk_free_name_list(char **names, int n);
int rk_parse_long_list(const char *s, long **out /* OUT */, int *n /* OUT */);

/*
 * What a CUDA device is, as probes/ and kernels/ read it when they open it (rk_gpu_read in
 * gpu.h fills it from cudaGetDeviceProperties and the device attributes) and as cli/ stores it
 * in the database's device row. Plain C: code without the CUDA toolkit's headers includes it.
 */
struct rk_gpu {
    int index;           /* CUDA device index */
    char name[256];      /* "NVIDIA H100 80GB HBM3" */
    char uuid[48];       /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (rk_gpu_uuid) */
    char pci_bus_id[32]; /* "0000:19:00.0" */
    int cc_major, cc_minor;
    int sm_count;
    int sm_clock_mhz;  /* peak SM clock (cudaDevAttrClockRate) */
    int mem_clock_mhz; /* peak memory clock (cudaDevAttrMemoryClockRate) */
    int bus_width_bits;
    int64_t l2_bytes;
    int64_t memory_bytes; /* global memory */
    int smem_per_sm_bytes;
    int smem_per_block_optin_bytes;
    int regs_per_sm;
    int max_threads_per_sm;
    int driver_version, runtime_version; /* 13000 = 13.0 */
};

/* Writes a device's 16 UUID bytes as NVIDIA prints them ("GPU-" then 8-4-4-4-12 lowercase hex
 * digits, as nvidia-smi -L) into out (at least 41 bytes; shorter is truncated). */
void rk_gpu_uuid(const unsigned char bytes[16], char *out, size_t len);

/* Programmer errors only (never bad input): prints file:line and aborts. */
#define RK_BUG(msg) rk_bug(__FILE__, __LINE__, (msg))
void rk_bug(const char *file, int line, const char *msg) __attribute__((noreturn));

/*
 * RK_CUDA(call): for CUDA runtime calls in code compiled by nvcc or linked to
 * cudart. On failure prints the call text, CUDA's error string and file:line, and
 * returns RK_ECUDA (or RK_ENOMEM for cudaErrorMemoryAllocation) from the enclosing
 * function, which must return int.
 */
#if defined(__CUDACC__) || defined(CUDART_VERSION)
#define RK_CUDA(call)                                                                              \
    do {                                                                                           \
        cudaError_t rk_cuda_rc_ = (call);                                                          \
        if (rk_cuda_rc_ != cudaSuccess)                                                            \
            return rk_error(rk_cuda_rc_ == cudaErrorMemoryAllocation ? RK_ENOMEM : RK_ECUDA,       \
                            "%s failed: %s (%s:%d)", #call, cudaGetErrorString(rk_cuda_rc_),       \
                            __FILE__, __LINE__);                                                   \
    } while (0)
#endif

/*
 * A growing string (as git's strbuf and SQLite's sqlite3_str): appends never fail
 * visibly; `oom` becomes 1 and stays 1 when memory runs out, and the caller checks it once.
 */
struct rk_buf {
    char *s; /* NUL-terminated once anything was appended; NULL before */
    size_t len, cap;
    int oom;
};
/* clang-format off */
#define RK_BUF_INIT {NULL, 0, 0, 0}
/* clang-format on */
void rk_buf_printf(struct rk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rk_buf_puts(struct rk_buf *b, const char *s);
void rk_buf_release(struct rk_buf *b); /* frees s, back to RK_BUF_INIT */

/*
 * JSON writing: strings quoted with " \ and control characters escaped (\n \r \t, else
 * \u00XX); NULL string -> null; numbers with %.17g (round-trips a double); NaN and
 * infinities -> null.
 */
void rk_json_str(struct rk_buf *b, const char *s);
void rk_json_num(struct rk_buf *b, double v);
void rk_json_key_num(struct rk_buf *b, const char *key, double v);      /* "key":<num> */
void rk_json_key_str(struct rk_buf *b, const char *key, const char *s); /* "key":"<s>" */

/*
 * JSON reading, for roofkit's own flat objects: the value of a top-level "key" of an object.
 * RK_OK, or RK_ENODATA when json is NULL, the key is missing or its value is not a number.
 */
int rk_json_number(const char *json, const char *key, double *out /* OUT */);
int rk_json_long(const char *json, const char *key, long *out /* OUT */); /* whole numbers only */
/*
 * "key":[[a,b],[c,d],...] -> pairs[i][0], pairs[i][1]; at most max pairs; returns the count,
 * 0 when missing or malformed.
 */
int rk_json_pairs(const char *json, const char *key, double (*pairs)[2], int max);

#ifdef __cplusplus
}
#endif
#endif /* RK_COMMON_H */
