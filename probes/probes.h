/*
 * probes.h - roofkit's microbenchmarks of a GPU's ceilings: the whole public
 * interface of probes/.
 *
 * A probe is a row of a registry (nvbandwidth style): a greppable name selected
 * by prefix (bw_dram_read, lat_chase, peak_fp32_fma, ...), a group (bandwidth,
 * latency, flops, launch), a filter that WAIVES a probe the GPU cannot run (fp8
 * before sm_89), and a run function. Running a probe fills a struct
 * probes_output: one struct probes_result per ceiling, and for the pointer chase
 * the latency curve. Probes return structs and never write SQL; cli/probe.c stores
 * them through db/.
 *
 * Between two GPUs of one host, the peer probes (probes_peer_run) measure an ordered pair
 * outside the registry and outside any session: they open both GPUs themselves.
 *
 * Invariants:
 *   - One session (struct probes) per process and device; it owns the CUDA stream,
 *     the large buffers reused across probes, the cuBLASLt handle and NVML.
 *   - Every value is measured on the GPU at hand: nothing is a constant of a GPU
 *     model except the per-architecture lane counts used for the theoretical column
 *     (probes_lanes_per_sm), which is NaN where roofkit does not know the GPU.
 *   - Each timed kernel is verified on random data before it is timed; a probe whose
 *     check fails returns RK_EVERIFY and produces no result.
 *   - Clocks, power and temperature come from NVML, loaded at run time; without it
 *     they are NaN (stored as NULL) and theoretical values use the SM clock measured
 *     with clock64 over %globaltimer.
 *
 * This header is plain C11 with no CUDA types, so CPU-only code (the plateau
 * detector's unit test, cli/) includes it without the CUDA toolkit's headers.
 */
#ifndef RK_PROBES_H
#define RK_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "common.h" /* struct rk_gpu */

