/*
 * test_json.c - common/json.c: the growing buffer, the JSON writer and the JSON reader.
 *
 * Case map:
 *   J01 buffer: NULL before any append, "" after an empty append, printf and puts
 *       concatenate across many growths, release returns to RK_BUF_INIT
 *   J02 string escaping: " and \ escaped, \n \r \t, other control bytes as \u00XX,
 *       UTF-8 bytes unchanged, NULL string -> null
 *   J03 numbers: %.17g, NaN and both infinities -> null, key/value helpers
 *   J04 %.17g round trip: doubles written then read back are bit-identical
 *   J05 reader: plain values, negative, exponent, whitespace everywhere, whole numbers
 *       for rk_json_long (fractions, exponents and overflow refused)
 *   J06 reader: a key inside a nested object or array, or as a string value, never
 *       matches; escaped quotes in strings; escaped key names
 *   J07 reader: missing key, NULL json, not an object, a value that is not a number
 *       (string, null, true, inf, hex, leading +)
 *   J08 reader: every prefix of a valid object (truncated input) is refused or read
 *       correctly, never past its end
 *   J09 pairs: values, whitespace, at most max, empty, missing, malformed
 *   J10 writer and reader together: an object built with the writer reads back
 *
 * Out of scope: oom stickiness (needs a failing allocator).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* J01 */
static void buffer(void **state)
{
    (void)state;
    struct rk_buf b = RK_BUF_INIT;
    assert_null(b.s);
    rk_buf_puts(&b, "");
    assert_non_null(b.s);
    assert_string_equal(b.s, "");
    assert_int_equal(b.len, 0);
    for (int i = 0; i < 1000; i++)
        rk_buf_printf(&b, "%d,", i % 10);
    rk_buf_puts(&b, "end");
    assert_int_equal(b.len, 2003);
    assert_int_equal(strlen(b.s), b.len);
    assert_memory_equal(b.s, "0,1,2,", 6);
    assert_string_equal(b.s + 1998, "9,end");
    assert_true(b.cap > b.len);
    assert_int_equal(b.oom, 0);
    /* one printf much longer than the room left */
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    rk_buf_printf(&b, "[%s]", big);
    assert_int_equal(b.len, 2003 + 5001);
    assert_int_equal(b.s[b.len - 1], ']');
    rk_buf_release(&b);
    assert_null(b.s);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    assert_int_equal(b.oom, 0);
}

static const char *str_json(struct rk_buf *b, const char *s)
{
    rk_buf_release(b);
    rk_json_str(b, s);
    assert_int_equal(b->oom, 0);
    return b->s;
}

