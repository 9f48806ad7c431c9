/*
 * plateau.c - finds the flat stretches ("plateaus") of a pointer-chase latency
 * curve and says which level of the memory hierarchy each one is.
 *
 * Plain C with no CUDA, so the unit test runs on any machine. Assumes the points
 * are sorted by footprint and spaced geometrically (several per octave), as
 * lat_chase produces them.
 *
 * Segmentation: a run grows from its first point while each next point lies
 * within `tol` of the run's median; a run of two or more points is a plateau, a
 * lone point is a transition. A gradual transition can leave a short plateau of
 * its own; labelling is what keeps it out of the answer:
 *
 *   l1      the first plateau (the curve starts inside L1)
 *   l2      of the plateaus after l1 whose geometric middle lies within the L2,
 *           the one with the most points (the L2 spans many octaves; a short run
 *           in the L1-to-L2 transition does not)
 *   l2_far  the highest plateau after l2 within the L2, when it is >= 25% above l2: H100's
 *           L2 is two partitions, and lines homed in the far one cost more
 *           (an H100's 64-bit chase: 293 cycles near, 472 far)
 *   dram    past the L2 the curve keeps rising slowly with TLB reach; the DRAM
 *           plateau is the one whose range holds 8x the L2 (the size the DRAM
 *           bandwidth probes use), else the last one past the L2
 */
#include "common.h"
#include "model.h"
#include "probes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Median of the cycles (or ns) of points first..last (model_median on a scratch copy). */
static double run_median(const struct probes_point *pts, int first, int last, int want_ns)
{
    int n = last - first + 1;
    double stack[64];
    double *v = n <= 64 ? stack : malloc((size_t)n * sizeof *v);
    double m;
    if (!v || n < 1)
        return NAN;
    for (int i = 0; i < n; i++)
        v[i] = want_ns ? pts[first + i].ns : pts[first + i].cycles;
    m = model_median(v, (size_t)n);
    if (v != stack)
        free(v);
    return m;
}

static double geo_middle(const struct probes_plateau *p)
{
    return sqrt((double)p->from_bytes * (double)p->to_bytes);
}

int probes_find_plateaus(const struct probes_point *pts, int n, int64_t l2_bytes, double tol,
                         struct probes_plateau *out, int max)
{
    int k = 0, i = 0;
    int near = -1, far = -1, dram = -1, dram_8x = -1;

    if (!pts || !out || max <= 0 || n < 2 || !(tol > 0))
        return 0;
    while (i < n && k < max) {
        int j = i + 1;
        while (j < n) {
            double med = run_median(pts, i, j - 1, 0);
            if (!(fabs(pts[j].cycles - med) <= tol * med))
                break;
            j++;
        }
        if (j - i >= 2) {
            struct probes_plateau *p = &out[k++];
            p->first = i;
            p->last = j - 1;
            p->from_bytes = pts[i].footprint_bytes;
            p->to_bytes = pts[j - 1].footprint_bytes;
            p->cycles = run_median(pts, i, j - 1, 0);
            p->ns = run_median(pts, i, j - 1, 1);
            p->level = NULL;
            i = j;
        } else {
            i++;
        }
    }
    if (k == 0)
        return 0;

    out[0].level = "l1";
    for (int p = 1; p < k; p++)
        if (geo_middle(&out[p]) <= (double)l2_bytes &&
            (near < 0 || out[p].last - out[p].first > out[near].last - out[near].first))
            near = p;
    for (int p = 1; p < k; p++) {
        if (geo_middle(&out[p]) <= (double)l2_bytes) {
            if (near >= 0 && p > near && (far < 0 || out[p].cycles > out[far].cycles))
                far = p;
        } else {
            dram = p;
            if (out[p].from_bytes <= 8 * l2_bytes && 8 * l2_bytes <= out[p].to_bytes)
                dram_8x = p;
        }
    }
    if (dram_8x >= 0)
        dram = dram_8x;
    if (near >= 0)
        out[near].level = "l2";
    if (near >= 0 && far >= 0 && out[far].cycles >= 1.25 * out[near].cycles)
        out[far].level = "l2_far";
    if (dram >= 0)
        out[dram].level = "dram";
    return k;
}

/* A point of the knee's curve that counts: both coordinates finite and positive. */
static int usable_point(double f, double b)
{
    return isfinite(f) && f > 0.0 && isfinite(b) && b > 0.0;
}

int probes_find_knee(const double *inflight_bytes, const double *bandwidth_bps, int n, double frac,
                     struct probes_knee *out)
{
    int usable = 0;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    out->index = -1;
    if (!inflight_bytes || !bandwidth_bps || n < 2 || !(frac > 0.0 && frac <= 1.0))
        return RK_EUSAGE;
    out->latency_min_s = INFINITY;
    for (int i = 0; i < n; i++) {
        const double f = inflight_bytes[i], b = bandwidth_bps[i];
        if (!usable_point(f, b))
            continue;
        usable++;
        if (b > out->peak_bps)
            out->peak_bps = b;
        if (f / b < out->latency_min_s)
            out->latency_min_s = f / b;
    }
    if (usable < 2) {
        memset(out, 0, sizeof *out);
        out->index = -1;
        return RK_EUSAGE;
    }
    /* the fewest bytes in flight that reach frac of the peak (ties: the faster point) */
    for (int i = 0; i < n; i++) {
        const double f = inflight_bytes[i], b = bandwidth_bps[i];
        if (!usable_point(f, b) || b < frac * out->peak_bps)
            continue;
        if (out->index < 0 || f < out->inflight_bytes ||
            (f == out->inflight_bytes && b > out->bandwidth_bps)) {
            out->index = i;
            out->inflight_bytes = f;
            out->bandwidth_bps = b;
        }
    }
    /*
     * The curve is sampled at factors of two in bytes in flight, so the knee point alone
     * moves the latency by up to 2x when its neighbour below lands just under or just over
     * frac (on an H100, 92.7% against 99.4% of the peak). The crossing is interpolated
     * instead: between the best bandwidth seen at the largest count of bytes below the
     * knee and the knee, linear in bandwidth against log(bytes in flight), and the latency
     * is the bytes in flight there over frac x the peak.
     */
    const double target = frac * out->peak_bps;
    double f_lo = 0.0, b_lo = 0.0;
    for (int i = 0; i < n; i++) {
        const double f = inflight_bytes[i], b = bandwidth_bps[i];
        if (!usable_point(f, b) || f >= out->inflight_bytes)
            continue;
        if (f > f_lo || (f == f_lo && b > b_lo)) {
            f_lo = f;
            b_lo = b;
        }
    }
    out->crossing_bytes = out->inflight_bytes;
    if (f_lo > 0.0 && b_lo < target && out->bandwidth_bps > b_lo) {
        double t = (target - b_lo) / (out->bandwidth_bps - b_lo);
        t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
        out->crossing_bytes = f_lo * pow(out->inflight_bytes / f_lo, t);
        out->latency_s = out->crossing_bytes / target;
    } else {
        out->latency_s = out->inflight_bytes / out->bandwidth_bps;
    }
    return RK_OK;
}
