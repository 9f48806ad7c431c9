/*
 * test_cubin.c - ptxas's register counts read from a cubin (collect/cubin.c), checked against
 * ptxas's own report, and their use by a session (fake backend). Label `unit`.
 *
 * The build compiles gpu_prog100.cu to an sm_90 cubin with `-Xptxas -v` and keeps ptxas's
 * messages (CUBIN_PATH, PTXAS_LOG): no GPU needed.
 *
 * Case map (id: what):
 *   C1  every kernel of the cubin is found, with the register count ptxas printed
 *   C2  truncated, corrupted or foreign images: no crash, nothing or only valid entries found
 *   C3  a session reports ptxas's registers for a launch of a kernel from a loaded module, and
 *       the Activity record's (allocated) count beside them
 */
#define _POSIX_C_SOURCE 200809L
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
#include "fake_backend.h"

static uint8_t *cubin;
static size_t cubin_size;

struct found {
    char name[8][128];
    int regs[8];
    int n;
};

static void collect_fn(void *arg, const char *name, int regs)
{
    struct found *f = arg;
    if (f->n < 8) {
        snprintf(f->name[f->n], sizeof f->name[0], "%s", name);
        f->regs[f->n++] = regs;
    }
}

static int found_regs(const struct found *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->name[i], name) == 0)
            return f->regs[i];
    return -1;
}

static int load(void **state)
{
    (void)state;
    FILE *in = fopen(CUBIN_PATH, "rb");
    if (!in)
        return -1;
    fseek(in, 0, SEEK_END);
    cubin_size = (size_t)ftell(in);
    fseek(in, 0, SEEK_SET);
    cubin = malloc(cubin_size);
    if (!cubin || fread(cubin, 1, cubin_size, in) != cubin_size)
        return -1;
    fclose(in);
    return 0;
}

static int unload(void **state)
{
    (void)state;
    free(cubin);
    return 0;
}

/* C1: "Compiling entry function 'NAME'" then "Used N registers" in ptxas's log. */
static void test_against_ptxas(void **state)
{
    (void)state;
    struct found f = {0};
    assert_int_equal(bk_cubin_registers(cubin, cubin_size, collect_fn, &f), 4);
    FILE *log = fopen(PTXAS_LOG, "r");
    assert_non_null(log);
    char line[512], fn[128] = "";
    int checked = 0;
    while (fgets(line, sizeof line, log)) {
        const char *p = strstr(line, "Compiling entry function '");
        int regs;
        if (p) {
            sscanf(p + strlen("Compiling entry function '"), "%127[^']", fn);
        } else if ((p = strstr(line, "Used ")) && sscanf(p, "Used %d registers", &regs) == 1 &&
                   fn[0]) {
            print_message("%s: ptxas %d, cubin %d\n", fn, regs, found_regs(&f, fn));
            assert_int_equal(found_regs(&f, fn), regs);
            checked++;
            fn[0] = '\0';
        }
    }
    fclose(log);
    assert_int_equal(checked, 4);
}

/* C2 */
static void test_bad_images(void **state)
{
    (void)state;
    struct found f = {0};
    assert_int_equal(bk_cubin_registers(NULL, 0, collect_fn, &f), 0);
    assert_int_equal(bk_cubin_registers((const uint8_t *)"not an elf", 10, collect_fn, &f), 0);
    for (size_t len = 0; len < cubin_size; len += len < 256 ? 1 : 97) {
        memset(&f, 0, sizeof f);
        bk_cubin_registers(cubin, len, collect_fn, &f);
        for (int i = 0; i < f.n; i++)
            assert_true(f.regs[i] > 0 && f.regs[i] <= 255);
    }
    uint8_t *bad = malloc(cubin_size);
    assert_non_null(bad);
    srand(7);
    for (int trial = 0; trial < 200; trial++) {
        memcpy(bad, cubin, cubin_size);
        for (int k = 0; k < 16; k++)
            bad[64 + (size_t)rand() % (cubin_size - 64)] = (uint8_t)rand();
        memset(&f, 0, sizeof f);
        bk_cubin_registers(bad, cubin_size, collect_fn, &f); /* must not crash */
    }
    free(bad);
}

/* C3 */
static void test_session_uses_cubin(void **state)
{
    (void)state;
    static int ctx;
    struct collect_session *s = NULL;
    struct collect_result *r = NULL;
    fake_reset();
    rk_set_quiet(1);
    assert_int_equal(collect_session_begin(NULL, &s), RK_OK);
    fake.hooks.module(fake.hooks.arg, cubin, cubin_size);
    fake_launch(&ctx, 1, "_Z3incPfm");
    fake_record(1, "_Z3incPfm", 0, 0, 0); /* the record says 32 (allocated) */
    fake_launch(&ctx, 2, "_Z9not_therev");
    fake_record(2, "_Z9not_therev", 0, 0, 0);
    assert_int_equal(collect_session_end(s, &r), RK_OK);
    assert_int_equal(r->nlaunch, 2);
    assert_int_equal(r->launch[0].registers, 12);
    assert_int_equal(r->launch[0].registers_alloc, 32);
    assert_int_equal(r->launch[1].registers, 32); /* unknown module: the record's value */
    collect_result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_ptxas),
        cmocka_unit_test(test_bad_images),
        cmocka_unit_test(test_session_uses_cubin),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