/* J02 */
static void escaping(void **state)
{
    (void)state;
    struct rk_buf b = RK_BUF_INIT;
    assert_string_equal(str_json(&b, "plain"), "\"plain\"");
    assert_string_equal(str_json(&b, ""), "\"\"");
    assert_string_equal(str_json(&b, NULL), "null");
    assert_string_equal(str_json(&b, "a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_string_equal(str_json(&b, "l1\nl2\r\tx"), "\"l1\\nl2\\r\\tx\"");
    assert_string_equal(str_json(&b, "\x01\x1f\b\f"), "\"\\u0001\\u001f\\u0008\\u000c\"");
    assert_string_equal(str_json(&b, "/ \x7f \xc3\xa9"), "\"/ \x7f \xc3\xa9\"");
    assert_string_equal(str_json(&b, "\"\""), "\"\\\"\\\"\"");
    rk_buf_release(&b);
}

/* J03 */
static void numbers(void **state)
{
    (void)state;
    struct rk_buf b = RK_BUF_INIT;
    rk_json_num(&b, 128);
    rk_buf_puts(&b, " ");
    rk_json_num(&b, -0.5);
    rk_buf_puts(&b, " ");
    rk_json_num(&b, 0.1);
    rk_buf_puts(&b, " ");
    rk_json_num(&b, 1e300);
    rk_buf_puts(&b, " ");
    rk_json_num(&b, NAN);
    rk_buf_puts(&b, " ");
    rk_json_num(&b, INFINITY);
    rk_buf_puts(&b, " ");
    rk_json_num(&b, -INFINITY);
    assert_string_equal(b.s, "128 -0.5 0.10000000000000001 1.0000000000000001e+300 null null null");
    rk_buf_release(&b);

    rk_buf_puts(&b, "{");
    rk_json_key_num(&b, "t1", 128);
    rk_buf_puts(&b, ",");
    rk_json_key_num(&b, "bad", NAN);
    rk_buf_puts(&b, ",");
    rk_json_key_str(&b, "name", "a\"b");
    rk_buf_puts(&b, ",");
    rk_json_key_str(&b, "none", NULL);
    rk_buf_puts(&b, "}");
    assert_string_equal(b.s, "{\"t1\":128,\"bad\":null,\"name\":\"a\\\"b\",\"none\":null}");
    rk_buf_release(&b);
}

/* J04 */
static void round_trip(void **state)
{
    (void)state;
    const double v[] = {0.1,      1.0 / 3,          2.0 / 3, 1e-310, 5e-324, 1.7976931348623157e308,
                        -123.456, 4503599627370497, 6.02e23, -0.0,   3.0,    1430e9};
    srand(12345);
    for (int i = 0; i < 1000 + (int)(sizeof v / sizeof v[0]); i++) {
        double x;
        if (i < (int)(sizeof v / sizeof v[0])) {
            x = v[i];
        } else {
            uint64_t bits = 0;
            for (int j = 0; j < 4; j++)
                bits = bits << 16 ^ (uint64_t)(rand() & 0xffff);
            memcpy(&x, &bits, sizeof x);
            if (!isfinite(x))
                continue;
        }
        struct rk_buf b = RK_BUF_INIT;
        rk_buf_puts(&b, "{");
        rk_json_key_num(&b, "x", x);
        rk_buf_puts(&b, "}");
        double y = 0;
        assert_int_equal(rk_json_number(b.s, "x", &y), RK_OK);
        assert_memory_equal(&x, &y, sizeof x);
        rk_buf_release(&b);
    }
}

static double num(const char *json, const char *key)
{
    double v = -999;
    assert_int_equal(rk_json_number(json, key, &v), RK_OK);
    return v;
}

static int missing(const char *json, const char *key)
{
    double v = -999;
    int rc = rk_json_number(json, key, &v);
    return rc == RK_ENODATA && v == -999;
}

/* J05 */
static void reader_values(void **state)
{
    (void)state;
    const char *j = "{\"a\":1,\"b\":-2.5,\"c\":1e3,\"d\":-4.5E-2,\"e\":0,\"f\":1.5e+2}";
    assert_true(num(j, "a") == 1);
    assert_true(num(j, "b") == -2.5);
    assert_true(num(j, "c") == 1000);
    assert_true(num(j, "d") == -0.045);
    assert_true(num(j, "e") == 0);
    assert_true(num(j, "f") == 150);
    const char *ws = " \n{ \"a\" :\t12 ,\r\n \"b\"\n:\n-3 \n}\n";
    assert_true(num(ws, "a") == 12);
    assert_true(num(ws, "b") == -3);
    assert_true(num("{\"big\":1e999}", "big") == HUGE_VAL);

    long l = -1;
    assert_int_equal(rk_json_long("{\"t1\":128,\"t2\":-16}", "t1", &l), RK_OK);
    assert_int_equal(l, 128);
    assert_int_equal(rk_json_long("{\"t1\":128,\"t2\":-16}", "t2", &l), RK_OK);
    assert_int_equal(l, -16);
    assert_int_equal(rk_json_long("{ \"n\" : 9223372036854775807 }", "n", &l), RK_OK);
    assert_true(l == 9223372036854775807L);
    l = 7;
    assert_int_equal(rk_json_long("{\"n\":1.5}", "n", &l), RK_ENODATA);
    assert_int_equal(rk_json_long("{\"n\":1.0}", "n", &l), RK_ENODATA);
    assert_int_equal(rk_json_long("{\"n\":1e3}", "n", &l), RK_ENODATA);
    assert_int_equal(rk_json_long("{\"n\":99999999999999999999}", "n", &l), RK_ENODATA);
    assert_int_equal(rk_json_long("{\"n\":\"12\"}", "n", &l), RK_ENODATA);
    assert_int_equal(rk_json_long(NULL, "n", &l), RK_ENODATA);
    assert_int_equal(l, 7);
}

/* J06 */
static void reader_not_fooled(void **state)
{
    (void)state;
    /* the key as a string value, inside a nested object and array */
    const char *j = "{\"name\":\"x\",\"tag\":\"x\",\"in\":{\"x\":5,\"y\":[{\"x\":6}]},"
                    "\"list\":[\"x\",{\"x\":7}],\"x\":8}";
    assert_true(num(j, "x") == 8);
    assert_true(missing(j, "y"));
    assert_true(missing("{\"in\":{\"x\":5}}", "x"));
    assert_true(missing("{\"s\":\"x\",\"t\":\"\\\"x\\\":3\"}", "x"));
    assert_true(missing("{\"s\":\"\\\"x\\\":3\"}", "x"));
    /* braces and brackets inside strings do not confuse the nesting */
    assert_true(num("{\"s\":\"}{][\",\"o\":{\"q\":\"}\"},\"x\":4}", "x") == 4);
    /* a prefix or an extension of the key is another key */
    assert_true(missing("{\"xx\":1,\"x_\":2}", "x"));
    assert_true(missing("{\"x\":1}", "xx"));
    assert_true(missing("{\"x\":1}", ""));
    assert_true(num("{\"\":3}", "") == 3);
    /* escaped key names are decoded before comparing */
    assert_true(num("{\"t\\u0031\":9}", "t1") == 9);
    assert_true(num("{\"a\\\"b\":2}", "a\"b") == 2);
    /* the first of two equal keys */
    assert_true(num("{\"x\":1,\"x\":2}", "x") == 1);
}

/* J07 */
static void reader_refusals(void **state)
{
    (void)state;
    const char *j = "{\"a\":1}";
    assert_true(missing(j, "b"));
    assert_true(missing(NULL, "a"));
    assert_true(missing("", "a"));
    assert_true(missing("{}", "a"));
    assert_true(missing("[{\"a\":1}]", "a"));
    assert_true(missing("\"a\":1", "a"));
    assert_true(missing("x{\"a\":1}", "a"));
    const char *bad[] = {"\"1\"", "null", "true", "inf", "nan", "0x10", "+1", "01", ".5",  "1.",
                         "1e",    "-",    "--1",  "1x",  "1 2", "[1]",  "{}", "",   "1e+", "NaN"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "{\"a\":%s}", bad[i]);
        assert_true(missing(buf, "a"));
    }
    /* a malformed member before the key stops the scan */
    assert_true(missing("{\"b\" 1,\"a\":1}", "a"));
    assert_true(missing("{b:1,\"a\":1}", "a"));
    assert_true(missing("{\"b\":1 \"a\":1}", "a"));
}

