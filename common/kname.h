/*
 * kname.h - the one rule by which roofkit's options select kernels by name, as Nsight
 * Compute's do (ncu --kernel-name, --kernel-name-base, --kernel-id), so that a user of either
 * tool writes the same filter for both. `roofkit profile` (collect/session.c, inside the
 * injection library) and `roofkit run --kernel` both match through these functions.
 *
 * The rule: "regex:EXPR" is a POSIX extended regular expression that may match anywhere in the
 * name (ncu's partial match; anchor it with ^ and $ for a whole name); anything else is an exact
 * name, compared whole.
 *
 * What a name is (the base, ncu's --kernel-name-base): the mangled name the compiler wrote
 * ("_Z5triadPdPKdS1_dm"), the demangled name ("triad(double*, double const*, ...)"), or the
 * function name (the default): the demangled name without its return type, parameter list,
 * template arguments and enclosing namespaces and classes ("triad"; "vectorized_elementwise_kernel"
 * for "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)").
 *
 * A kernel id (ncu --kernel-id) is context-id:stream-id:[regex:]kernel-name:invocation-nr. Empty
 * fields match everything. roofkit accepts the context and stream fields empty only (it does not
 * tell contexts and streams apart when selecting); the kernel name follows the rule above in the
 * chosen base; invocation-nr is a number from 1 (the N-th launch of that kernel name) or a
 * regular expression that must match the whole decimal number (".*5|3": the third and every
 * launch whose number ends in 5). The kernel name is everything between the second ':' and the
 * last one, so a demangled name may hold "::".
 *
 * Errors: the parsers print one "roofkit: error: option '--OPTION' ..." line through rk_error
 * and return RK_EUSAGE (RK_ENOMEM when memory runs out); nothing is held on failure.
 */
#ifndef RK_KNAME_H
#define RK_KNAME_H

#include <regex.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel name is compared against (ncu --kernel-name-base). */
enum rk_kname_base { RK_KNAME_FUNCTION = 0, RK_KNAME_DEMANGLED, RK_KNAME_MANGLED };

/* "function", "demangled" or "mangled" (NULL or "": function) -> *out. RK_OK or RK_EUSAGE
 * printed, naming option '--kernel-name-base'. */
int rk_kname_base_parse(const char *s, enum rk_kname_base *out /* OUT */);
const char *rk_kname_base_name(enum rk_kname_base base); /* "function", ... */

/*
 * The function name of a demangled kernel name (see the header): a malloc'd string, NULL when
 * out of memory. A name that is not C++ (no parameter list) is its own function name.
 */
char *rk_kname_function(const char *demangled);

/* A name filter: an exact name, or a compiled regular expression. */
struct rk_kname_filter {
    int regex; /* 1: re holds EXPR; 0: exact holds the name */
    char *exact;
    regex_t re;
};

/*
 * Compiles spec (an exact name or "regex:EXPR") into *f. `option` names the option in the
 * message ("--kernel-name"). RK_OK (release *f with rk_kname_filter_release), RK_EUSAGE for an
 * empty name or expression or a bad expression, or RK_ENOMEM; printed.
 */
int rk_kname_filter_init(struct rk_kname_filter *f /* OUT */, const char *spec, const char *option);
/* 1 when name passes the filter, else 0 (NULL never passes). */
int rk_kname_filter_match(const struct rk_kname_filter *f, const char *name);
void rk_kname_filter_release(struct rk_kname_filter *f);

/* A parsed --kernel-id. */
struct rk_kernel_id {
    int any_name; /* the kernel-name field was empty */
    struct rk_kname_filter name;
    long invocation; /* N >= 1, or 0: see inv_regex, else any */
    int inv_regex;   /* 1: inv_re holds ^(EXPR)$ */
    regex_t inv_re;
};

/*
 * Parses an ncu kernel id (see the header) into *id. RK_OK (release with
 * rk_kernel_id_release), RK_EUSAGE (fewer than four fields, a context or stream given, a bad
 * name or invocation) or RK_ENOMEM; printed, naming option '--kernel-id'.
 */
int rk_kernel_id_init(struct rk_kernel_id *id /* OUT */, const char *spec);
/* 1 when name (in the chosen base) is the id's kernel name. */
int rk_kernel_id_name_match(const struct rk_kernel_id *id, const char *name);
/* 1 when n (the launch's number among the launches of its name, from 1) is the id's. */
int rk_kernel_id_invocation_match(const struct rk_kernel_id *id, long n);
void rk_kernel_id_release(struct rk_kernel_id *id);

#ifdef __cplusplus
}
#endif
#endif /* RK_KNAME_H */
