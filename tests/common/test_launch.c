/*
 * test_launch.c - common/launch.c: the rank from each launcher's variables, and file-name
 * placeholders, with an environment given as a table (no launcher needed).
 *
 * Case map:
 *   L01 no launcher: rank, local rank, sizes -1, launcher NULL
 *   L02 Open MPI's four variables
 *   L03 Hydra (MPICH, Intel MPI): PMI_RANK, MPI_LOCALRANKID, PMI_SIZE, MPI_LOCALNRANKS
 *   L04 Slurm: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS; no local size
 *   L05 mpirun inside a Slurm allocation: Open MPI's variables win over Slurm's
 *   L06 garbled values: a rank that is not a whole number >= 0 is no launcher; a garbled
 *       local rank is unknown while the rank stands
 *   L07 placeholders: %h %p %r %q{VAR} %% and plain text, several in one name; %r is 0
 *       without a launcher
 *   L08 refused: unknown placeholder, trailing %, %q without braces, unclosed brace, empty
 *       name, unset variable, a name that expands to nothing
 *   L09 --device lists: all, indices in the order given, full and shortened UUIDs, mixed
 *   L10 --device refused: out of range, negative, garbled, a UUID of no GPU, a prefix of two,
 *       a GPU named twice, empty names; no GPU at all
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

/* An environment: NULL-terminated pairs of name, value. */
static const char *table_env(const char *name, void *arg)
{
    const char *const *kv = arg;
    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

static void detect(const char *const *kv, struct rk_launch *l)
{
    rk_launch_detect(table_env, (void *)kv, l);
}

/* L01 */
static void no_launcher(void **state)
{
    static const char *const env[] = {"HOME", "/root", "OMPI_MCA_foo", "1", NULL};
    struct rk_launch l;
    (void)state;
    detect(env, &l);
    assert_null(l.launcher);
    assert_int_equal(l.rank, -1);
    assert_int_equal(l.local_rank, -1);
    assert_int_equal(l.world_size, -1);
    assert_int_equal(l.local_size, -1);
}

/* L02 */
static void open_mpi(void **state)
{
    static const char *const env[] = {"OMPI_COMM_WORLD_RANK",
                                      "5",
                                      "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "1",
                                      "OMPI_COMM_WORLD_SIZE",
                                      "16",
                                      "OMPI_COMM_WORLD_LOCAL_SIZE",
                                      "4",
                                      NULL};
    struct rk_launch l;
    (void)state;
    detect(env, &l);
    assert_string_equal(l.launcher, "open-mpi");
    assert_int_equal(l.rank, 5);
    assert_int_equal(l.local_rank, 1);
    assert_int_equal(l.world_size, 16);
    assert_int_equal(l.local_size, 4);
}

/* L03 */
static void hydra(void **state)
{
    static const char *const env[] = {
        "PMI_RANK", "3", "MPI_LOCALRANKID", "0", "PMI_SIZE", "8", "MPI_LOCALNRANKS", "2", NULL};
    struct rk_launch l;
    (void)state;
    detect(env, &l);
    assert_string_equal(l.launcher, "hydra");
    assert_int_equal(l.rank, 3);
    assert_int_equal(l.local_rank, 0);
    assert_int_equal(l.world_size, 8);
    assert_int_equal(l.local_size, 2);
}

/* L04 */
static void slurm(void **state)
{
    static const char *const env[] = {
        "SLURM_PROCID", "7", "SLURM_LOCALID", "3", "SLURM_NTASKS", "8", NULL};
    struct rk_launch l;
    (void)state;
    detect(env, &l);
    assert_string_equal(l.launcher, "slurm");
    assert_int_equal(l.rank, 7);
    assert_int_equal(l.local_rank, 3);
    assert_int_equal(l.world_size, 8);
    assert_int_equal(l.local_size, -1);
}

/* L05 */
static void mpirun_inside_slurm(void **state)
{
    static const char *const env[] = {"SLURM_PROCID",
                                      "0",
                                      "SLURM_LOCALID",
                                      "0",
                                      "SLURM_NTASKS",
                                      "1",
                                      "OMPI_COMM_WORLD_RANK",
                                      "2",
                                      "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "0",
                                      NULL};
    struct rk_launch l;
    (void)state;
    detect(env, &l);
    assert_string_equal(l.launcher, "open-mpi");
    assert_int_equal(l.rank, 2);
    assert_int_equal(l.local_rank, 0);
    assert_int_equal(l.world_size, -1);
}

/* L06 */
static void garbled(void **state)
{
    static const char *const bad_rank[] = {
        "OMPI_COMM_WORLD_RANK", "two", "SLURM_PROCID", "-1", "PMI_RANK", "", NULL};
    static const char *const bad_local[] = {"OMPI_COMM_WORLD_RANK", "4",
                                            "OMPI_COMM_WORLD_LOCAL_RANK", "1x", NULL};
    struct rk_launch l;
    (void)state;
    detect(bad_rank, &l);
    assert_null(l.launcher);
    assert_int_equal(l.rank, -1);
    detect(bad_local, &l);
    assert_string_equal(l.launcher, "open-mpi");
    assert_int_equal(l.rank, 4);
    assert_int_equal(l.local_rank, -1);
}

static char *expand(const char *pattern, const struct rk_launch *l, int want_rc)
{
    static const char *const env[] = {"JOB", "job42", "EMPTY", "", NULL};
    char *out = (char *)1;
    assert_int_equal(rk_expand_name(pattern, l, "node7", 1234, table_env, (void *)env, &out),
                     want_rc);
    if (want_rc != RK_OK)
        assert_null(out);
    return out;
}

static void expect(const char *pattern, const struct rk_launch *l, const char *want)
{
    char *s = expand(pattern, l, RK_OK);
    assert_string_equal(s, want);
    free(s);
}

/* L07 */
static void placeholders(void **state)
{
    struct rk_launch none = {NULL, -1, -1, -1, -1}, r3 = {"open-mpi", 3, 1, 4, 2};
    (void)state;
    expect("roofkit.db", &none, "roofkit.db");
    expect("job-%h-%r.db", &r3, "job-node7-3.db");
    expect("job-%h-%r.db", &none, "job-node7-0.db");
    expect("%r", NULL, "0");
    expect("p%p", &r3, "p1234");
    expect("%q{JOB}/%r.db", &r3, "job42/3.db");
    expect("x%q{EMPTY}y", &r3, "xy");
    expect("100%%-%r%%", &r3, "100%-3%");
    expect("%h%h", &r3, "node7node7");
}

/* L08 */
static void refused(void **state)
{
    struct rk_launch r3 = {"open-mpi", 3, 1, 4, 2};
    (void)state;
    rk_set_quiet(1); /* errors still print; keep the log readable */
    expand("a%x.db", &r3, RK_EUSAGE);
    expand("a.db%", &r3, RK_EUSAGE);
    expand("a%qJOB.db", &r3, RK_EUSAGE);
    expand("a%q{JOB.db", &r3, RK_EUSAGE);
    expand("a%q{}.db", &r3, RK_EUSAGE);
    expand("a%q{UNSET_VAR}.db", &r3, RK_EUSAGE);
    expand("%q{EMPTY}", &r3, RK_EUSAGE);
    expand("", &r3, RK_EUSAGE);
}

static const char *const uuids[] = {
    "GPU-077f5aa7-1111-2222-3333-444455556666",
    "GPU-67894f96-1111-2222-3333-444455556666",
    "GPU-67894f00-1111-2222-3333-444455556666",
};

static void resolves(const char *spec, int nwant, const int *want)
{
    int *idx = NULL, n = -1;
    assert_int_equal(rk_device_list_resolve(spec, uuids, 3, &idx, &n), RK_OK);
    assert_int_equal(n, nwant);
    for (int i = 0; i < n; i++)
        assert_int_equal(idx[i], want[i]);
    free(idx);
}

static void refuses(const char *spec, int count, int want_rc)
{
    int *idx = (int *)1, n = -1;
    assert_int_equal(rk_device_list_resolve(spec, uuids, count, &idx, &n), want_rc);
    assert_null(idx);
    assert_int_equal(n, 0);
}

/* L09 */
static void device_lists(void **state)
{
    (void)state;
    resolves("all", 3, (const int[]){0, 1, 2});
    resolves("0", 1, (const int[]){0});
    resolves("2,0", 2, (const int[]){2, 0});
    resolves("GPU-67894f96-1111-2222-3333-444455556666", 1, (const int[]){1});
    resolves("GPU-077f", 1, (const int[]){0});
    resolves("GPU-67894f0,1", 2, (const int[]){2, 1});
}

/* L10 */
static void device_lists_refused(void **state)
{
    (void)state;
    rk_set_quiet(1);
    refuses("3", 3, RK_EUSAGE);
    refuses("-1", 3, RK_EUSAGE);
    refuses("one", 3, RK_EUSAGE);
    refuses("GPU-ffff", 3, RK_EUSAGE);
    refuses("GPU-6789", 3, RK_EUSAGE); /* two GPUs start so */
    refuses("1,GPU-67894f96", 3, RK_EUSAGE);
    refuses("0,,1", 3, RK_EUSAGE);
    refuses("", 3, RK_EUSAGE);
    refuses("all", 0, RK_ENOGPU);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_launcher),
        cmocka_unit_test(open_mpi),
        cmocka_unit_test(hydra),
        cmocka_unit_test(slurm),
        cmocka_unit_test(mpirun_inside_slurm),
        cmocka_unit_test(garbled),
        cmocka_unit_test(placeholders),
        cmocka_unit_test(refused),
        cmocka_unit_test(device_lists),
        cmocka_unit_test(device_lists_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
