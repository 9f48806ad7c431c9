/*
 * suites.c - the suites (kernels.h): named lists of (kernel patterns x shapes) entries
 * that `roofkit run --suite NAME` runs and `roofkit list suites` prints. Kept apart from
 * the kernel table (registry.c) so that a suite can change without touching a kernel.
 */
#include "kernels.h"

#include <string.h>

/* ---- suites ---------------------------------------------------------------- */

/* clang-format off */
#define SQ(N) {N, N, N}
#define TS(M, N) {M, N, M} /* TSM2: m = k */
#define IS(M, KN) {M, KN, KN} /* ISM2: k = n */

static const struct kernels_suite suites[] = {
    {"seeds",
     "the seeds' experiments: square N sweeps with non-multiples of the block sizes (000 "
     "Table 2, 003 Q4.A), the rectangular shapes of 002 (k = 32, 64), regtile at 4096",
     3,
     {{{"naive", "stso", "stmo", "stmvb", "smem_001", "blocktile1d_001", "tiled_003",
        "rect_padded", "rect_border", "regtile", "cublas", NULL},
       8,
       {SQ(256), SQ(512), SQ(1023), SQ(1024), SQ(1025), SQ(2047), SQ(2048), SQ(2049)}},
      {{"rect_padded", "rect_border", "cublas", NULL},
       6,
       {{1000, 1000, 32}, {3001, 2003, 32}, {7999, 6007, 32}, {1000, 1000, 64},
        {3001, 2003, 64}, {7999, 6007, 64}}},
      {{"regtile", "cublas", NULL}, 1, {SQ(4096)}}}},
    {"tsm2",
     "TSM2 on H100: m = k in {10240, 20480, 30720}, n in {2, 4, 8, 16} (004 §4.1)",
     1,
     {{{"tsm2_v0", "tsm2_v1", "tsm2_v2", "tsm2_v3", "cublas", NULL},
       12,
       {TS(10240, 2), TS(10240, 4), TS(10240, 8), TS(10240, 16), TS(20480, 2), TS(20480, 4),
        TS(20480, 8), TS(20480, 16), TS(30720, 2), TS(30720, 4), TS(30720, 8), TS(30720, 16)}}}},
    {"ism2",
     "ISM2: m in {1e5, 1e6, 1e7}, k = n in {8, 16} (004 §6)",
     1,
     {{{"ism2_opt1", "ism2_opt2", "tsm2_v3", "cublas", NULL},
       6,
       {IS(100000, 8), IS(100000, 16), IS(1000000, 8), IS(1000000, 16), IS(10000000, 8),
        IS(10000000, 16)}}}},
    {"default",
     "a short mix for 'roofkit all': TSM2, ISM2, the seeds' best and regtile against cuBLAS",
     3,
     {{{"tsm2_v3", "cublas", NULL}, 2, {TS(20480, 4), TS(20480, 16)}},
      {{"ism2_opt1", "cublas", NULL}, 1, {IS(10000000, 16)}},
      {{"stmvb", "tiled_003", "regtile", "cublas", NULL}, 1, {SQ(2048)}}}},
};

/* clang-format on */

#define N_SUITES ((int)(sizeof suites / sizeof suites[0]))

int kernels_suites_count(void)
{
    return N_SUITES;
}

const struct kernels_suite *kernels_suite_get(int i)
{
    return (i >= 0 && i < N_SUITES) ? &suites[i] : NULL;
}

const struct kernels_suite *kernels_suite_find(const char *name)
{
    for (int i = 0; i < N_SUITES; i++)
        if (strcmp(suites[i].name, name) == 0)
            return &suites[i];
    return NULL;
}
