/*
 * result_check.c - check_result_well_formed (result_check.h): what every probe result must
 * be, whichever probe made it; the GPU tests of probes/ add their ranges on top.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "result_check.h"

/* A non-finite number as printf writes it ("nan", "-nan", "inf", "-inf") in the place of
 * a JSON value (after ':', ',' or '['); a key such as "knee_inflight_bytes" is not one. */
static int has_nonfinite(const char *json)
{
    for (const char *p = json; *p; p++) {
        if (*p != ':' && *p != ',' && *p != '[')
            continue;
        const char *v = p + 1;
        while (*v == ' ' || *v == '-')
            v++;
        if (!strncmp(v, "nan", 3) || !strncmp(v, "inf", 3))
            return 1;
    }
    return 0;
}

void check_result_well_formed(const struct probes_result *r)
{
    const size_t n = strlen(r->params);
    if (!(isfinite(r->value) && r->value > 0 && r->value == r->median))
        fail_msg("%s: value %g, median %g", r->name, r->value, r->median);
    if (!(r->min <= r->median * (1 + 1e-12) && r->median <= r->max * (1 + 1e-12)))
        fail_msg("%s: min %g median %g max %g", r->name, r->min, r->median, r->max);
    assert_true(r->reps >= 1);
    assert_non_null(r->kind);
    assert_true(r->unit && r->unit[0]);
    assert_true(r->method[0]);
    if (!(n >= 2 && r->params[0] == '{' && r->params[n - 1] == '}'))
        fail_msg("%s: params not a JSON object: %s", r->name, r->params);
    if (has_nonfinite(r->params))
        fail_msg("%s: params hold nan or inf: %s", r->name, r->params);
    if (!isnan(r->theoretical) && !(r->value <= 1.05 * r->theoretical))
        fail_msg("%s: %g above its theoretical %g", r->name, r->value, r->theoretical);
}
