/*
 * suites.c - the suites (kernels.h): named lists of (kernel patterns x shapes) entries
 * that `roofkit run --suite NAME` runs and `roofkit list suites` prints. Kept apart from
 * the kernel table (registry.c) so that a suite can change without touching a kernel.
 *
 * An entry lists up to KERNELS_SUITE_MAX_SHAPES shapes, or is a grid: the cross product
 * of value lists (GRID below), which is how the sweeps over n, k and m of TSM2 and ISM2
 * (004 §4, §6) are written without a shape limit. The grids run the cuBLAS calls beside
 * the kernel on every shape: the faster of the two judges it (analysis_reference); and move,
 * the shape's bytes moved and nothing computed, what the copy ceiling comes to at that size
 * (analysis_floor_ok).
 */
#include "kernels.h"

#include <stdio.h>
#include <string.h>

/* ---- suites ---------------------------------------------------------------- */

/* clang-format off */
#define SQ(N) {N, N, N}
#define TS(M, N) {M, N, M} /* TSM2: m = k */
#define IS(M, KN) {M, KN, KN} /* ISM2: k = n */
/* A grid's value list: its count, then its values (struct kernels_grid's order). */
#define VALUES(...) (int)(sizeof((long[]){__VA_ARGS__}) / sizeof(long)), {__VA_ARGS__}
#define NONE 0, {0} /* no list: the dimension equals m */
#define GRID_CUBLAS "cublas_sgemm", "cublas_dgemm", "cublas_gemmex"
/* the grids' kernels: the entry point, the cuBLAS calls that judge it, and move, the floor
 * under it (the shape's bytes moved, nothing computed) */
#define GRID_KERNELS "tsm2", GRID_CUBLAS, "move", NULL
#define ISM2_KN VALUES(1, 2, 3, 4, 6, 8, 12, 16, 24, 32)

