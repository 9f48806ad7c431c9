/*
 * fuzz_lists.c - the list and number parsers every option goes through: comma-separated
 * names and numbers (common.c's rk_parse_name_list / rk_parse_long_list: --sizes, --param
 * values, --metrics, --kernel, --precision), rk_parse_double / rk_parse_long (common.c), and
 * the kernel registry's name parsers (kernels_precision_parse, kernels_match, kernels_find),
 * and probe --only (probes_select).
 *
 * Properties checked beside "no crash": a parsed list has at least one element and no
 * empty name; each name is a piece of the input between commas; a parsed number is finite;
 * kernels_match agrees with a reference glob matcher (and stays fast: its first version
 * backtracked exponentially on patterns with many '*').
 */
#include "fuzz.h"

#include "common.h"
#include "kernels.h"
#include "probes.h"

#include <math.h>

/* kernels_match's reference: exact name or prefix without '*' and '?', else a glob
 * matched by dynamic programming over (pattern, name) positions. */
static int ref_match(const char *p, const char *s)
{
    size_t np = strlen(p), ns = strlen(s);
    unsigned char *ok;
    int r;
    if (!strpbrk(p, "*?")) /* a registry name selects itself alone, else a prefix */
        return kernels_find(p) ? strcmp(p, s) == 0 : strncmp(p, s, np) == 0;
    ok = calloc((np + 1) * (ns + 1), 1); /* ok[i*(ns+1)+j]: p[i..] matches s[j..] */
    FUZZ_CHECK(ok != NULL);
    ok[np * (ns + 1) + ns] = 1;
    for (size_t i = np; i-- > 0;)
        for (size_t j = ns + 1; j-- > 0;) {
            unsigned char *cell = &ok[i * (ns + 1) + j];
            if (p[i] == '*')
                *cell = ok[(i + 1) * (ns + 1) + j] || (j < ns && ok[i * (ns + 1) + j + 1]);
            else
                *cell = j < ns && (p[i] == '?' || p[i] == s[j]) && ok[(i + 1) * (ns + 1) + j + 1];
        }
    r = ok[0];
    free(ok);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    char **names = NULL;
    long *vals = NULL, l;
    int n = 0;
    double d;
    if (!s)
        return 0;
    if (rk_parse_name_list(s, &names, &n) == RK_OK) {
        size_t total = 0;
        FUZZ_CHECK(n >= 1);
        for (int i = 0; i < n; i++) {
            FUZZ_CHECK(names[i][0] != '\0' && !strchr(names[i], ','));
            total += strlen(names[i]) + 1;
            (void)kernels_precision_parse(names[i]);
            (void)kernels_find(names[i]);
            for (int k = 0; k < kernels_count(); k++)
                FUZZ_CHECK(kernels_match(names[i], kernels_get(k)->name) ==
                           ref_match(names[i], kernels_get(k)->name));
        }
        FUZZ_CHECK(total == strlen(s) + 1);
        rk_free_name_list(names, n);
    }
    n = 0;
    if (rk_parse_long_list(s, &vals, &n) == RK_OK) {
        FUZZ_CHECK(n >= 1);
        free(vals);
    }
    if (rk_parse_double(s, &d) == RK_OK)
        FUZZ_CHECK(isfinite(d));
    (void)rk_parse_long(s, &l);
    (void)kernels_suite_find(s);
    {
        unsigned char *sel = calloc((size_t)probes_count() + 1, 1);
        FUZZ_CHECK(sel != NULL);
        if (probes_select(s, sel) == RK_OK && !*s)
            for (int i = 0; i < probes_count(); i++)
                FUZZ_CHECK(sel[i] == 1); /* an empty list selects every probe */
        free(sel);
    }
    free(s);
    return 0;
}
