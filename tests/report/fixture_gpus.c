/*
 * fixture_gpus.c - the report tests' database of several GPUs and ranks, built through db/db.h
 * only (no SQL), with every number chosen so that the test knows what the report must say
 * (fixture.h, fixture_make_gpus_db):
 *
 *   GPU A  GPU-aaaaaaaa-...  host n1   the reference
 *   GPU B  GPU-bbbbbbbb-...  host n1   bw_dram_read 6 % below the median (flagged); lat_chase_l2
 *                                      3 % lower, better (not flagged); bw_shared_read stored in
 *                                      TB/s (30 TB/s = 30000 GB/s, the same as the others)
 *   GPU C  GPU-cccccccc-...  host n2   lat_chase_dram 6 % above the median (flagged, latency:
 *                                      higher is worse); bw_l2_read 3 % below and lat_chase_l1
 *                                      4 % above (neither flagged); launch_async 3 % lower
 *
 * A and B were probed at once on n1 (each with 1 other GPU measured at the same time), C alone
 * on n2 with 1 other GPU busy. A's probe measured the pair ceilings towards B and B's towards A:
 * bw_peer_ce_uni A->B 50, B->A 48 GB/s; lat_peer_chase A->B 900, B->A 950 ns.
 *
 * Two ranks of one MPI program (`... profile -- ./app --steps 2`, world size 2):
 *   rank 0  n1, GPU A (one launch on GPU B): 3 launches, 100 + 200 + 300 us = 0.6 ms
 *   rank 1  n2, GPU C: 2 launches, 400 + 600 us = 1.0 ms
 * so 1.6 ms in all, a mean of 0.8 ms, shares 37.5 % and 62.5 %, imbalance 1.25. A third profile
 * capture with a rank ran another program alone: no group of ranks.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "db.h"
#include "fixture.h"

/* A ceiling value of each GPU (A, B, C). */
struct ceil3 {
    const char *name, *kind, *level, *prec;
    double v[3];
    const char *unit[3];
};

static const struct ceil3 ceilings[] = {
    {"bw_dram_read", "bandwidth", "dram", NULL, {3000, 2820, 3000}, {"GB/s", "GB/s", "GB/s"}},
    {"bw_l2_read", "bandwidth", "l2", NULL, {9000, 9000, 8730}, {"GB/s", "GB/s", "GB/s"}},
    {"bw_shared_read", "bandwidth", "shared", NULL, {30000, 30, 30000}, {"GB/s", "TB/s", "GB/s"}},
    {"peak_fp32_fma",
     "compute",
     NULL,
     "fp32",
     {51.2, 51.2, 51.2},
     {"TFLOP/s", "TFLOP/s", "TFLOP/s"}},
    {"peak_fp64_fma",
     "compute",
     NULL,
     "fp64",
     {25.6, 25.6, 25.6},
     {"TFLOP/s", "TFLOP/s", "TFLOP/s"}},
    {"lat_chase_l1", "latency", "l1", NULL, {33, 33, 34.32}, {"cycles", "cycles", "cycles"}},
    {"lat_chase_l2", "latency", "l2", NULL, {260, 252.2, 260}, {"cycles", "cycles", "cycles"}},
    {"lat_chase_dram", "latency", "dram", NULL, {780, 780, 826.8}, {"cycles", "cycles", "cycles"}},
    {"launch_async", "launch", "host", NULL, {2.5, 2.5, 2.425}, {"us", "us", "us"}},
};

static int add_ceiling(struct db *db, int64_t cap, const char *name, const char *kind,
                       const char *level, const char *prec, double v, const char *unit,
                       int64_t peer)
{
    struct db_ceiling x;
    memset(&x, 0, sizeof x);
    x.name = name;
    x.kind = kind;
    x.level = level;
    x.precision = prec;
    x.value = x.median = x.min = x.max = v;
    x.unit = unit;
    x.theoretical = NAN;
    x.method = "fixture, invented";
    x.reps = 5;
    x.sm_clock_mhz = 1980;
    x.power_w = x.temp_c = NAN;
    x.peer_device_id = peer;
    return db_insert_ceiling(db, cap, &x, NULL);
}

/* A profiled launch of capture cap taking t_us microseconds; dev: the GPU it names (0: the
 * capture's). */
