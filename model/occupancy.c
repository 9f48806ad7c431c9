/*
 * occupancy.c - how many threads a launch keeps resident on each SM, and how much
 * of the DRAM bandwidth the loads they keep in flight can use (Little's law).
 *
 * Extension beyond the seeds (docs/model.md "occupancy"). 004_dab40fe45003313a.txt §3.6.2
 * states the idea: Concurrent_mem = MaxOccup_SM * t3 loads in flight against
 * Concurrent_max_mem = latency_mem * Throughput_max_mem bytes, and §5.1 explains
 * ISM2's shapes as latency-bound because that occupancy is not reached. Here the
 * occupancy is the launch's real one (its block size, registers and shared memory
 * under the sm_90 allocation rules), the grid may be smaller than one wave, and
 * both sides of Little's law are in bytes.
 *
 * Assumes: one kernel per GPU, blocks spread evenly; a thread's loads in flight are
 * given by the caller from the kernel's structure (t3 elements for TSM2 V2/V3 and
 * ISM2). Pure: no allocation, no I/O.
 */
#include <math.h>
#include <string.h>

#include "model.h"

static int finite_pos(double x)
{
    return isfinite(x) && x > 0.0;
}

int model_blocks_per_sm(const struct model_gpu *gpu, const struct model_launch *l)
{
    long warps, regs_warp, by_threads, by_regs, by_smem, n;
    if (!gpu || !l || l->threads_per_block <= 0 || l->regs_per_thread < 0 ||
        !(isfinite(l->smem_per_block) && l->smem_per_block >= 0) || gpu->max_threads_per_sm <= 0 ||
        gpu->regs_per_sm <= 0 || !finite_pos(gpu->smem_per_sm))
        return -1;
    warps = (l->threads_per_block + 31) / 32;
    by_threads = gpu->max_threads_per_sm / l->threads_per_block;
    regs_warp = ((long)l->regs_per_thread * 32 + MODEL_REG_ALLOC_UNIT - 1) / MODEL_REG_ALLOC_UNIT *
                MODEL_REG_ALLOC_UNIT;
    by_regs = regs_warp > 0 ? gpu->regs_per_sm / (warps * regs_warp) : MODEL_MAX_BLOCKS_PER_SM;
    by_smem = (long)floor(gpu->smem_per_sm / (l->smem_per_block + MODEL_SMEM_RESERVED));
    n = MODEL_MAX_BLOCKS_PER_SM;
    if (by_threads < n)
        n = by_threads;
    if (by_regs < n)
        n = by_regs;
    if (by_smem < n)
        n = by_smem;
    return (int)n;
}

double model_little_util(double bytes_in_flight, double bandwidth, double latency_s)
{
    double need;
    if (!(isfinite(bytes_in_flight) && bytes_in_flight >= 0) || !finite_pos(bandwidth) ||
        !finite_pos(latency_s))
        return NAN;
    need = bandwidth * latency_s;
    return bytes_in_flight >= need ? 1.0 : bytes_in_flight / need;
}

double model_dram_util(const struct model_gpu *g, double f)
{
    const double *b, *u;
    int n;
    if (!g || !(isfinite(f) && f >= 0))
        return NAN;
    n = g->dram_curve_n;
    b = g->dram_curve_bytes;
    u = g->dram_curve_util;
    if (n < 2 || !b || !u)
        return model_little_util(f, g->bandwidth, g->mem_latency_cycles / g->clock_hz);
    if (f <= b[0])
        return u[0] * f / b[0];
    for (int i = 1; i < n; i++)
        if (f < b[i]) {
            const double t = log(f / b[i - 1]) / log(b[i] / b[i - 1]);
            return u[i - 1] + t * (u[i] - u[i - 1]);
        }
    return 1.0;
}

int model_occupancy(const struct model_gpu *gpu, const struct model_launch *l,
                    struct model_occupancy *out)
{
    int bps;
    double per_wave, bif;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (!gpu || !l || gpu->sms <= 0 || !finite_pos(l->blocks) || !finite_pos(gpu->bandwidth) ||
        !finite_pos(gpu->clock_hz) || !finite_pos(gpu->mem_latency_cycles))
        return RK_EUSAGE;
    bps = model_blocks_per_sm(gpu, l);
    if (bps <= 0)
        return RK_EUSAGE;
    per_wave = (double)bps * gpu->sms;
    out->blocks_per_sm = bps;
    out->active_sms = l->blocks < gpu->sms ? l->blocks : gpu->sms;
    out->resident_threads = (l->blocks < per_wave ? l->blocks : per_wave) * l->threads_per_block;
    out->waves = l->blocks / per_wave;
    out->bytes_needed = gpu->bandwidth * gpu->mem_latency_cycles / gpu->clock_hz;
    bif = l->bytes_in_flight_per_thread;
    if (isfinite(bif) && bif > 0) {
        out->bytes_in_flight = out->resident_threads * bif;
        out->util = model_dram_util(gpu, out->bytes_in_flight);
    } else {
        out->bytes_in_flight = NAN;
        out->util = 1.0;
    }
    return RK_OK;
}

