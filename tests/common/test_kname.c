/*
 * test_kname.c - common/kname.c: the one rule by which `roofkit profile --kernel-name` and
 * `roofkit run --kernel` select kernels, the function name of a demangled name
 * (--kernel-name-base function) and Nsight Compute's --kernel-id grammar. Label `unit`.
 *
 * Case map (id: what):
 *   K1  the rule: anything but "regex:EXPR" is an exact, whole name; "regex:" is a POSIX
 *       extended expression matched anywhere (ncu's partial match), anchors for a whole name
 *   K2  bad filters: an empty name, "regex:" with nothing after it, an expression that does not
 *       compile are usage errors, and nothing is held
 *   K3  --kernel-name-base: function (also unset or empty), demangled, mangled; others refused
 *   K4  function names of demangled names: parameters, return type, template arguments (with
 *       parentheses, lambdas and nested templates inside), namespaces and classes removed; a C
 *       name or a name that is not C++ is its own
 *   K5  kernel ids: "::NAME:N", empty fields match all, "regex:" names, names holding "::"
 *       (the name runs to the last ':'), invocation numbers from 1 and invocation expressions
 *       matched on the whole number
 *   K6  bad kernel ids: fewer than four fields, a context or stream given, invocation 0 or a
 *       bad expression, a bad name: usage errors
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"
#include "kname.h"

static int setup(void **state)
{
    (void)state;
    rk_set_quiet(1);
    return 0;
}

/* K1 */
static void test_rule(void **state)
{
    (void)state;
    struct rk_kname_filter f;
    assert_int_equal(rk_kname_filter_init(&f, "gemm", "--kernel-name"), RK_OK);
    assert_false(f.regex);
    assert_true(rk_kname_filter_match(&f, "gemm"));
    assert_false(rk_kname_filter_match(&f, "gemm_tn")); /* whole names only, no prefix */
    assert_false(rk_kname_filter_match(&f, "sgemm"));
    assert_false(rk_kname_filter_match(&f, "Gemm"));
    assert_false(rk_kname_filter_match(&f, NULL));
    rk_kname_filter_release(&f);

    /* an exact name is taken literally, regex characters and all */
    assert_int_equal(rk_kname_filter_init(&f, "a.c", "--kernel-name"), RK_OK);
    assert_true(rk_kname_filter_match(&f, "a.c"));
    assert_false(rk_kname_filter_match(&f, "abc"));
    rk_kname_filter_release(&f);

    assert_int_equal(rk_kname_filter_init(&f, "regex:gemm", "--kernel-name"), RK_OK);
    assert_true(f.regex);
    assert_true(rk_kname_filter_match(&f, "gemm"));
    assert_true(rk_kname_filter_match(&f, "ampere_sgemm_128x64_tn")); /* anywhere */
    assert_false(rk_kname_filter_match(&f, "triad"));
    rk_kname_filter_release(&f);

    assert_int_equal(rk_kname_filter_init(&f, "regex:^tsm2_v[23]$", "--kernel"), RK_OK);
    assert_true(rk_kname_filter_match(&f, "tsm2_v2"));
    assert_true(rk_kname_filter_match(&f, "tsm2_v3"));
    assert_false(rk_kname_filter_match(&f, "tsm2_v1"));
    assert_false(rk_kname_filter_match(&f, "tsm2_v30"));
    rk_kname_filter_release(&f);

    assert_int_equal(rk_kname_filter_init(&f, "regex:foo|bar", "--kernel-name"), RK_OK);
    assert_true(rk_kname_filter_match(&f, "_bar2")); /* ncu's own example */
    assert_true(rk_kname_filter_match(&f, "foobar"));
    assert_false(rk_kname_filter_match(&f, "baz"));
    rk_kname_filter_release(&f);
}

/* K2 */
static void test_bad_filters(void **state)
{
    (void)state;
    struct rk_kname_filter f;
    assert_int_equal(rk_kname_filter_init(&f, "", "--kernel-name"), RK_EUSAGE);
    assert_int_equal(rk_kname_filter_init(&f, NULL, "--kernel-name"), RK_EUSAGE);
    assert_int_equal(rk_kname_filter_init(&f, "regex:", "--kernel-name"), RK_EUSAGE);
    assert_int_equal(rk_kname_filter_init(&f, "regex:(", "--kernel-name"), RK_EUSAGE);
    assert_int_equal(rk_kname_filter_init(&f, "regex:a[", "--kernel"), RK_EUSAGE);
    assert_false(f.regex);
    assert_null(f.exact);
}

/* K3 */
static void test_base(void **state)
{
    (void)state;
    enum rk_kname_base b = RK_KNAME_MANGLED;
    assert_int_equal(rk_kname_base_parse(NULL, &b), RK_OK);
    assert_int_equal(b, RK_KNAME_FUNCTION);
    b = RK_KNAME_MANGLED;
    assert_int_equal(rk_kname_base_parse("", &b), RK_OK);
    assert_int_equal(b, RK_KNAME_FUNCTION);
    assert_int_equal(rk_kname_base_parse("function", &b), RK_OK);
    assert_int_equal(b, RK_KNAME_FUNCTION);
    assert_int_equal(rk_kname_base_parse("demangled", &b), RK_OK);
    assert_int_equal(b, RK_KNAME_DEMANGLED);
    assert_int_equal(rk_kname_base_parse("mangled", &b), RK_OK);
    assert_int_equal(b, RK_KNAME_MANGLED);
    assert_int_equal(rk_kname_base_parse("Function", &b), RK_EUSAGE);
    assert_int_equal(rk_kname_base_parse("func", &b), RK_EUSAGE);
    assert_string_equal(rk_kname_base_name(RK_KNAME_DEMANGLED), "demangled");
}