/* J08 */
static void reader_truncated(void **state)
{
    (void)state;
    const char *full = " { \"s\" : \"a\\\"\\u0041{[\" , \"o\" : { \"x\" : [1, {\"x\":2}] } ,"
                       " \"pairs\" : [[1,2],[3,4]], \"x\" : -12.5e-1 , \"n\" : 42 }";
    size_t n = strlen(full);
    for (size_t len = 0; len <= n; len++) {
        /* a heap copy of exactly len + 1 bytes, so ASan sees any read past the end */
        char *s = malloc(len + 1);
        assert_non_null(s);
        memcpy(s, full, len);
        s[len] = '\0';
        double v = -999;
        int rc = rk_json_number(s, "x", &v);
        if (rc == RK_OK)
            assert_true(v == -1.25);
        else
            assert_true(v == -999);
        long l = -999;
        rc = rk_json_long(s, "n", &l);
        if (rc == RK_OK)
            assert_int_equal(l, 42);
        else
            assert_int_equal(l, -999);
        double p[2][2];
        int np = rk_json_pairs(s, "pairs", p, 2);
        assert_true(np == 0 || np == 2);
        /* the complete object reads: the number needs what follows it */
        if (len == n) {
            assert_int_equal(rk_json_number(s, "x", &v), RK_OK);
            assert_int_equal(rk_json_long(s, "n", &l), RK_OK);
            assert_int_equal(np, 2);
        }
        free(s);
    }
    assert_true(missing("{\"a\":12", "a"));
    assert_true(missing("{\"a\":\"\\", "a"));
    assert_true(missing("{\"a\\", "a"));
    assert_true(missing("{\"a\\u00", "a"));
}

