/*
 * test_peer_gpu.c - the peer probes on GPUs 0 and 1 (ctest label gpu). Exits 77 (ctest:
 * skipped) with fewer than two GPUs or when the pair is waived (no peer access both ways),
 * saying why. Otherwise measures both ordered pairs, (0, 1) then (1, 0), in quick mode (pass
 * "full" for the full mode) in the group setup, prints every row and a summary against
 * cudaMemcpyPeerAsync, then checks them. Ranges hold for any two GPUs with peer access; the
 * acceptance target (P6) is the one set for two H100s joined by NVLink.
 *
 * Case ids:
 *   P1  a GPU with itself and a GPU out of range are waived with a reason, and
 *       probes_peer_run on them returns RK_OK with nothing appended; with rk_interrupted
 *       set it returns RK_EINTR with nothing appended
 *   P2  both ordered pairs return RK_OK, each with every row exactly once, level "peer",
 *       kind and unit as documented, params naming both GPUs' UUIDs in order
 *   P3  every row is well formed (result_check.h): finite value > 0 = median, min <=
 *       median <= max, reps >= 1, a method, params a JSON object without nan or inf; value
 *       <= 1.05 x the theoretical (NVLink datasheet) where there is one
 *   P4  every bandwidth row carries memcpy_peer_gbs > 0 and ratio_to_memcpy_peer = value /
 *       memcpy_peer_gbs (within 0.2 %: the JSON's rounding)
 *   P5  bw_peer_ce_bi > bw_peer_ce_uni; bw_peer_sm_bi above half of each one-way SM row
 *   P6  acceptance: one way, the best ratio of bw_peer_ce_uni, bw_peer_sm_read and
 *       bw_peer_sm_write to cudaMemcpyPeerAsync in the same run is >= 0.97; both ways, the
 *       best of bw_peer_ce_bi and bw_peer_sm_bi likewise
 *   P7  lat_peer_chase in 300..10000 ns (0.3..10 us)
 *   P8  the second pair's wall time (the first creates the contexts): quick under 3 s,
 *       full under 15 s
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "gpu.h"
#include "probes.h"
#include "result_check.h"

#define SKIP_CODE 77 /* ctest's SKIP_RETURN_CODE for this test */

static const char *const rows[] = {"bw_peer_ce_uni",   "bw_peer_ce_bi", "bw_peer_sm_read",
                                   "bw_peer_sm_write", "bw_peer_sm_bi", "lat_peer_chase"};
#define N_ROWS ((int)(sizeof rows / sizeof rows[0]))

static int quick = 1;
static struct rk_gpu GPU[2];
static struct probes_output OUT[2]; /* [0]: pair (0, 1); [1]: pair (1, 0) */
static int RC[2];
static double WALL[2];

static const struct probes_result *get(int pair, const char *name)
{
    for (int i = 0; i < OUT[pair].n_results; i++)
        if (strcmp(OUT[pair].results[i].name, name) == 0)
            return &OUT[pair].results[i];
    return NULL;
}

static const struct probes_result *need(int pair, const char *name)
{
    const struct probes_result *r = get(pair, name);
    if (!r)
        fail_msg("pair %d: no row %s", pair, name);
    return r;
}

static double param(const struct probes_result *r, const char *key)
{
    double v = NAN;
    if (rk_json_number(r->params, key, &v) != RK_OK)
        fail_msg("%s: no number \"%s\" in params %s", r->name, key, r->params);
    return v;
}

static void print_pair(int k)
{
    const int a = k, b = 1 - k;
    printf("# pair %d -> %d: %.2f s, rc %d (%s)\n", a, b, WALL[k], RC[k], quick ? "quick" : "full");
    for (int i = 0; i < OUT[k].n_results; i++) {
        const struct probes_result *r = &OUT[k].results[i];
        double ref = NAN, ratio = NAN;
        rk_json_number(r->params, "memcpy_peer_gbs", &ref);
        rk_json_number(r->params, "ratio_to_memcpy_peer", &ratio);
        printf("%-17s %9.2f %-4s min %9.2f max %9.2f theory %7.1f memcpy_peer %7.1f ratio %6.4f "
               "clk %5.0f W %4.0f | %s\n",
               r->name, r->value, r->unit, r->min, r->max, r->theoretical, ref, ratio,
               r->sm_clock_mhz, r->power_w, r->params);
    }
    fflush(stdout);
}

