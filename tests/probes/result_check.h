/*
 * result_check.h - the checks every struct probes_result must pass, shared by the GPU tests
 * of probes/ (test_probes_gpu.c for one GPU, test_peer_gpu.c for a pair). Needs cmocka's
 * headers included first; a failure names the result.
 */
#ifndef RK_TESTS_PROBES_RESULT_CHECK_H
#define RK_TESTS_PROBES_RESULT_CHECK_H

#include "probes.h"

/*
 * Fails the running cmocka case unless r is well formed: finite value > 0 equal to the
 * median, min <= median <= max, reps >= 1, kind, unit and method present, params a JSON
 * object without nan or inf, and value <= 1.05 x theoretical where there is one.
 */
void check_result_well_formed(const struct probes_result *r);

#endif /* RK_TESTS_PROBES_RESULT_CHECK_H */
