/*
 * test_host.c - collect/host.c against CUPTI's real host API, which runs without a GPU or a
 * driver: name validation and pass counting for "GH100". Label `unit`.
 *
 * Case map (id: what):
 *   H1  every alias of the table resolves for GH100 (all of its raw metrics)
 *   H2  the default set costs exactly 3 replay passes on GH100 (the metrics.c header and
 *       docs/metrics.md say so; a change of the set that costs a pass more fails here)
 *   H3  pass counting is real: sm__throughput.avg.pct_of_peak_sustained_elapsed alone needs more
 *       than 2, the default set plus l2_tex_hit_rate more than the default alone
 *   H4  collect_plan_check drops an unknown raw metric (and the aliases that need it), keeps the
 *       rest, fills raw units, and refuses a plan with nothing left
 *   H5  unknown names: usage errors from pass counting and support checks
 *   H7  pass groups of application replay: the default set splits into 3 groups on GH100
 *       (two of hardware counters, one of SASS-patched counts: no group mixes the two kinds),
 *       each 1 pass; with l2_tex_hit_rate (2 passes alone) a group of its own; every raw
 *       metric lands in exactly one group; the same groups as comma-separated lists
 *       (collect_plan_group_names)
 *   H6  golden counter data images captured on the H100 (tests/collect/data/collect-*.bin with a
 *       .txt of expected values) evaluate on the CPU to the values ncu reported
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "collect.h"
#include "common.h"

/* H1 */
static void test_every_alias(void **state)
{
    (void)state;
    for (int i = 0; i < collect_metric_count(); i++) {
        const struct collect_metric *m = collect_metric_get(i);
        int ok = 0;
        assert_int_equal(collect_metric_supported("GH100", m->alias, &ok, NULL), RK_OK);
        if (!ok)
            fail_msg("alias %s (%s) is not known to GH100", m->alias, m->raw[0]);
    }
}

/* H2 */
static void test_default_passes(void **state)
{
    (void)state;
    int passes = 0;
    assert_int_equal(collect_count_passes_for("GH100", NULL, 0, &passes), RK_OK);
    print_message("default set on GH100: %d passes\n", passes);
    assert_int_equal(passes, 3);
}

/* H3 */
static void test_passes_are_counted(void **state)
{
    (void)state;
    int alone = 0, def = 0, more = 0;
    const char *one[] = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
    assert_int_equal(collect_count_passes_for("GH100", one, 1, &alone), RK_OK);
    assert_true(alone > 2);
    const char *names[] = {"default", "l2_tex_hit_rate", "tensor_ops_bf16", "tensor_ops_fp16"};
    assert_int_equal(collect_count_passes_for("GH100", NULL, 0, &def), RK_OK);
    assert_int_equal(collect_count_passes_for("GH100", names, 4, &more), RK_OK);
    assert_true(more > def);
    int sup = 0, p = 0;
    assert_int_equal(collect_metric_supported("GH100", "l2_tex_hit_rate", &sup, &p), RK_OK);
    assert_int_equal(sup, 1);
    assert_int_equal(p, 2); /* the hit rate alone costs 2 passes on GH100 */
}

/* H7: checks each group with collect_count_passes_for, independently of the grouping. */
static int check_groups(const char *const *names, int n, int *ngroups)
{
    struct collect_plan *plan = NULL;
    assert_int_equal(collect_plan_new(names, n, &plan), RK_OK);
    int *group = calloc((size_t)plan->nraw, sizeof *group);
    assert_non_null(group);
    assert_int_equal(collect_plan_groups(plan, "GH100", group, ngroups), RK_OK);
    char **lists = NULL;
    int nlists = 0;
    assert_int_equal(collect_plan_group_names(plan, "GH100", &lists, &nlists), RK_OK);
    assert_int_equal(nlists, *ngroups);
    int multi = 0;
    for (int g = 0; g < *ngroups; g++) {
        const char *members[64];
        char joined[4096] = "";
        int k = 0, passes = 0, sass = 0;
        for (int i = 0; i < plan->nraw; i++) {
            assert_true(group[i] >= 0 && group[i] < *ngroups);
            if (group[i] == g && k < 64) {
                sass += strstr(plan->raw[i], "__sass_") != NULL;
                members[k++] = plan->raw[i];
                if (joined[0])
                    strcat(joined, ",");
                strcat(joined, plan->raw[i]);
            }
        }
        assert_true(k > 0);
        assert_true(sass == 0 || sass == k);   /* SASS metrics read 0 under user replay */
        assert_string_equal(lists[g], joined); /* the same groups, as ROOFKIT_RAW takes them */
        free(lists[g]);
        assert_int_equal(collect_count_passes_for("GH100", members, k, &passes), RK_OK);
        print_message("group %d: %d metrics, %d pass(es)\n", g, k, passes);
        if (passes != 1) {
            assert_int_equal(k, 1); /* only a metric that alone needs more passes */
            multi++;
        }
    }
    free(lists);
    free(group);
    collect_plan_free(plan);
    return multi;
}

static void test_pass_groups(void **state)
{
    (void)state;
    int ng = 0;
    assert_int_equal(check_groups(NULL, 0, &ng), 0);
    assert_int_equal(ng, 3);
    const char *more[] = {"default", "l2_tex_hit_rate"};
    assert_int_equal(check_groups(more, 2, &ng), 1); /* the hit rate: 2 passes, alone */
    assert_true(ng >= 3);
    const char *one[] = {"dram_read_bytes", "dram_write_bytes"};
    assert_int_equal(check_groups(one, 2, &ng), 0);
    assert_int_equal(ng, 1);
}

