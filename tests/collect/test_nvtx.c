/*
 * test_nvtx.c - collect/nvtx.c without a GPU: Nsight Compute's --nvtx-include/--nvtx-exclude
 * expressions parsed and matched against range stacks, the stored path's format, and the NVTX
 * tool itself driven through the real NVTX3 header (static injection: the header's weak
 * InitializeInjectionNvtx2_fnptr, defined here). Label `unit`.
 *
 * Case map:
 *   P1 refused expressions: regex:, an empty domain, two '@', empty names, '*' in a start/end
 *      expression (DOMAIN@* too), a path starting with '*', a misplaced '[' or ']': one
 *      message each, naming the option
 *   P2 push/pop paths on one stack: a name anywhere, "A/B" adjacent only, '*' and '+' between
 *      names, '[' the bottom, ']' the top, both, '[' with '*'
 *   P3 domains: a path of one domain ignores the others' ranges on the same thread
 *   P4 start/end ranges: one name, several (all must be open), per domain
 *   P5 includes are alternatives; an exclude wins; excludes alone select the rest; no filter
 *      selects everything
 *   P6 escapes: names with '/', '@' and ',' written with '\'
 *   P7 the stored path: default domain first, push/pop then start/end, other domains in order,
 *      names escaped; every part, as an include, selects its launch; none -> NULL
 *   N1 the NVTX tool through nvToolsExt.h: push/pop levels, domains, registered and wide
 *      strings, start/end across threads, each thread's own stack, the cached answer following
 *      every change
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect.h"
#include "common.h"

#include <nvtx3/nvToolsExt.h>

/* Static injection (nvtxInit.h, load sequence 2): the header calls this at the first NVTX call
 * when NVTX_INJECTION64_PATH is unset, as it calls the injection library's function. */
static int NVTX_API init_tool(NvtxGetExportTableFunc_t get)
{
    return collect_nvtx_attach(get);
}
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = init_tool;

static struct collect_nvtx_filter *filter(const char *inc, const char *exc)
{
    struct collect_nvtx_filter *f = NULL;
    assert_int_equal(collect_nvtx_filter_new(&inc, inc ? 1 : 0, &exc, exc ? 1 : 0, &f), RK_OK);
    return f;
}

/* Does include expression e select view v? */
static int sel(const char *e, const struct collect_nvtx_view *v)
{
    struct collect_nvtx_filter *f = filter(e, NULL);
    int hit = collect_nvtx_match(f, v);
    collect_nvtx_filter_free(f);
    return hit;
}

/* ------------------------------------------------------------------- P1 */

static void p1_refused(void **state)
{
    (void)state;
    static const struct {
        const char *expr, *says;
    } bad[] = {
        {"regex:lay.*/", "regular expressions ('regex:') are not supported"},
        {"@A/", "no domain name before '@'"},
        {"D@E@A", "more than one '@'"},
        {"D@", "no range named"},
        {"A//B", "an empty range name between '/'"},
        {"[", "an empty range name"},
        {"A,,B", "an empty range name"},
        {"A,*", "'*' and '+' stand for push/pop ranges"},
        {"Dom@*", "there is no expression for any range of a domain"},
        {"*", "'*' and '+' stand for push/pop ranges"},
        {"*/", "a path cannot start with '*'"},
        {"[*]", "a path cannot start with '*'"},
        {"Dom@*/b/", "a path cannot start with '*'"},
        {"A/[B", "'[' goes first"},
    };
    rk_set_quiet(0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct collect_nvtx_filter *f = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        FILE *saved = stderr;
        stderr = mem;
        int rc = collect_nvtx_filter_new(NULL, 0, &bad[i].expr, 1, &f);
        stderr = saved;
        fclose(mem);
        assert_int_equal(rc, RK_EUSAGE);
        assert_null(f);
        if (!strstr(buf, bad[i].says) || !strstr(buf, "--nvtx-exclude")) {
            fprintf(stderr, "expression '%s': %s", bad[i].expr, buf);
            fail();
        }
        free(buf);
    }
}

/* ------------------------------------------------------------------- P2 */

