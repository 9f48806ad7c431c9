/*
 * select.c - which measurements a report covers (report_select: `roofkit report --capture
 * --device --kernel --family`), checked against the database before anything is written, so
 * that a typo is one line of error rather than a report of nothing.
 *
 * The rules:
 *   --capture  a capture id selects the measurements it stored, the measurements a model
 *              capture predicted, and the device a probe capture measured (its ceilings). A
 *              selected tune capture's sweep is reported (unselected ones stay left out).
 *   --device   a device id (the report's "#1", `roofkit list devices`' id) or a UUID, whole or
 *              a prefix of at least "GPU-" and 4 hex digits; a prefix naming two devices is
 *              refused.
 *   --kernel   the one kernel-name rule of common/kname.h, as `roofkit run --kernel` and
 *              `profile --kernel-name` follow it: an exact name, or "regex:EXPR", a POSIX
 *              extended regular expression that may match anywhere (anchor it with ^ and $);
 *              matched against the stored name and its function name ("gemm" for
 *              "void ns::gemm<float>(...)", Nsight Compute's default base), either passing.
 *   --family   the family names the database's measurements carry; "none" selects the kernels
 *              of no family (the launches of profiled programs).
 * The criteria combine with "and"; the values of one list with "or".
 *
 * Assumes: rp_load() calls rp_sel_open() with every device and capture of the database, then
 * rp_sel_row() for every measurement, then rp_sel_check_rows().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kname.h"

struct rp_sel {
    const struct report_select *src;
    const struct db_device *devs;
    unsigned char *dev_keep; /* per device of the list: 1 reported */
    int ndevs;
    struct rk_kname_filter kernel; /* when src->kernel */
    int kernel_ok;
};

int report_select_check(const struct report_select *sel)
{
    struct rk_kname_filter f;
    int rc;
    if (!sel)
        return RK_OK;
    for (int i = 0; i < sel->ncaptures; i++)
        if (sel->captures[i] < 1)
            return rk_error(RK_EUSAGE, "option '--capture' needs capture ids from 1, not '%lld'",
                            sel->captures[i]);
    for (int i = 0; i < sel->ndevices; i++)
        if (!sel->devices[i] || !*sel->devices[i])
            return rk_error(RK_EUSAGE, "option '--device' needs device ids or UUIDs, not ''");
    for (int i = 0; i < sel->nfamilies; i++)
        if (!sel->families[i] || !*sel->families[i])
            return rk_error(RK_EUSAGE, "option '--family' needs family names such as tsm2,cublas "
                                       "or none, not ''");
    if (!sel->kernel)
        return RK_OK;
    if ((rc = rk_kname_filter_init(&f, sel->kernel, "--kernel")) == RK_OK)
        rk_kname_filter_release(&f);
    return rc;
}

/* The index of the device `spec` names among devs, -1 when none, -2 when a UUID prefix names
 * two. */
static int find_device(const char *spec, const struct db_device *devs, int ndevs)
{
    long id;
    int found = -1;
    if (rk_parse_long(spec, &id) == RK_OK) {
        for (int i = 0; i < ndevs; i++)
            if (devs[i].id == id)
                return i;
        return -1;
    }
    size_t n = strlen(spec);
    for (int i = 0; i < ndevs; i++) {
        if (!devs[i].uuid || strncmp(devs[i].uuid, spec, n) != 0)
            continue;
        if (devs[i].uuid[n] == '\0')
            return i; /* the whole UUID */
        if (n < 8)    /* "GPU-" and 4 hex digits at least for a prefix */
            continue;
        found = found == -1 ? i : -2;
    }
    return found;
}

int rp_sel_open(struct db *db, const struct report_select *sel, const struct db_device *devs,
                int ndevs, const struct db_capture *caps, int ncaps, struct rp_sel **out)
{
    struct rp_sel *s;
    int rc;
    *out = NULL;
    if (!sel || (!sel->ncaptures && !sel->ndevices && !sel->kernel && !sel->nfamilies))
        return RK_OK;
    if ((rc = report_select_check(sel)) != RK_OK)
        return rc;
    for (int i = 0; i < sel->ncaptures; i++) {
        int k = 0;
        while (k < ncaps && caps[k].id != sel->captures[i])
            k++;
        if (k == ncaps)
            return rk_error(RK_EUSAGE, "no capture %lld in '%s'; see 'roofkit list captures'",
                            sel->captures[i], db_path(db));
    }
    if (!(s = calloc(1, sizeof *s)) || (ndevs && !(s->dev_keep = calloc((size_t)ndevs, 1)))) {
        free(s);
        return rk_error(RK_ENOMEM, "out of memory reading the selection");
    }
    s->src = sel;
    s->devs = devs;
    s->ndevs = ndevs;
    for (int i = 0; i < sel->ndevices; i++) {
        int k = find_device(sel->devices[i], devs, ndevs);
        if (k < 0) {
            rc = rk_error(RK_EUSAGE,
                          k == -2 ? "device '%s' names more than one device of '%s'; give more of "
                                    "its UUID"
                                  : "no device '%s' in '%s'; give an id or UUID from 'roofkit "
                                    "list devices'",
                          sel->devices[i], db_path(db));
            rp_sel_free(s);
            return rc;
        }
        s->dev_keep[k] = 1;
    }
    if (sel->kernel) {
        if ((rc = rk_kname_filter_init(&s->kernel, sel->kernel, "--kernel")) != RK_OK) {
            rp_sel_free(s);
            return rc;
        }
        s->kernel_ok = 1;
    }
    *out = s;
    return RK_OK;
}

