/*
 * internal.h - what the files of analysis/ share; not part of the module's interface
 * (analysis.h is).
 */
#ifndef RK_ANALYSIS_INTERNAL_H
#define RK_ANALYSIS_INTERNAL_H

#include "analysis.h"

/*
 * The details JSON of one prediction (details.c): the model, its time and bound, its inputs
 * and terms (the TSM2 problem and GPU with every field of model_tsm2_fields[] for tsm2; flops,
 * peak, intensity and the bytes, bandwidth and time of each level for the others; occupancy,
 * pipes and overlap where the model has them) and each ceiling used (id, name, value, unit,
 * capture). *out is malloc'd. RK_OK or RK_ENOMEM (printed).
 */
int analysis_details(enum model_kind kind, const struct model_predict_in *in,
                     const struct model_prediction *p, const struct db_ceiling *const *used,
                     const char *dram_source, long t2_kernel, long t3_kernel, char **out /* OUT */);

/*
 * The bytes the counters saw at each level (place.c): DRAM dram_read_bytes + dram_write_bytes
 * (either alone when the other is missing), L2 l2_bytes, L1 l1_bytes, shared shared_bytes;
 * NaN where not measured.
 */
void analysis_counter_bytes(const struct db_measurement_row *row,
                            double *bytes /* OUT: MODEL_LEVEL_COUNT */);

#endif /* RK_ANALYSIS_INTERNAL_H */