static const struct kernels_suite suites[] = {
    {"seeds",
     "the seeds' experiments: square N sweeps with non-multiples of the block sizes (000 "
     "Table 2, 003 Q4.A), the rectangular shapes of 002 (k = 32, 64), regtile at 4096",
     3,
     {{{"naive", "stso", "stmo", "stmvb", "smem_001", "blocktile1d_001", "tiled_003",
        "rect_padded", "rect_border", "regtile", "cublas", NULL},
       8,
       {SQ(256), SQ(512), SQ(1023), SQ(1024), SQ(1025), SQ(2047), SQ(2048), SQ(2049)}, {0}},
      {{"rect_padded", "rect_border", "cublas", NULL},
       6,
       {{1000, 1000, 32}, {3001, 2003, 32}, {7999, 6007, 32}, {1000, 1000, 64},
        {3001, 2003, 64}, {7999, 6007, 64}}, {0}},
      {{"regtile", "cublas", NULL}, 1, {SQ(4096)}, {0}}}},
    {"tsm2",
     "TSM2 on H100: m = k in {10240, 20480, 30720}, n in {2, 4, 8, 16} (004 §4.1)",
     1,
     {{{"tsm2_v0", "tsm2_v1", "tsm2_v2", "tsm2_v3", "cublas", NULL},
       12,
       {TS(10240, 2), TS(10240, 4), TS(10240, 8), TS(10240, 16), TS(20480, 2), TS(20480, 4),
        TS(20480, 8), TS(20480, 16), TS(30720, 2), TS(30720, 4), TS(30720, 8), TS(30720, 16)}, {0}}}},
    {"ism2",
     "ISM2: m in {1e5, 1e6, 1e7}, k = n in {8, 16} (004 §6)",
     1,
     {{{"ism2_opt1", "ism2_opt2", "tsm2_v3", "cublas", NULL},
       6,
       {IS(100000, 8), IS(100000, 16), IS(1000000, 8), IS(1000000, 16), IS(10000000, 8),
        IS(10000000, 16)}, {0}}}},
    {"default",
     "a short mix for 'roofkit all': TSM2, ISM2, the seeds' best and regtile against cuBLAS",
     3,
     {{{"tsm2_v3", "cublas", NULL}, 2, {TS(20480, 4), TS(20480, 16)}, {0}},
      {{"ism2_opt1", "cublas", NULL}, 1, {IS(10000000, 16)}, {0}},
      {{"stmvb", "tiled_003", "regtile", "cublas", NULL}, 1, {SQ(2048)}, {0}}}},
    {"tsm2-grid",
     "TSM2 against the faster cuBLAS call: m = k in {10240, 20480, 40960}, every n from 1 "
     "to 32 (004 §4.1, widened)",
     1,
     {{{GRID_KERNELS}, 0, {{0}},
       {VALUES(10240, 20480, 40960),
        VALUES(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
               23, 24, 25, 26, 27, 28, 29, 30, 31, 32),
        NONE}}}},
    {"ism2-grid",
     "ISM2 against the faster cuBLAS call: m in {1e5, 1e6, 1e7}, k and n each in {1, 2, 3, "
     "4, 6, 8, 12, 16, 24, 32} (004 §6, widened)",
     1,
     {{{GRID_KERNELS}, 0, {{0}},
       {VALUES(100000, 1000000, 10000000), ISM2_KN, ISM2_KN}}}},
    {"ism2-odd",
     "ISM2 at m not a multiple of 4 (a column of A or C not 16-byte aligned) against the faster "
     "cuBLAS call: m in {100003, 1000002, 1000003, 10000001}, n in {2, 8, 32}, k in {1, 2, 12, "
     "24}",
     1,
     {{{GRID_KERNELS}, 0, {{0}},
       {VALUES(100003, 1000002, 1000003, 10000001), VALUES(2, 8, 32), VALUES(1, 2, 12, 24)}}}},
    {"tsm2-odd",
     "TSM2 at m = k not a multiple of 4 (A's columns not 16-byte aligned) against the faster "
     "cuBLAS call: m = k in {10241, 10242, 20483}, n in {1, 2, 5, 8, 12, 16, 24, 32}",
     1,
     {{{GRID_KERNELS}, 0, {{0}},
       {VALUES(10241, 10242, 20483), VALUES(1, 2, 5, 8, 12, 16, 24, 32), NONE}}}},
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

int kernels_suite_entry_size(const struct kernels_suite_entry *en)
{
    const struct kernels_grid *g = &en->grid;
    if (en->n_shapes > 0)
        return en->n_shapes;
    return g->n_m * (g->n_n ? g->n_n : 1) * (g->n_k ? g->n_k : 1);
}

void kernels_suite_entry_shape(const struct kernels_suite_entry *en, int i,
                               struct kernels_shape *out)
{
    const struct kernels_grid *g = &en->grid;
    const int nn = g->n_n ? g->n_n : 1, nk = g->n_k ? g->n_k : 1;
    if (en->n_shapes > 0) {
        *out = en->shapes[i];
        return;
    }
    out->m = g->m[i / (nn * nk)];
    out->k = g->n_k ? g->k[i / nn % nk] : out->m;
    out->n = g->n_n ? g->n[i % nn] : out->m;
}

/* "name in {a, b, c}", "name in a..b" for a run of consecutive integers (3 or more), or
 * "name = m" for a list that is absent. */
static size_t describe_list(char *buf, size_t len, const char *name, const long *v, int n)
{
    int run = n >= 3;
    size_t used;
    if (n == 0)
        return (size_t)snprintf(buf, len, "%s = m", name);
    for (int i = 1; i < n; i++)
        run &= v[i] == v[i - 1] + 1;
    if (run)
        return (size_t)snprintf(buf, len, "%s in %ld..%ld", name, v[0], v[n - 1]);
    used = (size_t)snprintf(buf, len, "%s in {", name);
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%ld", i ? ", " : "", v[i]);
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, "}");
    return used;
}

const char *kernels_suite_entry_describe(const struct kernels_suite_entry *en, char *buf,
                                         size_t len)
{
    const struct kernels_grid *g = &en->grid;
    size_t used = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    if (en->n_shapes > 0) {
        for (int h = 0; h < en->n_shapes && used < len; h++)
            used += (size_t)snprintf(buf + used, len - used, "%s%ldx%ldx%ld", h ? ", " : "",
                                     en->shapes[h].m, en->shapes[h].n, en->shapes[h].k);
        return buf;
    }
    used += describe_list(buf, len, "m", g->m, g->n_m);
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, ", ");
    if (used < len)
        used += describe_list(buf + used, len - used, "n", g->n, g->n_n);
    if (used < len)
        used += (size_t)snprintf(buf + used, len - used, ", ");
    if (used < len)
        describe_list(buf + used, len - used, "k", g->k, g->n_k);
    return buf;
}