static int add_launch(struct db *db, int64_t cap, int i, double t_us, int64_t dev)
{
    struct db_measurement x;
    fixture_launch(&x,
                   i % 2 ? "void halo_exchange_pack<double>(double const*, double*, int)"
                         : "void stencil_step<double>(double const*, double*, int, int)",
                   i, t_us * 1e3);
    x.device_id = dev;
    return db_insert_measurement(db, cap, &x, NULL, 0, NULL);
}

int fixture_make_gpus_db(const char *path)
{
    static const char *const uuid[3] = {"GPU-aaaaaaaa-0000-4000-8000-000000000001",
                                        "GPU-bbbbbbbb-0000-4000-8000-000000000002",
                                        "GPU-cccccccc-0000-4000-8000-000000000003"};
    static const char *const host[3] = {"n1", "n1", "n2"};
    static const char app[] = "roofkit --db app-%r.db profile -- ./app --steps 2";
    struct db *db = NULL;
    int64_t dev[3], cap;
    int rc;

    if ((rc = db_open(path, DB_RW, &db)) != RK_OK)
        return rc;
    for (int g = 0; g < 3 && rc == RK_OK; g++) {
        struct db_device v;
        memset(&v, 0, sizeof v);
        v.name = "NVIDIA H100 80GB HBM3";
        v.uuid = uuid[g];
        v.cc_major = 9;
        v.sm_count = 132;
        v.sm_clock_mhz = 1980;
        v.l2_bytes = 50LL << 20;
        v.host = host[g];
        rc = db_device_upsert(db, &v, &dev[g]);
    }
    /* the probes: A and B at once on n1, C alone on n2 beside a busy GPU */
    for (int g = 0; g < 3 && rc == RK_OK; g++) {
        struct db_origin o = {host[g], -1, -1, -1, g < 2 ? 1 : 0, g < 2 ? 0 : 1};
        rc = db_set_origin(db, &o);
        if (rc == RK_OK)
            rc = db_capture_begin(db, dev[g], DB_CAPTURE_PROBE, "roofkit probe --device all",
                                  "test", &cap);
        for (size_t i = 0; i < sizeof ceilings / sizeof ceilings[0] && rc == RK_OK; i++) {
            const struct ceil3 *c = &ceilings[i];
            rc = add_ceiling(db, cap, c->name, c->kind, c->level, c->prec, c->v[g], c->unit[g], 0);
        }
        if (g < 2 && rc == RK_OK) /* the pair A-B, from each end */
            rc = add_ceiling(db, cap, "bw_peer_ce_uni", "bandwidth", "peer", NULL, g ? 48 : 50,
                             "GB/s", dev[1 - g]);
        if (g < 2 && rc == RK_OK)
            rc = add_ceiling(db, cap, "lat_peer_chase", "latency", "peer", NULL, g ? 950 : 900,
                             "ns", dev[1 - g]);
        if (rc == RK_OK)
            rc = db_capture_end(db, cap, DB_DONE);
    }
    /* the two ranks of ./app, and a program profiled as one rank */
    static const struct {
        int rank, g, n;
        double t_us[3];
        const char *cmd;
    } ranks[] = {
        {0, 0, 3, {100, 200, 300}, app},
        {1, 2, 2, {400, 600, 0}, app},
        {0, 1, 1, {50, 0, 0}, "roofkit profile -- ./other"},
    };
    for (int r = 0; r < 3 && rc == RK_OK; r++) {
        const int g = ranks[r].g;
        struct db_origin o = {host[g], ranks[r].rank, 0, r < 2 ? 2 : 1, -1, -1};
        rc = db_set_origin(db, &o);
        if (rc == RK_OK)
            rc = db_capture_begin(db, dev[g], DB_CAPTURE_PROFILE, ranks[r].cmd, "test", &cap);
        for (int i = 0; i < ranks[r].n && rc == RK_OK; i++) /* rank 0's second launch on B */
            rc = add_launch(db, cap, i, ranks[r].t_us[i], r == 0 && i == 1 ? dev[1] : 0);
        if (rc == RK_OK)
            rc = db_capture_end(db, cap, DB_DONE);
    }
    db_close(db);
    return rc;
}