#ifdef __cplusplus
extern "C" {
#endif

enum probes_group {
    PROBES_BANDWIDTH = 1 << 0,
    PROBES_LATENCY = 1 << 1,
    PROBES_FLOPS = 1 << 2,
    PROBES_LAUNCH = 1 << 3,
    PROBES_ENERGY = 1 << 4,
};

/* One measured ceiling. Strings that are pointers are static. NaN = unknown. */
struct probes_result {
    char name[48];           /* the ceiling's name: "bw_dram_read", "lat_chase_l2_far" */
    const char *kind;        /* "bandwidth", "compute", "latency", "launch" or "energy" */
    const char *level;       /* "dram", "l2", "l1", "shared", "stage", "host", "register",
                                "peer" (between two GPUs), or NULL */
    const char *precision;   /* "fp32", "bf16", ... or NULL */
    double value;            /* the ceiling: the median of the best configuration */
    const char *unit;        /* "GB/s", "TFLOP/s", "TOP/s", "cycles", "ns", "us"; energy:
                                "pJ/FLOP", "pJ/B", "W" */
    double min, median, max; /* over the repetitions of the best configuration */
    int reps;
    char method[256];    /* how it was measured, in words */
    char params[8192];   /* JSON object: configuration, sizes, references (the energy fit's
                            points and residuals) */
    double theoretical;  /* datasheet formula at the clock seen, in `unit`; NaN if none */
    double sm_clock_mhz; /* median NVML SM clock during the probe; NaN without NVML */
    double power_w;      /* median NVML power during the probe; NaN without NVML */
    double temp_c;       /* median NVML temperature during the probe; NaN without NVML */
};

/* One point of the pointer-chase latency curve. */
struct probes_point {
    int64_t footprint_bytes;
    int stride_bytes; /* the line size the chase steps through: 128 */
    double cycles;    /* per dependent load, median over repetitions */
    double ns;        /* cycles / SM clock measured with clock64 over %globaltimer */
};

/* What one probe produced. Owned by the caller; release with probes_output_release. */
struct probes_output {
    struct probes_result *results;
    int n_results;
    struct probes_point *points;
    int n_points;
    int cap_results, cap_points; /* private */
};

/* A probe of the registry, as listed by `roofkit probe --list`. */
struct probes_info {
    const char *name; /* "bw_dram_read" */
    enum probes_group group;
    const char *summary; /* one line */
};

/* Number of probes in the registry and the i-th one (0 <= i < probes_count()). */
int probes_count(void);
const struct probes_info *probes_get(int i);
/* "bandwidth", "latency", "flops", "launch" or "energy". */
const char *probes_group_name(enum probes_group g);

/*
 * Parses an --only list: comma-separated group names (bandwidth, latency, flops,
 * launch) and probe-name prefixes (bw_dram, lat_, peak_tensor_bf16). list NULL or
 * empty selects every probe; an empty name between commas is an error. selected must hold
 * probes_count() entries; each is set to 1 or 0. Returns RK_OK, or RK_EUSAGE after printing
 * which name matched nothing, or RK_ENOMEM.
 */
int probes_select(const char *list, unsigned char *selected /* OUT */);

struct probes;

/*
 * Opens device `index` for probing. quick != 0 trades repetitions and curve points
 * for time. Returns RK_OK, RK_ENOGPU (no GPU, no driver, index out of range; the
 * message is printed), RK_ECUDA. Prints one warning when NVML is missing.
 * On success *out owns the session; close it with probes_close.
 */
int probes_open(int index, int quick, struct probes **out /* OUT */);
void probes_close(struct probes *s);
/* What the session read off the device when it opened it (common's rk_gpu_read). */
const struct rk_gpu *probes_device(const struct probes *s);

/*
 * NULL when the session's GPU can run probe i; otherwise why it is waived
 * ("fp8 tensor cores need compute capability 8.9"). A waived probe is not a failure.
 */
const char *probes_waived(const struct probes *s, int i);

/*
 * Runs probe i and appends its results (and curve points) to *out, which starts
 * zeroed ({0}) or holds earlier output. Returns RK_OK, RK_ECUDA, RK_ENOMEM,
 * RK_EVERIFY, RK_EINTR (rk_interrupted was set: nothing of this probe is appended).
 */
int probes_run(struct probes *s, int i, struct probes_output *out /* IN/OUT */);
void probes_output_release(struct probes_output *out);

/*
 * Lanes per SM of the CUDA cores for an FMA of `precision` ("fp64", "fp32",
 * "fp16x2", "bf16x2": one lane does one (packed) FMA per clock), from NVIDIA's
 * architecture tables; 0 for a GPU or precision roofkit has no figure for.
 */
int probes_lanes_per_sm(int cc_major, int cc_minor, const char *precision);

/*
 * How many other GPUs of this host are busy now, as NVML sees them: a kernel running or device
 * memory in use during NVML's last sample period (a sixth of a second to a second), whoever
 * runs it. The GPU at self_pci_bus_id ("0000:19:00.0") is left out. -1 without NVML (not
 * installed, no permission). Needs no CUDA; prints nothing.
 */
int probes_gpus_busy(const char *self_pci_bus_id);

/* ---- energy: NVML's energy counter around back-to-back launches (meter.c) ---- */

/*
 * A meter reads one GPU's energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ, updated by
 * the driver about every 100 ms) while the caller runs a batch of back-to-back launches:
 *
 *     probes_meter_begin(m)  -> enqueue `launches` launches, wait for them -> probes_meter_end
 *
 * Between begin and end a thread polls the counter every ~0.5 ms and keeps each change with its
 * time, and samples power, SM clock and temperature every ~10 ms. End takes the first counter
 * change at least PROBES_ENERGY_LEAD_S after begin and the last one before end: their
 * difference over their time apart (updates x the median interval between updates, from 3
 * updates on) is the average power of the GPU running the batch (whole counter updates only,
 * so the counter's coarse steps cancel); one launch's energy is that
 * power x the batch's wall time / launches (launch gaps included: what running it back to back
 * costs). A batch should last about PROBES_ENERGY_BATCH_S (probes_energy_launches).
 */
/* Where the window starts: from 50 ms into 0.45 s batches, a sweep that changed kernel every
 * batch read points of one regime far apart (DRAM streams with 0 and 4 FMAs an element: 550 and
 * 644 W on an H100) while five batches of one kernel agreed within 0.6 %; taken to mean that the
 * counter lags the GPU by up to a few hundred ms (not measured directly), the window starts
 * 0.35 s in. */
#define PROBES_ENERGY_LEAD_S   0.35 /* skipped at the start: the counter's lag, the ramp */
#define PROBES_ENERGY_WINDOW_S 0.25 /* the shortest interval between the two changes */
#define PROBES_ENERGY_BATCH_S  0.8  /* what a batch is sized for */

struct probes_energy {
    double energy_j;        /* one launch [J] */
    double power_w;         /* average power over the window [W] */
    double power_sampled_w; /* median of NVML's power samples over the batch [W], a check */
    double sm_clock_mhz;    /* median SM clock sampled over the batch (NaN: none) */
    double temp_c;          /* median GPU temperature over the batch (NaN: none) */
    double window_s;        /* time between the two counter changes [s] */
    double batch_s;         /* wall time of the batch, begin to end [s] */
    long launches;          /* launches in the batch */
    int updates;            /* counter updates inside the window */
};

struct probes_meter;

/*
 * Opens the meter of the GPU at PCI bus id `pci_bus_id`. RK_OK, or RK_ENODATA with the reason in
 * why (nothing printed): NVML missing, the GPU has no energy counter (before Volta), no
 * permission to read it. RK_ENOMEM.
 */
int probes_meter_open(const char *pci_bus_id, struct probes_meter **out /* OUT */, char *why,
                      size_t why_len);
void probes_meter_close(struct probes_meter *m); /* NULL is fine */
/* Starts the sampling thread. RK_OK, RK_EFAIL (the thread could not start; printed). */
int probes_meter_begin(struct probes_meter *m);
/*
 * Stops it after the batch of `launches` launches has finished and fills *out. RK_OK, or
 * RK_ENODATA (not printed) when the batch held fewer than two counter changes at least
 * PROBES_ENERGY_WINDOW_S apart after the lead (too short: the caller runs a longer one), *out
 * then has what was seen (energy NaN).
 */
int probes_meter_end(struct probes_meter *m, long launches, struct probes_energy *out /* OUT */);
/* Launches of launch_s seconds each that fill PROBES_ENERGY_BATCH_S (>= 1). */
long probes_energy_launches(double launch_s);

/*
 * What probes_meter_read gives a batch to call around its launches: begin(arg) before the first
 * (if it fails, nothing is launched and the batch returns its error), end(arg) once they have all
 * finished, whenever begin succeeded (also after a failed launch). The layout of kernels/'
 * kernels_hook, so that a batch of kernels_session_repeat passes them on as they are.
 */
struct probes_bracket {
    void *arg;
    int (*begin)(void *arg);
    int (*end)(void *arg);
};
/* A batch: n launches back to back inside b's begin and end. RK_OK or its error (never
 * RK_ENODATA, which probes_meter_read keeps for a reading that did not come). */
typedef int (*probes_batch_fn)(void *arg, long n, const struct probes_bracket *b);

/*
 * probes_meter_read: one reading, as `roofkit run` and the energy probe take it: batch(arg,
 * launches, ...) with the meter's begin and end around the launches; when the counter did not
 * move enough (probes_meter_end's RK_ENODATA), once more with twice the launches. RK_OK with the
 * reading in *out; RK_ENODATA (not printed) when neither batch gave one, *out then the last
 * batch's (energy NaN, out->launches its launches); the batch's error as it returned it.
 * *seconds (NULL: not kept) gets each batch's wall time added.
 */
int probes_meter_read(struct probes_meter *m, long launches, probes_batch_fn batch, void *arg,
                      struct probes_energy *out /* OUT */, double *seconds /* IN/OUT */);

/* ---- between two GPUs: the peer probes (peer.cu) ---- */

/*
 * Whether the peer probes can measure the ordered pair of CUDA devices (dev_a, dev_b): 0 when
 * they can (two different GPUs, each able to access the other's memory:
 * cudaDeviceCanAccessPeer both ways), why then empty; 1 when the pair is WAIVED, with the
 * reason written to why (may be NULL): one GPU, an index out of range, a GPU with itself, or
 * no peer access. A waived pair is not a failure. Without peer access a copy between the two
 * is staged through host memory, which bw_h2d and bw_d2h measure: the peer probes do not
 * measure it. Prints nothing; leaves the current device as it was.
 */
int probes_peer_waived(int dev_a, int dev_b, char *why /* OUT */, size_t len);

/*
 * Measures the ceilings between GPU dev_a and GPU dev_b and appends them to *out, each with
 * level "peer" (kind "bandwidth" in GB/s = 1e9 B/s over the link, or "latency"):
 *   bw_peer_ce_uni    GB/s  copy engine a -> b: cudaMemcpyPeerAsync, best of copy sizes
 *                           (32 MiB..1 GiB) and of the source's or destination's stream
 *   bw_peer_ce_bi     GB/s  copy engines a -> b and b -> a at once: both directions' bytes
 *                           over the wall time of both
 *   bw_peer_sm_read   GB/s  a kernel on a copies b's memory into a's (loads over the link)
 *   bw_peer_sm_write  GB/s  a kernel on a copies a's memory into b's (stores over the link)
 *   bw_peer_sm_bi     GB/s  that kernel on a and its mirror on b at once
 *   lat_peer_chase    ns    one thread on a chasing pointers through b's memory (>= 8x b's
 *                           L2, random order): the median over SMs of a
 * Every row's params name the GPUs ("gpu_a", "gpu_b": UUIDs; "dev_a", "dev_b": indices) and
 * the "link" in words. A bandwidth row's params add "direction" ("a_to_b", "b_to_a", "both"),
 * "bytes_per_direction", "engine" ("copy" or "sm") and its best configuration ("stream",
 * "copy_bytes", "copies"; or "kernel_on", "block", "blocks_per_sm", "grid"), "configurations"
 * (how many were tried), and the reference: "memcpy_peer_gbs", one cudaMemcpyPeerAsync of
 * "memcpy_peer_bytes" (1 GiB) on the source's stream in the same direction(s), timed in the
 * same run, and "ratio_to_memcpy_peer" = value / memcpy_peer_gbs. The chase's params add
 * "footprint_bytes", "steps", "segments", "sms", "cycles" and "clock_measured_mhz". theoretical
 * is active NVLinks x the architecture's rate a link (x 2 both ways), NaN without NVML or
 * NVLink; sm_clock_mhz, power_w and temp_c are a's.
 *
 * quick != 0: fewer repetitions and configurations (meant to take under 3 s a pair, a full
 * pair under 15 s). A waived pair (probes_peer_waived) returns RK_OK with nothing
 * appended. Peer access that this call enabled it disables again; the current device is
 * restored. Returns RK_OK, RK_ECUDA, RK_ENOMEM, RK_EVERIFY (a copy delivered wrong data) or
 * RK_EINTR (rk_interrupted was set); on any but RK_OK nothing is appended.
 */
int probes_peer_run(int dev_a, int dev_b, int quick, struct probes_output *out /* IN/OUT */);

/* ---- the plateau detector (plain C; unit-tested on synthetic curves) ---- */

struct probes_plateau {
    int first, last; /* indices into the points, inclusive */
    int64_t from_bytes, to_bytes;
    double cycles, ns; /* medians over the plateau's points */
    const char *level; /* "l1", "l2", "l2_far", "dram", or NULL (unlabelled) */
};

/*
 * Finds the flat stretches of a latency curve sorted by footprint and labels them:
 * the first plateau is L1; of those after it within the L2, the longest is "l2",
 * and the highest after that is "l2_far" when it lies at least 25% above "l2"
 * (H100's far partition); past the L2, the plateau whose range holds 8x the
 * L2 is DRAM (else the last one). A plateau is a run of >= 2 consecutive points each within
 * `tol` (relative, e.g. 0.08) of the run's median. Writes at most max plateaus.
 * Returns the number found (>= 0).
 */
int probes_find_plateaus(const struct probes_point *pts, int n, int64_t l2_bytes, double tol,
                         struct probes_plateau *out /* OUT */, int max);

/* ---- the loaded DRAM latency (plain C; unit-tested on synthetic curves) ---- */

/*
 * Where DRAM bandwidth stops growing with the bytes in flight (probe
 * lat_dram_loaded). By Little's law a load's latency under load is bytes in flight /
 * bandwidth; where the curve crosses `frac` of the best bandwidth it is the latency a
 * kernel must cover to saturate DRAM, which the unloaded pointer chase underestimates
 * (the queues are empty there). The knee is the sampled point with the fewest bytes in
 * flight that reaches frac; the crossing is interpolated between it and the best point
 * below it (bandwidth linear in log bytes), because points a factor of two apart would
 * otherwise move the latency by up to 2x.
 */
struct probes_knee {
    int index;             /* of the knee point in the input */
    double inflight_bytes; /* at the knee, GPU-wide [B] */
    double bandwidth_bps;  /* at the knee [B/s] */
    double peak_bps;       /* the best bandwidth of the curve [B/s] */
    double crossing_bytes; /* interpolated bytes in flight where bandwidth = frac x peak
                              (inflight_bytes when no point lies below the knee) [B] */
    double latency_s;      /* crossing_bytes / (frac x peak_bps); inflight_bytes /
                              bandwidth_bps when no point lies below the knee [s] */
    double latency_min_s;  /* the smallest inflight / bandwidth of the curve: the
                              least-loaded latency it saw [s] */
};

/*
 * Finds the knee of n points (inflight_bytes[i], bandwidth_bps[i]) in any order;
 * frac in (0, 1]. Points with a non-finite or non-positive value are ignored.
 * RK_OK, or RK_EUSAGE (out zeroed, index -1) with fewer than two usable points or a
 * bad frac.
 */
int probes_find_knee(const double *inflight_bytes, const double *bandwidth_bps, int n, double frac,
                     struct probes_knee *out /* OUT */);

#ifdef __cplusplus
}
#endif
#endif /* RK_PROBES_H */