static int setup(void **state)
{
    (void)state;
    if (rk_gpu_read(0, &GPU[0]) != RK_OK || rk_gpu_read(1, &GPU[1]) != RK_OK)
        return -1;
    for (int k = 0; k < 2; k++) {
        const double t = rk_now_s();
        RC[k] = probes_peer_run(k, 1 - k, quick, &OUT[k]);
        WALL[k] = rk_now_s() - t;
        print_pair(k);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    probes_output_release(&OUT[0]);
    probes_output_release(&OUT[1]);
    return 0;
}

static void p1_waived(void **state)
{
    struct probes_output out = {0};
    char why[256];
    (void)state;
    why[0] = '\0';
    assert_int_equal(probes_peer_waived(0, 0, why, sizeof why), 1);
    assert_true(why[0]);
    assert_int_equal(probes_peer_waived(0, 1000, why, sizeof why), 1);
    assert_non_null(strstr(why, "1000"));
    assert_int_equal(probes_peer_waived(0, 1, why, sizeof why), 0);
    assert_int_equal(why[0], '\0');
    assert_int_equal(probes_peer_run(1, 1, 1, &out), RK_OK);
    assert_int_equal(out.n_results, 0);
    rk_interrupted = 2;
    assert_int_equal(probes_peer_run(0, 1, 1, &out), RK_EINTR);
    rk_interrupted = 0;
    assert_int_equal(out.n_results, 0);
    probes_output_release(&out);
}

static void p2_rows(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        char uuids[160];
        if (RC[k] != RK_OK)
            fail_msg("pair %d -> %d returned %d", k, 1 - k, RC[k]);
        assert_int_equal(OUT[k].n_results, N_ROWS);
        snprintf(uuids, sizeof uuids, "\"gpu_a\":\"%s\",\"gpu_b\":\"%s\"", GPU[k].uuid,
                 GPU[1 - k].uuid);
        for (int i = 0; i < N_ROWS; i++) {
            const struct probes_result *r = need(k, rows[i]);
            const int bw = strncmp(rows[i], "bw_", 3) == 0;
            assert_string_equal(r->level, "peer");
            assert_string_equal(r->kind, bw ? "bandwidth" : "latency");
            assert_string_equal(r->unit, bw ? "GB/s" : "ns");
            if (!strstr(r->params, uuids))
                fail_msg("%s: params do not name %s: %s", r->name, uuids, r->params);
            assert_true(param(r, "dev_a") == k && param(r, "dev_b") == 1 - k);
        }
    }
}

static void p3_well_formed(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < OUT[k].n_results; i++)
            check_result_well_formed(&OUT[k].results[i]);
}

static void p4_reference(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < N_ROWS; i++) {
            const struct probes_result *r = need(k, rows[i]);
            if (strncmp(r->name, "bw_", 3) != 0)
                continue;
            const double ref = param(r, "memcpy_peer_gbs"),
                         ratio = param(r, "ratio_to_memcpy_peer");
            assert_true(ref > 0);
            if (!(fabs(ratio - r->value / ref) <= 2e-3 * ratio))
                fail_msg("%s: ratio %g, value / reference %g", r->name, ratio, r->value / ref);
        }
    /* The ratio above restates how it was written; the references themselves: rows of the
     * same direction share one measured cudaMemcpyPeer (A to B: ce_uni and sm_write; both ways:
     * ce_bi and sm_bi), and both ways at once carry more than either way alone. */
    for (int k = 0; k < 2; k++) {
        const double ab = param(need(k, "bw_peer_ce_uni"), "memcpy_peer_gbs"),
                     ab2 = param(need(k, "bw_peer_sm_write"), "memcpy_peer_gbs"),
                     ba = param(need(k, "bw_peer_sm_read"), "memcpy_peer_gbs"),
                     bi = param(need(k, "bw_peer_ce_bi"), "memcpy_peer_gbs"),
                     bi2 = param(need(k, "bw_peer_sm_bi"), "memcpy_peer_gbs");
        if (!(ab == ab2 && bi == bi2))
            fail_msg("pair %d: one reference per direction: A to B %g and %g, both ways %g and %g",
                     k, ab, ab2, bi, bi2);
        if (!(bi > ab && bi > ba))
            fail_msg("pair %d: cudaMemcpyPeer both ways %g GB/s, one way %g and %g", k, bi, ab, ba);
    }
}

