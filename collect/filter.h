/*
 * filter.h - which launches a collection session records (collect/'s own, not part of
 * collect.h): the name filters (--kernel-name and --kernel-id in Nsight Compute's syntax,
 * matched on the name of --kernel-name-base by common/kname.h's rule, and the raw regex of
 * ROOFKIT_KERNEL) and the --launch-skip/--launch-count window, which counts the launches that
 * passed them. session.c asks it at each launch, under its lock.
 */
#ifndef RK_COLLECT_FILTER_H
#define RK_COLLECT_FILTER_H

#include <regex.h>

#include "collect.h"
#include "kname.h"

#define COLLECT_NAME_CACHE 64

/* Launches so far of a kernel name (base) that the kernel id names. */
struct inv_count {
    char *name;
    long n; /* the invocation number of its last launch */
};

struct collect_filter {
    int has_re;
    regex_t re;
    enum rk_kname_base base; /* what kernel_name and kernel_id match */
    int has_name;
    struct rk_kname_filter name; /* --kernel-name */
    int has_id;
    struct rk_kernel_id id; /* --kernel-id */
    struct inv_count *inv;  /* the kernel id's invocation numbers, per kernel name */
    long ninv, capinv;
    long skip, count, matched;
    struct {
        char *name;   /* mangled */
        int match;    /* passes --kernel-name and the raw regex */
        int id_match; /* is the kernel id's kernel name */
        long inv;     /* its index in inv[] when id_match, else -1 */
    } cache[COLLECT_NAME_CACHE];
    int ncache, next_evict;
};

/* From opt's kernel_regex, kernel_base, kernel_name, kernel_id, launch_skip and launch_count;
 * f zeroed before. RK_OK, or RK_EUSAGE (printed) for a bad pattern, base or kernel id; f can be
 * released either way. */
int collect_filter_init(struct collect_filter *f, const struct collect_options *opt);
void collect_filter_release(struct collect_filter *f);

/*
 * Does a launch of kernel `symbol` pass the name filters? A launch of the kernel id's kernel name
 * is counted as its name's next invocation, so call this once per launch. What a name matched is
 * cached by mangled name (CUPTI's pointers are not stable; demangling costs more than the
 * lookup).
 */
int collect_filter_name(struct collect_filter *f, const char *symbol);
/* Counts a launch that passed against --launch-skip/--launch-count: 1 inside the window. */
int collect_filter_window(struct collect_filter *f);

#endif /* RK_COLLECT_FILTER_H */
