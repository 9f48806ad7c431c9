/*
 * fixture.h - a roofkit database built through db/db.h for the report's tests, its
 * browser check and its benchmark: one H100-like device with ceilings of every
 * level and precision, a latency curve, measurements of several families (tiled,
 * stmvb, cuBLAS, TSM2) with counters on some (DRAM, L2 and shared bytes), one that failed
 * verification, and predictions of two models; and the FIXTURE_PROFILED launches of a profiled
 * program (capture command line "... profile -- python3 -u .../torch_mix.py ..."): no family,
 * demangled kernel names, counters only, predicted by roofline_counters while roofline and
 * hierarchical store their reason (a prediction without a time).
 */
#ifndef RK_TEST_REPORT_FIXTURE_H
#define RK_TEST_REPORT_FIXTURE_H

enum { FIXTURE_PROFILED = 30 };

struct db_measurement;

/* x: the n-th launch of a profiled program, `kernel` taking t_ns: no family, shape or analytic
 * counts, not verified (fixture.c). */
void fixture_launch(struct db_measurement *x, const char *kernel, int i, double t_ns);

/*
 * Creates the database at path (which must not exist) holding at least nmeas
 * measurements (0: the small default set of about 60). Returns RK_OK or the db/
 * error (printed).
 */
int fixture_make_db(const char *path, int nmeas);

/*
 * Creates the database at path (which must not exist) of three GPUs on two hosts with
 * ceilings that differ by known amounts, ceilings of a GPU pair, and a program profiled as two
 * MPI ranks (fixture_gpus.c says which numbers). RK_OK or the db/ error (printed).
 */
int fixture_make_gpus_db(const char *path);

#endif