/* K4 */
static void test_function_name(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"triad(double*, double const*, double const*, double, unsigned long)", "triad"},
        {"copy()", "copy"},
        {"ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn"},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
         "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
         "at::detail::Array<char*, 1>)",
         "vectorized_elementwise_kernel"},
        {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_"
         "align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)",
         "Kernel2"},
        {"(anonymous namespace)::scale_kernel(float*, int)", "scale_kernel"},
        {"void foo<(char)1, true>(int)", "foo"},
        {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"
         "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<"
         "float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, "
         "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, "
         "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, "
         "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
         "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<"
         "float> > const&)::{lambda(int)#1})",
         "elementwise_kernel"},
        {"void ns::Outer<int>::inner<float>(float*)", "inner"},
        {"void tsm2_v3_kernel<double, 256, 16, 8>(double const*, double const*, double*, int, "
         "int, int)",
         "tsm2_v3_kernel"},
        {"_Z5triadPdPKdS1_dm", "_Z5triadPdPKdS1_dm"}, /* not demangled: its own name */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *f = rk_kname_function(cases[i][0]);
        assert_non_null(f);
        assert_string_equal(f, cases[i][1]);
        free(f);
    }
}

/* K5 */
static void test_kernel_id(void **state)
{
    (void)state;
    struct rk_kernel_id id;

    assert_int_equal(rk_kernel_id_init(&id, "::foo:2"), RK_OK);
    assert_true(rk_kernel_id_name_match(&id, "foo"));
    assert_false(rk_kernel_id_name_match(&id, "foobar")); /* exact by default */
    assert_false(rk_kernel_id_invocation_match(&id, 1));
    assert_true(rk_kernel_id_invocation_match(&id, 2));
    assert_false(rk_kernel_id_invocation_match(&id, 3));
    rk_kernel_id_release(&id);

    assert_int_equal(rk_kernel_id_init(&id, ":::"), RK_OK); /* all fields empty: everything */
    assert_true(id.any_name);
    assert_true(rk_kernel_id_name_match(&id, "anything"));
    assert_false(rk_kernel_id_name_match(&id, NULL));
    assert_true(rk_kernel_id_invocation_match(&id, 1));
    assert_true(rk_kernel_id_invocation_match(&id, 12345));
    rk_kernel_id_release(&id);

    assert_int_equal(rk_kernel_id_init(&id, "::regex:^.*foo$:"), RK_OK);
    assert_true(rk_kernel_id_name_match(&id, "barfoo"));
    assert_false(rk_kernel_id_name_match(&id, "foobar"));
    assert_true(rk_kernel_id_invocation_match(&id, 7));
    rk_kernel_id_release(&id);

    /* the name runs to the last ':' (a demangled name holds "::") */
    assert_int_equal(rk_kernel_id_init(&id, "::ns::foo(int):1"), RK_OK);
    assert_true(rk_kernel_id_name_match(&id, "ns::foo(int)"));
    assert_true(rk_kernel_id_invocation_match(&id, 1));
    assert_false(rk_kernel_id_invocation_match(&id, 2));
    rk_kernel_id_release(&id);

    /* ncu's example: the third invocation and every one whose number ends in 5 */
    assert_int_equal(rk_kernel_id_init(&id, ":::.*5|3"), RK_OK);
    assert_true(id.inv_regex);
    assert_true(rk_kernel_id_invocation_match(&id, 3));
    assert_true(rk_kernel_id_invocation_match(&id, 5));
    assert_true(rk_kernel_id_invocation_match(&id, 15));
    assert_true(rk_kernel_id_invocation_match(&id, 125));
    assert_false(rk_kernel_id_invocation_match(&id, 13)); /* the whole number must match */
    assert_false(rk_kernel_id_invocation_match(&id, 51));
    assert_false(rk_kernel_id_invocation_match(&id, 1));
    rk_kernel_id_release(&id);

    assert_int_equal(rk_kernel_id_init(&id, "::regex:Bar:2"), RK_OK);
    assert_true(rk_kernel_id_name_match(&id, "FooBar"));
    assert_true(rk_kernel_id_invocation_match(&id, 2));
    rk_kernel_id_release(&id);
}

/* K6 */
static void test_bad_kernel_ids(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",           "foo",
        "::foo",      ":foo:1",
        "1:2:foo:3",  "1::foo:",
        ":7::",       "1|5:2::7",
        "::foo:0",    "::foo:00",
        "::foo:(",    "::regex::1",
        "::regex:(:", "::foo:99999999999999999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct rk_kernel_id id;
        assert_int_equal(rk_kernel_id_init(&id, bad[i]), RK_EUSAGE);
        assert_false(id.inv_regex);
    }
    struct rk_kernel_id id;
    assert_int_equal(rk_kernel_id_init(&id, NULL), RK_EUSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_rule, setup),
        cmocka_unit_test_setup(test_bad_filters, setup),
        cmocka_unit_test_setup(test_base, setup),
        cmocka_unit_test_setup(test_function_name, setup),
        cmocka_unit_test_setup(test_kernel_id, setup),
        cmocka_unit_test_setup(test_bad_kernel_ids, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