static void p5_both_ways(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const double ce_uni = need(k, "bw_peer_ce_uni")->value;
        const double ce_bi = need(k, "bw_peer_ce_bi")->value;
        const double sm_bi = need(k, "bw_peer_sm_bi")->value;
        if (!(ce_bi > ce_uni))
            fail_msg("pair %d: copy engines both ways %g GB/s, one way %g", k, ce_bi, ce_uni);
        /* both directions at once carry more than half of what one direction alone does */
        if (!(sm_bi > 0.5 * need(k, "bw_peer_sm_read")->value &&
              sm_bi > 0.5 * need(k, "bw_peer_sm_write")->value))
            fail_msg("pair %d: SMs both ways %g GB/s, under half a one-way row", k, sm_bi);
    }
}

static double best_ratio(int k, const char *const *names, int n, const char **which)
{
    double best = 0;
    for (int i = 0; i < n; i++) {
        const double ratio = param(need(k, names[i]), "ratio_to_memcpy_peer");
        if (ratio > best) {
            best = ratio;
            *which = names[i];
        }
    }
    return best;
}

static void p6_acceptance(void **state)
{
    static const char *const uni[] = {"bw_peer_ce_uni", "bw_peer_sm_read", "bw_peer_sm_write"};
    static const char *const bi[] = {"bw_peer_ce_bi", "bw_peer_sm_bi"};
    (void)state;
    for (int k = 0; k < 2; k++) {
        const char *w_uni = "", *w_bi = "";
        const double r_uni = best_ratio(k, uni, 3, &w_uni), r_bi = best_ratio(k, bi, 2, &w_bi);
        printf("# pair %d -> %d: one way best %s = %.4f x cudaMemcpyPeerAsync (%.1f GB/s); both "
               "ways best %s = %.4f x (%.1f GB/s); chase %.0f ns\n",
               k, 1 - k, w_uni, r_uni, param(need(k, w_uni), "memcpy_peer_gbs"), w_bi, r_bi,
               param(need(k, w_bi), "memcpy_peer_gbs"), need(k, "lat_peer_chase")->value);
        if (!(r_uni >= 0.97))
            fail_msg("pair %d: the best one-way row %s is %.4f x cudaMemcpyPeerAsync", k, w_uni,
                     r_uni);
        if (!(r_bi >= 0.97))
            fail_msg("pair %d: the best two-way row %s is %.4f x cudaMemcpyPeerAsync", k, w_bi,
                     r_bi);
    }
}

static void p7_latency(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const double ns = need(k, "lat_peer_chase")->value;
        if (!(ns >= 300 && ns <= 10000))
            fail_msg("pair %d: lat_peer_chase %g ns, outside 300..10000", k, ns);
    }
}

static void p8_time(void **state)
{
    const double limit = quick ? 3 : 15;
    (void)state;
    if (!(WALL[1] < limit))
        fail_msg("a %s pair took %.2f s, over %.0f s", quick ? "quick" : "full", WALL[1], limit);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(p1_waived),      cmocka_unit_test(p2_rows),
        cmocka_unit_test(p3_well_formed), cmocka_unit_test(p4_reference),
        cmocka_unit_test(p5_both_ways),   cmocka_unit_test(p6_acceptance),
        cmocka_unit_test(p7_latency),     cmocka_unit_test(p8_time),
    };
    char why[320];
    if (argc > 1 && strcmp(argv[1], "full") == 0)
        quick = 0;
    /* no GPU, one GPU, or no peer access between GPUs 0 and 1 */
    if (probes_peer_waived(0, 1, why, sizeof why)) {
        printf("skipped: %s\n", why);
        return SKIP_CODE;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
