/*
 * filter.c - which launches a collection session records (filter.h).
 */
#define _GNU_SOURCE
#include "filter.h"
#include "backend.h" /* bk_demangle */
#include "common.h"

#include <stdlib.h>
#include <string.h>

int collect_filter_init(struct collect_filter *f, const struct collect_options *opt)
{
    int rc;
    f->skip = opt->launch_skip;
    f->count = opt->launch_count;
    if (opt->kernel_regex) {
        int rrc = regcomp(&f->re, opt->kernel_regex, REG_EXTENDED | REG_NOSUB);
        if (rrc != 0) {
            char msg[256];
            regerror(rrc, &f->re, msg, sizeof msg);
            return rk_error(RK_EUSAGE, "bad kernel name pattern '%s': %s", opt->kernel_regex, msg);
        }
        f->has_re = 1;
    }
    if ((rc = rk_kname_base_parse(opt->kernel_base, &f->base)) != RK_OK)
        return rc;
    if (opt->kernel_name && *opt->kernel_name) {
        if ((rc = rk_kname_filter_init(&f->name, opt->kernel_name, "--kernel-name")) != RK_OK)
            return rc;
        f->has_name = 1;
    }
    if (opt->kernel_id && *opt->kernel_id) {
        if ((rc = rk_kernel_id_init(&f->id, opt->kernel_id)) != RK_OK)
            return rc;
        f->has_id = 1;
    }
    return RK_OK;
}

void collect_filter_release(struct collect_filter *f)
{
    for (int i = 0; i < f->ncache; i++)
        free(f->cache[i].name);
    if (f->has_re)
        regfree(&f->re);
    if (f->has_name)
        rk_kname_filter_release(&f->name);
    if (f->has_id)
        rk_kernel_id_release(&f->id);
    for (long i = 0; i < f->ninv; i++)
        free(f->inv[i].name);
    free(f->inv);
}

/* The kernel name in the filter's base (kname.h): malloc'd, NULL when out of memory. */
static char *base_name(const struct collect_filter *f, const char *symbol, const char *dem)
{
    if (f->base == RK_KNAME_MANGLED)
        return strdup(symbol);
    if (!dem)
        return NULL;
    return f->base == RK_KNAME_DEMANGLED ? strdup(dem) : rk_kname_function(dem);
}

/* The invocation counter of kernel name `name` (kept for the whole session), or -1. */
static long inv_slot(struct collect_filter *f, const char *name)
{
    for (long i = 0; i < f->ninv; i++)
        if (strcmp(f->inv[i].name, name) == 0)
            return i;
    if (f->ninv == f->capinv) {
        long cap = f->capinv ? 2 * f->capinv : 16;
        void *p = realloc(f->inv, (size_t)cap * sizeof *f->inv);
        if (!p)
            return -1;
        f->inv = p;
        f->capinv = cap;
    }
    if (!(f->inv[f->ninv].name = strdup(name)))
        return -1;
    f->inv[f->ninv].n = 0;
    return f->ninv++;
}

int collect_filter_name(struct collect_filter *f, const char *symbol)
{
    if (!f->has_re && !f->has_name && !f->has_id)
        return 1;
    if (!symbol)
        return 0;
    int slot = -1, match = 1, id_match = 0;
    long inv = -1;
    for (int i = 0; i < f->ncache && slot < 0; i++)
        if (strcmp(f->cache[i].name, symbol) == 0)
            slot = i;
    if (slot >= 0) {
        match = f->cache[slot].match;
        id_match = f->cache[slot].id_match;
        inv = f->cache[slot].inv;
    } else {
        char *dem = f->has_re || f->base != RK_KNAME_MANGLED ? bk_demangle(symbol) : NULL;
        if (f->has_re)
            match = regexec(&f->re, symbol, 0, NULL, 0) == 0 ||
                    (dem && regexec(&f->re, dem, 0, NULL, 0) == 0);
        if (f->has_name || f->has_id) {
            char *b = base_name(f, symbol, dem);
            if (f->has_name)
                match = match && rk_kname_filter_match(&f->name, b);
            if (f->has_id && b && (id_match = rk_kernel_id_name_match(&f->id, b)))
                inv = inv_slot(f, b);
            free(b);
        }
        free(dem);
        char *copy = strdup(symbol);
        if (copy) {
            if (f->ncache < COLLECT_NAME_CACHE) {
                slot = f->ncache++;
            } else {
                slot = f->next_evict++ % COLLECT_NAME_CACHE;
                free(f->cache[slot].name);
            }
            f->cache[slot].name = copy;
            f->cache[slot].match = match;
            f->cache[slot].id_match = id_match;
            f->cache[slot].inv = inv;
        }
    }
    if (f->has_id) {
        if (!id_match || inv < 0)
            return 0;
        if (!rk_kernel_id_invocation_match(&f->id, ++f->inv[inv].n))
            return 0;
    }
    return match;
}

int collect_filter_window(struct collect_filter *f)
{
    long k = f->matched++;
    return k >= f->skip && (f->count <= 0 || k < f->skip + f->count);
}