/* J09 */
static void pairs(void **state)
{
    (void)state;
    double p[4][2];
    const char *j = "{\"name\":\"c\",\"curve\": [ [1, 2.5] ,[ -3e2 ,4 ],\n[5,6]] ,\"n\":3}";
    assert_int_equal(rk_json_pairs(j, "curve", p, 4), 3);
    assert_true(p[0][0] == 1 && p[0][1] == 2.5);
    assert_true(p[1][0] == -300 && p[1][1] == 4);
    assert_true(p[2][0] == 5 && p[2][1] == 6);
    p[2][0] = -1;
    assert_int_equal(rk_json_pairs(j, "curve", p, 2), 2);
    assert_true(p[2][0] == -1);
    assert_int_equal(rk_json_pairs(j, "curve", p, 0), 0);
    assert_int_equal(rk_json_pairs("{\"curve\":[]}", "curve", p, 4), 0);
    assert_int_equal(rk_json_pairs(j, "other", p, 4), 0);
    assert_int_equal(rk_json_pairs(j, "n", p, 4), 0);
    assert_int_equal(rk_json_pairs(NULL, "curve", p, 4), 0);
    assert_int_equal(rk_json_pairs("{\"in\":{\"curve\":[[1,2]]}}", "curve", p, 4), 0);
    const char *bad[] = {"[[1,2],]", "[[1]]",   "[[1,2,3]]",    "[1,2]",       "[[1,2]",
                         "[[1,2],",  "[[1,2]x", "[[null,2]]",   "[[1,\"2\"]]", "[[1 2]]",
                         "[[,2]]",   "[",       "[[1,2][3,4]]", "[[1,2],[3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "{\"c\":%s}", bad[i]);
        assert_int_equal(rk_json_pairs(buf, "c", p, 4), 0);
    }
}

/* J10 */
static void writer_reader(void **state)
{
    (void)state;
    struct rk_buf b = RK_BUF_INIT;
    rk_buf_puts(&b, "{");
    rk_json_key_str(&b, "method", "x\":1,\"n\":2");
    rk_buf_puts(&b, ", ");
    rk_json_key_num(&b, "gbps", 3352.5);
    rk_buf_puts(&b, ", ");
    rk_json_key_num(&b, "nan", NAN);
    rk_buf_puts(&b, ", \"curve\":[");
    for (int i = 0; i < 3; i++) {
        rk_buf_puts(&b, i ? ",[" : "[");
        rk_json_num(&b, i * 0.1);
        rk_buf_puts(&b, ",");
        rk_json_num(&b, i * 1e9);
        rk_buf_puts(&b, "]");
    }
    rk_buf_puts(&b, "], ");
    rk_json_key_num(&b, "n", 7);
    rk_buf_puts(&b, "}");
    assert_int_equal(b.oom, 0);
    assert_true(num(b.s, "gbps") == 3352.5);
    assert_true(missing(b.s, "x"));
    assert_true(missing(b.s, "nan"));
    long l = 0;
    assert_int_equal(rk_json_long(b.s, "n", &l), RK_OK);
    assert_int_equal(l, 7);
    double p[3][2];
    assert_int_equal(rk_json_pairs(b.s, "curve", p, 3), 3);
    assert_true(p[2][0] == 2 * 0.1 && p[2][1] == 2e9);
    rk_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buffer),          cmocka_unit_test(escaping),
        cmocka_unit_test(numbers),         cmocka_unit_test(round_trip),
        cmocka_unit_test(reader_values),   cmocka_unit_test(reader_not_fooled),
        cmocka_unit_test(reader_refusals), cmocka_unit_test(reader_truncated),
        cmocka_unit_test(pairs),           cmocka_unit_test(writer_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
