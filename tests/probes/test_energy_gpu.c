/*
 * test_energy_gpu.c - energy readings on a GPU (label gpu): NVML's energy counter read by
 * probes/'s meter around back-to-back launches of a kernel (kernels_session_repeat), as
 * `roofkit run` reads every measurement (cli/run_energy.c).
 *
 * Case map:
 *   G1 five readings of one compute-bound kernel (cublas_sgemm 4096^3) and five of one
 *      memory-bound kernel (tsm2_v3 fp32 20480x4x20480) agree within 3 % (min to max), after
 *      two seconds of the kernel to warm up (power and temperature settle); each reading's
 *      power lies between 30 W and 1500 W, its window holds >= 2 counter updates, and energy =
 *      power x batch time / launches
 * Skips (exit 77) where the counter cannot be read (no NVML, not root, no counter).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "kernels.h"
#include "probes.h"

static struct kernels_session *sess;
static struct probes_meter *meter;

struct reading {
    long launches;
    int status;
    struct probes_energy r;
};

static int on_begin(void *arg)
{
    (void)arg;
    return probes_meter_begin(meter);
}

static int on_end(void *arg)
{
    struct reading *rd = arg;
    rd->status = probes_meter_end(meter, rd->launches, &rd->r);
    return RK_OK;
}

/* Five readings of kernel `name` on the shape after a warm-up one; prints and checks them. */
static void five(const char *name, int prec, struct kernels_shape sh)
{
    const struct kernels_kernel *k = kernels_find(name);
    struct kernels_options o = {5, 1, 2, NULL};
    struct kernels_result r;
    double e[5], lo = INFINITY, hi = 0;
    assert_non_null(k);
    assert_int_equal(kernels_session_prepare(sess, prec, &sh), RK_OK);
    assert_int_equal(kernels_session_measure(sess, k, NULL, &o, &r), RK_OK);
    assert_true(r.verified);
    /* about two seconds of it, unread: a GPU coming from idle reads low */
    assert_int_equal(kernels_session_repeat(sess, k, r.params,
                                            probes_energy_launches(r.time_median_ns * 1e-9) * 4,
                                            NULL),
                     RK_OK);
    for (int i = -1; i < 5; i++) {
        struct reading rd;
        memset(&rd, 0, sizeof rd);
        rd.launches = probes_energy_launches(r.time_median_ns * 1e-9);
        rd.status = RK_ENODATA;
        const struct kernels_hook hook = {&rd, on_begin, on_end};
        assert_int_equal(kernels_session_repeat(sess, k, r.params, rd.launches, &hook), RK_OK);
        assert_int_equal(rd.status, RK_OK);
        assert_true(rd.r.power_w > 30 && rd.r.power_w < 1500);
        assert_true(rd.r.updates >= 2);
        print_message("%s %s: %ld launches in %.3f s, window %.3f s (%d updates), %.1f W "
                      "(NVML power samples %.1f W), %.6g J a launch, %.0f MHz, %.0f C%s\n",
                      name, kernels_precision_name(prec), rd.launches, rd.r.batch_s, rd.r.window_s,
                      rd.r.updates, rd.r.power_w, rd.r.power_sampled_w, rd.r.energy_j,
                      rd.r.sm_clock_mhz, rd.r.temp_c, i < 0 ? " (warm-up)" : "");
        if (i < 0)
            continue;
        e[i] = rd.r.energy_j;
        lo = fmin(lo, e[i]);
        hi = fmax(hi, e[i]);
    }
    print_message("%s: min to max %.2f %% over 5 readings\n", name, 100 * (hi - lo) / lo);
    assert_true((hi - lo) / lo <= 0.03);
}

static void g1_repeat(void **state)
{
    (void)state;
    five("cublas_sgemm", KERNELS_FP32, (struct kernels_shape){4096, 4096, 4096});
    five("tsm2_v3", KERNELS_FP32, (struct kernels_shape){20480, 4, 20480});
}

int main(void)
{
    char why[200] = "";
    if (kernels_session_open(0, 0x656e65ULL, &sess) != RK_OK)
        return 1;
    if (probes_meter_open(kernels_session_device(sess)->pci_bus_id, &meter, why, sizeof why) !=
        RK_OK) {
        fprintf(stderr, "test_energy_gpu: skipped: %s\n", why);
        kernels_session_close(sess);
        return 77;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(g1_repeat)};
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    probes_meter_close(meter);
    kernels_session_close(sess);
    return failed;
}
