/*
 * details.c - the details JSON stored with each prediction (internal.h): every input and
 * term of the model and each ceiling used, by id, so that a stored prediction can be
 * traced to the probes behind it. Numbers are written with %.17g (they round-trip) and
 * NaN as null, through common/'s JSON writer.
 */
#include "common.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>

/* "key":value, (the JSON writer's number, then the comma of the next member) */
static void key_num_comma(struct rk_buf *b, const char *key, double v)
{
    rk_json_key_num(b, key, v);
    rk_buf_puts(b, ",");
}

static void details_ceilings(struct rk_buf *b, const struct db_ceiling *const *used)
{
    int first = 1;
    rk_buf_printf(b, ",\"ceilings\":{");
    for (int i = 0; i < ANALYSIS_USE_COUNT; i++) {
        const struct db_ceiling *c = used[i];
        if (!c)
            continue;
        rk_buf_printf(b, "%s\"%s\":{\"id\":%lld,\"name\":", first ? "" : ",",
                      analysis_use_name((enum analysis_use)i), (long long)c->id);
        rk_json_str(b, c->name);
        rk_buf_printf(b, ",");
        rk_json_key_num(b, "value", c->value);
        rk_buf_printf(b, ",\"unit\":");
        rk_json_str(b, c->unit);
        rk_buf_printf(b, ",\"capture\":%lld}", (long long)c->capture_id);
        first = 0;
    }
    rk_buf_printf(b, "}");
}

static void details_terms(struct rk_buf *b, const struct model_predict_in *in,
                          const struct model_prediction *p, int hier, const char *dram_source)
{
    key_num_comma(b, "flops", in->flops);
    key_num_comma(b, "peak_flops", in->peak_flops);
    key_num_comma(b, "time_compute_s", p->terms.time_compute_s);
    key_num_comma(b, "intensity", p->terms.intensity);
    rk_json_key_num(b, "attainable_flops", p->terms.attainable_flops);
    if (!hier) {
        rk_buf_printf(b, ",");
        key_num_comma(b, "bytes_dram", in->roofline_bytes);
        key_num_comma(b, "bandwidth_dram", in->bandwidth[MODEL_LEVEL_DRAM]);
        key_num_comma(b, "time_dram_s", p->terms.time_level_s[MODEL_LEVEL_DRAM]);
        rk_json_key_num(b, "ridge",
                        model_ridge_point(in->peak_flops, in->bandwidth[MODEL_LEVEL_DRAM]));
        return;
    }
    rk_buf_printf(b, ",\"dram_bytes\":\"%s\",\"levels\":{", dram_source);
    for (int i = 0; i < MODEL_LEVEL_COUNT; i++) {
        rk_buf_printf(b, "%s\"%s\":{", i ? "," : "", model_level_name((enum model_level_id)i));
        key_num_comma(b, "bytes", in->level_bytes[i]);
        key_num_comma(b, "bandwidth", in->level_bytes[i] > 0 ? in->bandwidth[i] : NAN);
        rk_json_key_num(b, "time_s", p->terms.time_level_s[i]);
        rk_buf_printf(b, "}");
    }
    rk_buf_printf(b, "}");
}

static void details_tsm2(struct rk_buf *b, const struct model_predict_in *in,
                         const struct model_prediction *p, long t2_kernel, long t3_kernel)
{
    const struct model_gpu *g = in->gpu;
    const struct model_tsm2_problem *pr = in->tsm2;
    rk_buf_printf(b,
                  "\"m\":%ld,\"n\":%ld,\"k\":%ld,\"elem_bytes\":%d,\"t1\":%d,\"t2\":%d,\"t3\":%d,"
                  "\"t2_kernel\":%ld,\"t3_kernel\":%ld,\"gpu\":{",
                  pr->m, pr->n, pr->k, pr->elem_bytes, pr->t1, pr->t2, pr->t3, t2_kernel,
                  t3_kernel);
    key_num_comma(b, "peak_flops", g->peak_flops);
    key_num_comma(b, "bandwidth", g->bandwidth);
    rk_json_key_num(b, "clock_hz", g->clock_hz);
    rk_buf_printf(b, ",\"sms\":%d,\"regs_per_sm\":%d,", g->sms, g->regs_per_sm);
    rk_json_key_num(b, "smem_per_sm", g->smem_per_sm);
    rk_buf_printf(b, ",\"max_threads_per_sm\":%d,", g->max_threads_per_sm);
    key_num_comma(b, "mem_latency_cycles", g->mem_latency_cycles);
    key_num_comma(b, "comp_latency_cycles", g->comp_latency_cycles);
    rk_json_key_num(b, "regs_fixed", g->regs_fixed);
    rk_buf_printf(b, "},\"eval\":{");
    for (int i = 0; i < model_tsm2_nfields; i++) {
        const struct model_field *f = &model_tsm2_fields[i];
        if (i)
            rk_buf_printf(b, ",");
        if (f->type == MODEL_F_BOUND)
            rk_buf_printf(b, "\"%s\":\"%s\"", f->key,
                          model_bound_name((enum model_bound)model_field_double(f, &p->tsm2)));
        else
            rk_json_key_num(b, f->key, model_field_double(f, &p->tsm2));
    }
    rk_buf_printf(b, "}");
}