int model_pipe_time(const struct model_gpu *gpu, const struct model_launch *l,
                    const struct model_occupancy *occ, const struct model_issue_counts *c,
                    double peak_flops, double bw_shared, double bw_l1, double stage_latency_cycles,
                    struct model_pipes *out)
{
    double per_sm_cycle, busiest, resident_blocks, fma_peak, fma_chains, best, extra;
    if (!out)
        return RK_EUSAGE;
    memset(out, 0, sizeof *out);
    if (!gpu || !l || !occ || !c || gpu->sms <= 0 || !finite_pos(gpu->clock_hz) ||
        !finite_pos(gpu->comp_latency_cycles) || !finite_pos(l->blocks) ||
        l->threads_per_block <= 0 || occ->blocks_per_sm <= 0 || !finite_pos(peak_flops) ||
        !finite_pos(bw_shared) || !finite_pos(bw_l1) ||
        !(isfinite(c->acc_per_thread) && c->acc_per_thread >= 0) ||
        !(isfinite(stage_latency_cycles) && stage_latency_cycles >= 0) ||
        !(isfinite(c->tiles) && c->tiles >= 0 && isfinite(c->stage_rounds) &&
          c->stage_rounds >= 0) ||
        !(isfinite(c->smem_instr) && c->smem_instr >= 0) ||
        !(c->fma_warp >= 0 && c->instr_warp >= 0 && c->smem_wavefronts >= 0 &&
          c->l1_wavefronts >= 0 &&
          isfinite(c->fma_warp + c->instr_warp + c->smem_wavefronts + c->l1_wavefronts)))
        return RK_EUSAGE;
    per_sm_cycle = gpu->sms * gpu->clock_hz;
    busiest = ceil(l->blocks / gpu->sms);
    out->busiest_share = busiest / l->blocks;
    resident_blocks = busiest < occ->blocks_per_sm ? busiest : occ->blocks_per_sm;
    out->warps_per_sp = resident_blocks * ceil(l->threads_per_block / 32.0) / 4.0;
    fma_peak = peak_flops / (2.0 * 32.0 * per_sm_cycle);
    fma_chains = c->acc_per_thread > 0 /* 0: chains unknown, the pipe's peak */
                     ? 4.0 * out->warps_per_sp * c->acc_per_thread / gpu->comp_latency_cycles
                     : fma_peak;
    out->fma_rate = fma_chains < fma_peak ? fma_chains : fma_peak;
    out->cycles_fma = c->fma_warp * out->busiest_share / out->fma_rate;
    extra = finite_pos(gpu->issue_cycles_shared) && gpu->issue_cycles_shared > 1.0
                ? (gpu->issue_cycles_shared - 1.0) * c->smem_instr
                : 0.0; /* a shared instruction's cycles beyond the first (probe) */
    out->cycles_issue = (c->instr_warp + extra) * out->busiest_share / 4.0;
    out->cycles_smem = c->smem_wavefronts * out->busiest_share /
                       (bw_shared / (MODEL_WAVEFRONT_BYTES * per_sm_cycle));
    out->cycles_l1 =
        c->l1_wavefronts * out->busiest_share / (bw_l1 / (MODEL_WAVEFRONT_BYTES * per_sm_cycle));
    best = out->cycles_fma;
    out->bound = fma_chains < fma_peak ? MODEL_BOUND_LATENCY : MODEL_BOUND_COMPUTE;
    if (out->cycles_issue > best) {
        best = out->cycles_issue;
        out->bound = MODEL_BOUND_COMPUTE;
    }
    if (out->cycles_smem > best) {
        best = out->cycles_smem;
        out->bound = MODEL_BOUND_SHARED;
    }
    if (out->cycles_l1 > best) {
        best = out->cycles_l1;
        out->bound = MODEL_BOUND_L1;
    }
    if (c->tiles > 0) {
        /* a block's staging loads are not hidden by its own work: it waits, then computes
         * its tile; other resident blocks overlap it (docs/model.md "issue", staging) */
        double w = best / (busiest * c->tiles);
        out->stage_latency = stage_latency_cycles;
        out->cycles_stage = ceil(busiest / resident_blocks) * c->tiles *
                            (c->stage_rounds * stage_latency_cycles + w);
        if (out->cycles_stage > best) {
            best = out->cycles_stage;
            out->bound = MODEL_BOUND_LATENCY;
        }
    }
    out->time_s = best / gpu->clock_hz;
    return RK_OK;
}
