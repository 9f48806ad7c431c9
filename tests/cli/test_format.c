/*
 * test_format.c - cli/format.c, the table writer behind every command's --format.
 *
 * Case map:
 *   F01 rk_parse_format: text, csv, json; anything else RK_EUSAGE
 *   F02 CSV: header, CRLF, a field with a comma, a quote, CR or LF quoted (quotes doubled),
 *       a missing value empty, reals the shortest exact text, whole numbers bare
 *   F03 CSV of an empty table: its header line alone
 *   F04 JSON: an array of objects, strings escaped, NaN, +inf, -inf and missing as null,
 *       whole numbers bare, reals exact; an empty table is []
 *   F05 text: header and rows aligned, text left, numbers right with the column's
 *       precision, missing as "-", no trailing blanks; an empty table is its header
 *   F06 a row with fewer cells than columns: the rest missing
 *
 * Out of scope: write errors and oom (need a failing file or allocator).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli.h"
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rk_col cols[] = {
    {"name", RK_COL_TEXT, 0},
    {"n", RK_COL_INT, 0},
    {"GB/s", RK_COL_REAL, 2},
};

/* Writes the table of rows (name, n, value) in fmt; malloc'd text. */
static char *render(enum rk_format fmt, int nrows, const char *const *names, const int64_t *ns,
                    const double *vals)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    struct rk_table *t = NULL;
    assert_non_null(f);
    assert_int_equal(rk_table_new(fmt, f, cols, 3, &t), RK_OK);
    for (int i = 0; i < nrows; i++) {
        assert_int_equal(rk_table_row(t), RK_OK);
        rk_table_str(t, names[i]);
        rk_table_int(t, ns[i]);
        rk_table_real(t, vals[i]);
    }
    assert_int_equal(rk_table_end(t), RK_OK);
    fclose(f);
    return out;
}

/* F01 */
static void parse_format(void **state)
{
    enum rk_format f = RK_FMT_JSON;
    (void)state;
    assert_int_equal(rk_parse_format("text", &f), RK_OK);
    assert_int_equal(f, RK_FMT_TEXT);
    assert_int_equal(rk_parse_format("csv", &f), RK_OK);
    assert_int_equal(f, RK_FMT_CSV);
    assert_int_equal(rk_parse_format("json", &f), RK_OK);
    assert_int_equal(f, RK_FMT_JSON);
    assert_int_equal(rk_parse_format("JSON", &f), RK_EUSAGE);
    assert_int_equal(rk_parse_format("", &f), RK_EUSAGE);
    assert_int_equal(rk_parse_format(NULL, &f), RK_EUSAGE);
    assert_string_equal(rk_format_name(RK_FMT_CSV), "csv");
}

/* F02 */
static void csv_quoting(void **state)
{
    const char *names[] = {"plain", "a,b", "say \"hi\"", "two\nlines", "cr\rhere", NULL};
    const int64_t ns[] = {1, -2, 3, 4, 5, 6};
    const double vals[] = {0.1, 2.5, 1e300, NAN, 3.0, 1.0 / 3.0};
    char *s = render(RK_FMT_CSV, 6, names, ns, vals);
    (void)state;
    assert_string_equal(s, "name,n,GB/s\r\n"
                           "plain,1,0.1\r\n"
                           "\"a,b\",-2,2.5\r\n"
                           "\"say \"\"hi\"\"\",3,1e+300\r\n"
                           "\"two\nlines\",4,\r\n"
                           "\"cr\rhere\",5,3\r\n"
                           ",6,0.3333333333333333\r\n");
    free(s);
}

/* F03 */
static void csv_empty(void **state)
{
    char *s = render(RK_FMT_CSV, 0, NULL, NULL, NULL);
    (void)state;
    assert_string_equal(s, "name,n,GB/s\r\n");
    free(s);
}

/* F04 */
static void json_strict(void **state)
{
    const char *names[] = {"q\"\\\t\x01", NULL, "inf", "-inf"};
    const int64_t ns[] = {INT64_MAX, 0, 7, 8};
    const double vals[] = {NAN, 1e-7, INFINITY, -INFINITY};
    char *s = render(RK_FMT_JSON, 4, names, ns, vals);
    (void)state;
    assert_string_equal(s, "[\n"
                           "{\"name\":\"q\\\"\\\\\\t\\u0001\",\"n\":9223372036854775807,"
                           "\"GB/s\":null},\n"
                           "{\"name\":null,\"n\":0,\"GB/s\":1e-07},\n"
                           "{\"name\":\"inf\",\"n\":7,\"GB/s\":null},\n"
                           "{\"name\":\"-inf\",\"n\":8,\"GB/s\":null}\n"
                           "]\n");
    assert_null(strstr(s, "nan"));
    assert_null(strstr(s, ":inf"));
    free(s);
    s = render(RK_FMT_JSON, 0, NULL, NULL, NULL);
    assert_string_equal(s, "[]\n");
    free(s);
}

/* F05 */
static void text_alignment(void **state)
{
    const char *names[] = {"a", "longer name"};
    const int64_t ns[] = {1, 12345};
    const double vals[] = {3.14159, NAN};
    char *s = render(RK_FMT_TEXT, 2, names, ns, vals);
    (void)state;
    assert_string_equal(s, "name             n  GB/s\n"
                           "a                1  3.14\n"
                           "longer name  12345     -\n");
    free(s);
    s = render(RK_FMT_TEXT, 0, NULL, NULL, NULL);
    assert_string_equal(s, "name  n  GB/s\n");
    free(s);
}

/* F06 */
static void short_row(void **state)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    struct rk_table *t = NULL;
    (void)state;
    assert_int_equal(rk_table_new(RK_FMT_JSON, f, cols, 3, &t), RK_OK);
    assert_int_equal(rk_table_row(t), RK_OK);
    rk_table_str(t, "x");
    assert_int_equal(rk_table_row(t), RK_OK);
    rk_table_null(t);
    rk_table_int(t, 2);
    assert_int_equal(rk_table_end(t), RK_OK);
    fclose(f);
    assert_string_equal(out, "[\n{\"name\":\"x\",\"n\":null,\"GB/s\":null},\n"
                             "{\"name\":null,\"n\":2,\"GB/s\":null}\n]\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_format),   cmocka_unit_test(csv_quoting),
        cmocka_unit_test(csv_empty),      cmocka_unit_test(json_strict),
        cmocka_unit_test(text_alignment), cmocka_unit_test(short_row),
    };
    rk_set_quiet(1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