static void p2_pushpop(void **state)
{
    (void)state;
    const struct collect_nvtx_range pp[] = {{NULL, "outer"}, {NULL, "mid"}, {NULL, "inner"}};
    const struct collect_nvtx_view v = {pp, 3, NULL, 0};
    assert_true(sel("outer/", &v));
    assert_true(sel("mid/", &v));
    assert_true(sel("inner/", &v));
    assert_false(sel("other/", &v));
    assert_false(sel("outer", &v)); /* a start/end range of that name: none is open */
    assert_true(sel("outer/mid", &v));
    assert_true(sel("outer/mid/", &v));
    assert_true(sel("mid/inner/", &v));
    assert_false(sel("outer/inner/", &v)); /* not directly inside */
    assert_true(sel("outer/*/inner", &v));
    assert_true(sel("outer/*/mid", &v)); /* none between is any number too */
    assert_true(sel("outer/+/inner", &v));
    assert_false(sel("outer/+/mid", &v));
    assert_true(sel("[outer/", &v));
    assert_false(sel("[mid/", &v));
    assert_true(sel("inner]", &v));
    assert_false(sel("mid]", &v));
    assert_true(sel("[outer/mid/inner]", &v));
    assert_false(sel("[outer/mid]", &v));
    assert_true(sel("[outer/*]", &v));
    assert_false(sel("D@outer/", &v));
    const struct collect_nvtx_view empty = {NULL, 0, NULL, 0};
    assert_false(sel("outer/", &empty));
    assert_false(sel("outer/*", &empty));
}

/* ------------------------------------------------------------------- P3 */

static void p3_domains(void **state)
{
    (void)state;
    /* pushed in this order on one thread: a (default), b and c (Dom), d (default) */
    const struct collect_nvtx_range pp[] = {{NULL, "a"}, {"Dom", "b"}, {"Dom", "c"}, {NULL, "d"}};
    const struct collect_nvtx_view v = {pp, 4, NULL, 0};
    assert_true(sel("Dom@b/c", &v));
    assert_true(sel("Dom@[b/c]", &v));
    assert_true(sel("a/d", &v)); /* Dom's ranges are not on the default domain's stack */
    assert_false(sel("b/", &v));
    assert_false(sel("Other@b/", &v));
    assert_true(sel("Dom@b/*", &v)); /* '*' after a name: b and whatever is above it */
    assert_true(sel("a/*/d", &v));
    assert_false(sel("Other@b/*", &v));
    const struct collect_nvtx_range only_dom[] = {{"Dom", "b"}};
    const struct collect_nvtx_view w = {only_dom, 1, NULL, 0};
    assert_false(sel("a/*", &w));
    assert_true(sel("Dom@b/*", &w));
}

/* ------------------------------------------------------------------- P4 */

static void p4_startend(void **state)
{
    (void)state;
    const struct collect_nvtx_range se[] = {{NULL, "phase1"}, {"Dom", "load"}, {NULL, "warm"}};
    const struct collect_nvtx_view v = {NULL, 0, se, 3};
    assert_true(sel("phase1", &v));
    assert_true(sel("Dom@load", &v));
    assert_false(sel("load", &v));
    assert_true(sel("phase1,warm", &v));
    assert_true(sel("warm,phase1", &v));
    assert_false(sel("phase1,phase2", &v));
    assert_false(sel("phase1/", &v)); /* a push/pop range of that name: none */
}

/* ------------------------------------------------------------------- P5 */

static void p5_include_exclude(void **state)
{
    (void)state;
    const struct collect_nvtx_range a[] = {{NULL, "A"}}, b[] = {{NULL, "B"}};
    const struct collect_nvtx_range ab[] = {{NULL, "A"}, {NULL, "B"}};
    const struct collect_nvtx_view va = {a, 1, NULL, 0}, vb = {b, 1, NULL, 0};
    const struct collect_nvtx_view vab = {ab, 2, NULL, 0}, none = {NULL, 0, NULL, 0};
    const char *inc[] = {"A/", "B/"}, *exc[] = {"B/"};
    struct collect_nvtx_filter *f = NULL;
    assert_int_equal(collect_nvtx_filter_new(inc, 2, NULL, 0, &f), RK_OK);
    assert_true(collect_nvtx_match(f, &va));
    assert_true(collect_nvtx_match(f, &vb));
    assert_false(collect_nvtx_match(f, &none));
    collect_nvtx_filter_free(f);
    assert_int_equal(collect_nvtx_filter_new(inc, 1, exc, 1, &f), RK_OK);
    assert_true(collect_nvtx_match(f, &va));
    assert_false(collect_nvtx_match(f, &vab)); /* the exclude wins */
    collect_nvtx_filter_free(f);
    assert_int_equal(collect_nvtx_filter_new(NULL, 0, exc, 1, &f), RK_OK);
    assert_true(collect_nvtx_match(f, &none));
    assert_true(collect_nvtx_match(f, &va));
    assert_false(collect_nvtx_match(f, &vb));
    collect_nvtx_filter_free(f);
    assert_true(collect_nvtx_match(NULL, &vb));
}

/* ------------------------------------------------------------------- P6 */