int rp_sel_device(const struct rp_sel *s, int i)
{
    return !s || !s->src->ndevices || (i >= 0 && i < s->ndevs && s->dev_keep[i]);
}

int rp_sel_capture(const struct rp_sel *s, int64_t id)
{
    for (int i = 0; s && i < s->src->ncaptures; i++)
        if (s->src->captures[i] == id)
            return 1;
    return 0;
}

int rp_sel_has_captures(const struct rp_sel *s)
{
    return s && s->src->ncaptures > 0;
}

int rp_sel_has_devices(const struct rp_sel *s)
{
    return s && s->src->ndevices > 0;
}

static int kernel_ok(const struct rp_sel *s, const char *name)
{
    if (!s->kernel_ok)
        return 1;
    if (!name)
        return 0;
    if (rk_kname_filter_match(&s->kernel, name))
        return 1;
    char *fn = rk_kname_function(name); /* NULL when out of memory: no match by it */
    int ok = fn && rk_kname_filter_match(&s->kernel, fn);
    free(fn);
    return ok;
}

static int family_ok(const struct rp_sel *s, const char *family)
{
    if (!s->src->nfamilies)
        return 1;
    for (int i = 0; i < s->src->nfamilies; i++)
        if (family ? strcmp(family, s->src->families[i]) == 0
                   : strcmp(s->src->families[i], "none") == 0)
            return 1;
    return 0;
}

int rp_sel_row(const struct rp_sel *s, const struct db_measurement_row *row, int dev)
{
    if (!s)
        return 1;
    if (s->src->ncaptures) {
        int in = rp_sel_capture(s, row->m.capture_id);
        for (int j = 0; j < row->n_predictions && !in; j++)
            in = rp_sel_capture(s, row->predictions[j].capture_id);
        if (!in)
            return 0;
    }
    return rp_sel_device(s, dev) && kernel_ok(s, row->m.kernel) && family_ok(s, row->m.family);
}

int rp_sel_check_rows(const struct rp_sel *s, const struct db_measurement_row *rows, int nrows,
                      int nsel)
{
    if (!s)
        return RK_OK;
    for (int i = 0; i < s->src->nfamilies; i++) {
        const char *f = s->src->families[i];
        int seen = 0;
        for (int r = 0; r < nrows && !seen; r++)
            seen = rows[r].m.family ? strcmp(rows[r].m.family, f) == 0 : strcmp(f, "none") == 0;
        if (seen)
            continue;
        /* one line that lists what there is */
        const char *fams[32];
        int nf = 0;
        char known[400] = "";
        size_t used = 0;
        for (int r = 0; r < nrows && nf < 32; r++) {
            const char *g = rows[r].m.family ? rows[r].m.family : "none";
            int k = 0;
            while (k < nf && strcmp(fams[k], g))
                k++;
            if (k == nf)
                fams[nf++] = g;
        }
        for (int k = 0; k < nf && used < sizeof known; k++)
            used +=
                (size_t)snprintf(known + used, sizeof known - used, "%s%s", k ? ", " : "", fams[k]);
        return rk_error(RK_EUSAGE,
                        "no measurement of family '%s' in the database; its families: %s", f,
                        used ? known : "(no measurements)");
    }
    if (nsel == 0 && (s->src->kernel || s->src->nfamilies)) {
        char what[300];
        rp_sel_describe(s, what, sizeof what);
        return rk_error(RK_EUSAGE, "no measurement matches the selection (%s)", what);
    }
    return RK_OK;
}

void rp_sel_describe(const struct rp_sel *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    if (!s)
        return;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (o < len)                                                                               \
            o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__);                                  \
    } while (0)
    for (int i = 0; i < s->src->ncaptures; i++)
        PUT("%s%lld", i ? ", " : (s->src->ncaptures > 1 ? "captures " : "capture "),
            s->src->captures[i]);
    for (int i = 0; i < s->src->ndevices; i++)
        PUT("%s%s", i ? ", " : (o ? "; device " : "device "), s->src->devices[i]);
    if (s->src->kernel)
        PUT("%skernel %s", o ? "; " : "", s->src->kernel);
    for (int i = 0; i < s->src->nfamilies; i++)
        PUT("%s%s", i ? ", " : (o ? "; family " : "family "), s->src->families[i]);
#undef PUT
    if (o >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
}

void rp_sel_free(struct rp_sel *s)
{
    if (!s)
        return;
    if (s->kernel_ok)
        rk_kname_filter_release(&s->kernel);
    free(s->dev_keep);
    free(s);
}