static void details_pipes(struct rk_buf *b, const struct model_pipes *q)
{
    rk_buf_printf(b, ",\"pipes\":{");
    key_num_comma(b, "busiest_share", q->busiest_share);
    key_num_comma(b, "warps_per_sp", q->warps_per_sp);
    key_num_comma(b, "fma_rate", q->fma_rate);
    key_num_comma(b, "cycles_fma", q->cycles_fma);
    key_num_comma(b, "cycles_issue", q->cycles_issue);
    key_num_comma(b, "cycles_smem", q->cycles_smem);
    key_num_comma(b, "cycles_l1", q->cycles_l1);
    key_num_comma(b, "stage_latency", q->stage_latency);
    key_num_comma(b, "cycles_stage", q->cycles_stage);
    if (q->time_chain_s > 0) {
        key_num_comma(b, "time_chain_s", q->time_chain_s);
    }
    rk_json_key_num(b, "time_s", q->time_s);
    rk_buf_printf(b, ",\"bound\":\"%s\"}", model_bound_name(q->bound));
}

static void details_overlap(struct rk_buf *b, const struct model_overlap *o)
{
    rk_buf_printf(b, ",\"overlap\":{");
    rk_json_key_num(b, "p", o->p);
    rk_buf_printf(b, ",\"terms_s\":{");
    for (int i = 0; i < MODEL_OVL_COUNT; i++) {
        rk_buf_printf(b, "%s", i ? "," : "");
        rk_json_key_num(b, model_overlap_term_name((enum model_overlap_term)i), o->term_s[i]);
    }
    rk_buf_printf(b, "},");
    key_num_comma(b, "largest_s", o->largest_s);
    key_num_comma(b, "norm_s", o->norm_s);
    key_num_comma(b, "epilogue_s", o->epilogue_s);
    rk_json_key_num(b, "start_s", o->start_s);
    rk_buf_printf(b, "}");
}

static void details_occupancy(struct rk_buf *b, const struct model_predict_in *in,
                              const struct model_prediction *p)
{
    const struct model_occupancy *o = &p->occ;
    rk_buf_printf(b, ",");
    rk_json_key_num(b, "launch_s", in->launch_s);
    rk_buf_printf(b, ",\"occupancy\":{");
    if (in->launch) {
        rk_json_key_num(b, "blocks", in->launch->blocks);
        rk_buf_printf(b, ",\"threads_per_block\":%d,\"regs_per_thread\":%d,",
                      in->launch->threads_per_block, in->launch->regs_per_thread);
        key_num_comma(b, "smem_per_block", in->launch->smem_per_block);
        rk_json_key_num(b, "bytes_in_flight_per_thread", in->launch->bytes_in_flight_per_thread);
        rk_buf_printf(b, ",\"blocks_per_sm\":%d,", o->blocks_per_sm);
        key_num_comma(b, "active_sms", o->active_sms);
        key_num_comma(b, "resident_threads", o->resident_threads);
        key_num_comma(b, "waves", o->waves);
        key_num_comma(b, "bytes_in_flight", o->bytes_in_flight);
        key_num_comma(b, "bytes_needed", o->bytes_needed);
    }
    rk_json_key_num(b, "util", o->util);
    rk_buf_printf(b, "}");
}

int analysis_details(enum model_kind kind, const struct model_predict_in *in,
                     const struct model_prediction *p, const struct db_ceiling *const *used,
                     const char *dram_source, long t2_kernel, long t3_kernel, char **out)
{
    struct rk_buf b = RK_BUF_INIT;
    const int issue_like =
        kind == MODEL_KIND_ISSUE || kind == MODEL_KIND_ISSUE_COUNTERS || kind == MODEL_KIND_OVERLAP;
    *out = NULL;
    rk_buf_printf(&b, "{\"model\":\"%s\",", model_kind_name(kind));
    rk_json_key_num(&b, "predicted_time_s", p->time_s);
    rk_buf_printf(&b, ",\"bound\":\"%s\",", model_bound_name(p->bound));
    if (kind == MODEL_KIND_TSM2)
        details_tsm2(&b, in, p, t2_kernel, t3_kernel);
    else
        details_terms(&b, in, p, kind != MODEL_KIND_ROOFLINE, dram_source);
    if (kind == MODEL_KIND_OCCUPANCY || issue_like)
        details_occupancy(&b, in, p);
    if (issue_like && in->issue)
        details_pipes(&b, &p->pipes);
    if (kind == MODEL_KIND_OVERLAP)
        details_overlap(&b, &p->overlap);
    details_ceilings(&b, used);
    rk_buf_printf(&b, "}");
    if (b.oom) {
        rk_buf_release(&b);
        return rk_error(RK_ENOMEM, "out of host memory");
    }
    *out = b.s;
    return RK_OK;
}