static void p6_escapes(void **state)
{
    (void)state;
    const struct collect_nvtx_range pp[] = {{"my@dom", "a/b"}, {"my@dom", "c,d"}};
    const struct collect_nvtx_range se[] = {{NULL, "x,y"}};
    const struct collect_nvtx_view v = {pp, 2, se, 1};
    assert_true(sel("my\\@dom@a\\/b/", &v));
    assert_true(sel("my\\@dom@a\\/b/c,d", &v));
    assert_false(sel("my\\@dom@a/b/", &v));
    assert_true(sel("x\\,y", &v));
    assert_false(sel("x,y", &v));
}

/* ------------------------------------------------------------------- P7 */

static void p7_path(void **state)
{
    (void)state;
    const struct collect_nvtx_range pp[] = {
        {"Solver", "x"}, {NULL, "outer"}, {NULL, "in/ner"}, {"IO", "read"}};
    const struct collect_nvtx_range se[] = {{NULL, "phase"}, {"Solver", "step 3"}};
    const struct collect_nvtx_view v = {pp, 4, se, 2};
    char *path = collect_nvtx_path(&v);
    assert_non_null(path);
    assert_string_equal(path, "outer/in\\/ner/;phase;Solver@x/;Solver@step 3;IO@read/");
    /* every part is an include expression that selects the launch */
    char *save = NULL;
    for (char *part = strtok_r(path, ";", &save); part; part = strtok_r(NULL, ";", &save))
        assert_true(sel(part, &v));
    free(path);
    const struct collect_nvtx_view none = {NULL, 0, NULL, 0};
    assert_null(collect_nvtx_path(&none));
}

/* ------------------------------------------------------------------- N1 */

static char *here(const struct collect_nvtx_filter *f, int *selected)
{
    char *path = NULL;
    int s = 0;
    collect_nvtx_here(f, &s, &path);
    if (selected)
        *selected = s;
    return path;
}

static void expect_path(const char *want)
{
    char *got = here(NULL, NULL);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static nvtxRangeId_t other_id;
static char *other_path;

/* Another thread: its own pushes, and a start/end range it starts (ended by the main thread). */
static void *other_thread(void *arg)
{
    (void)arg;
    nvtxRangePushA("theirs");
    other_id = nvtxRangeStartA("shared");
    other_path = here(NULL, NULL);
    nvtxRangePop();
    return NULL;
}

static void n1_tool(void **state)
{
    (void)state;
    expect_path(NULL);
    assert_int_equal(nvtxRangePushA("outer"), 0);
    assert_int_equal(nvtxRangePushA("inner"), 1);
    expect_path("outer/inner/");
    nvtxDomainHandle_t dom = nvtxDomainCreateA("Solver");
    assert_non_null(dom);
    assert_true(nvtxDomainCreateA("Solver") == dom);
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = nvtxDomainRegisterStringA(dom, "assemble");
    assert_int_equal(nvtxDomainRangePushEx(dom, &a), 0);
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"caf\u00e9";
    nvtxRangeId_t id = nvtxDomainRangeStartEx(dom, &a);
    assert_true(id != 0);
    expect_path("outer/inner/;Solver@assemble/;Solver@caf\xc3\xa9");

    struct collect_nvtx_filter *f = filter("Solver@[assemble]", "inner]");
    int s = 0;
    free(here(f, &s));
    assert_false(s); /* inner is the default domain's top */
    assert_int_equal(nvtxRangePop(), 1);
    free(here(f, &s));
    assert_true(s);
    collect_nvtx_filter_free(f);
    expect_path("outer/;Solver@assemble/;Solver@caf\xc3\xa9");

    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    /* its own pushes, not this thread's, and the process's start/end ranges */
    assert_string_equal(other_path, "theirs/;shared;Solver@caf\xc3\xa9");
    free(other_path);
    expect_path("outer/;shared;Solver@assemble/;Solver@caf\xc3\xa9");
    nvtxRangeEnd(other_id); /* an end from another thread than its start */
    nvtxDomainRangeEnd(dom, id);
    assert_int_equal(nvtxDomainRangePop(dom), 0);
    assert_int_equal(nvtxDomainRangePop(dom), -1); /* none left on that domain */
    assert_int_equal(nvtxRangePop(), 0);
    expect_path(NULL);
}

int main(void)
{
    unsetenv("NVTX_INJECTION64_PATH"); /* the static injection above, not a library */
    rk_set_quiet(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(p1_refused),
        cmocka_unit_test(p2_pushpop),
        cmocka_unit_test(p3_domains),
        cmocka_unit_test(p4_startend),
        cmocka_unit_test(p5_include_exclude),
        cmocka_unit_test(p6_escapes),
        cmocka_unit_test(p7_path),
        cmocka_unit_test(n1_tool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