/* H4 */
static void test_plan_check(void **state)
{
    (void)state;
    const char *names[] = {"dram_read_bytes", "sm__no_such_counter.sum", "lts__t_bytes.sum",
                           "flop_count_sp"};
    struct collect_plan *p = NULL;
    assert_int_equal(collect_plan_new(names, 4, &p), RK_OK);
    assert_int_equal(collect_plan_check(p, "GH100"), RK_OK);
    assert_int_equal(p->ndropped, 1);
    assert_string_equal(p->dropped[0], "sm__no_such_counter.sum");
    assert_int_equal(p->nout, 3);
    assert_int_equal(p->nraw, 5);
    for (int i = 0; i < p->nraw; i++)
        assert_string_not_equal(p->raw[i], "sm__no_such_counter.sum");
    /* the user's raw metric got its unit from CUPTI */
    double raw[5] = {1, 2, 3, 4, 5};
    struct collect_value v[3];
    collect_plan_eval(p, raw, v);
    assert_null(v[1].alias);
    assert_string_equal(v[1].raw, "lts__t_bytes.sum");
    assert_string_equal(v[1].unit, "byte");
    assert_true(v[0].value == 1.0);
    assert_true(v[2].value == 3 + 4 + 2 * 5);
    collect_plan_free(p);

    const char *none[] = {"sm__no_such_counter.sum"};
    assert_int_equal(collect_plan_new(none, 1, &p), RK_OK);
    assert_int_equal(collect_plan_check(p, "GH100"), RK_EUSAGE);
    collect_plan_free(p);
}

/* H5 */
static void test_unknown(void **state)
{
    (void)state;
    int passes = -1, sup = -1;
    const char *bad[] = {"nonsense"};
    assert_int_equal(collect_count_passes_for("GH100", bad, 1, &passes), RK_EUSAGE);
    const char *badraw[] = {"sm__no_such_counter.sum"};
    assert_int_equal(collect_count_passes_for("GH100", badraw, 1, &passes), RK_EUSAGE);
    assert_int_equal(collect_metric_supported("GH100", "sm__no_such_counter.sum", &sup, NULL),
                     RK_OK);
    assert_int_equal(sup, 0);
    char chip[64];
    int rc = collect_chip_name(0, chip, sizeof chip);
    assert_true(rc == RK_OK || rc == RK_ENOGPU);
    assert_true(chip[0] != '\0');
}

/* H6: each tests/data/collect-golden-N.txt names an image and the values to expect. */
static void test_golden_images(void **state)
{
    (void)state;
    int found = 0, checked = 0;
    for (int g = 1; g <= 9; g++) {
        char path[1024], line[1024], image_name[256] = "", chip[32] = "GH100";
        snprintf(path, sizeof path, "%s/collect-golden-%d.txt", COLLECT_TEST_DATA, g);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        found++;
        uint8_t *image = NULL;
        size_t size = 0;
        while (fgets(line, sizeof line, f)) {
            char key[32], a[256], b[256];
            double want = 0, tol = 0;
            if (line[0] == '#' || sscanf(line, "%31s", key) != 1)
                continue;
            if (strcmp(key, "image") == 0 && sscanf(line, "%*s %255s", image_name) == 1) {
                char ipath[1400];
                snprintf(ipath, sizeof ipath, "%s/%s", COLLECT_TEST_DATA, image_name);
                FILE *img = fopen(ipath, "rb");
                assert_non_null(img);
                fseek(img, 0, SEEK_END);
                size = (size_t)ftell(img);
                fseek(img, 0, SEEK_SET);
                image = malloc(size);
                assert_non_null(image);
                assert_int_equal(fread(image, 1, size, img), size);
                fclose(img);
            } else if (strcmp(key, "chip") == 0) {
                assert_int_equal(sscanf(line, "%*s %31s", chip), 1);
            } else if (strcmp(key, "expect") == 0) {
                /* expect RANGE METRIC VALUE RELTOL   (a comment may follow) */
                int range = -1;
                assert_int_equal(sscanf(line, "%*s %d %255s %255s %lf", &range, a, b, &tol), 4);
                want = strtod(b, NULL);
                assert_non_null(image);
                const char *raw[1] = {a};
                double v = NAN;
                int nranges = 0;
                assert_int_equal(bk_eval_image(chip, image, size, range, raw, 1, &v, &nranges), 0);
                print_message("golden %d range %d %s = %.17g (want %.17g)\n", g, range, a, v, want);
                assert_true(range < nranges);
                assert_false(isnan(v));
                assert_true(fabs(v - want) <= tol * fabs(want));
                checked++;
            }
        }
        fclose(f);
        free(image);
    }
    /* The images are part of the repository: a missing or emptied one is a failure, not a
     * test with nothing to check. */
    if (!found)
        fail_msg("no %s/collect-golden-N.txt", COLLECT_TEST_DATA);
    if (!checked)
        fail_msg("the golden files hold no expect line");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_alias),        cmocka_unit_test(test_default_passes),
        cmocka_unit_test(test_passes_are_counted), cmocka_unit_test(test_pass_groups),
        cmocka_unit_test(test_plan_check),         cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_golden_images),
    };
    rk_set_quiet(1);
#if defined(__SANITIZE_ADDRESS__)
    /* libcupti dlopens libnvperf_host.so with RTLD_DEEPBIND, which AddressSanitizer does not
     * support (it aborts): the host API cannot run in a sanitizer build. */
    (void)tests;
    printf("skipped: CUPTI's host API cannot load under AddressSanitizer (RTLD_DEEPBIND)\n");
    return 0;
#else
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
