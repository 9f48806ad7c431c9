/*
 * report.h - `roofkit report`: turns a database into what a person looks at. The
 * whole public interface of report/.
 *
 * A report is a directory:
 *     index.html         self-contained: CSS and every chart (SVG) inline, no
 *                        script, no network. It opens with the overview: each
 *                        device's roofline holding every selected kernel (every
 *                        point titled and linked to its table row) and the kernels
 *                        that take the most time; the full tables follow
 *     report.md          the same tables in Markdown, charts linked from plots/
 *     csv/<table>.csv    every table, numbers with 17 significant digits
 *     plots/<chart>.gp   one gnuplot script per chart, with its data file
 *     plots/<chart>.dat  (edit a script and run `gnuplot NAME.gp` in plots/ to
 *     plots/<chart>.svg  re-plot); all.gp loads every script
 *     .roofkit-report    the list of files roofkit wrote (its ownership marker)
 *
 * Invariants:
 *   - Reads through db/ only; writes nothing to the database.
 *   - Replaces only roofkit's own files: a directory that holds files but no
 *     .roofkit-report marker is refused (RK_EIO), and each file is written to a
 *     temporary name and renamed over the old one, so a failure leaves the previous
 *     version of that file, never half of one (the SVG files excepted: gnuplot
 *     writes them itself). Files a previous report wrote and
 *     this one does not (a chart for a device no longer present) are removed.
 *   - gnuplot is a program found at run time and run once per report, on all the
 *     scripts. Without it the tables, CSV, Markdown, HTML and scripts are still
 *     written, and report_write() returns RK_ENOTOOL after saying so.
 *   - An empty database still gives a report, which says what is missing and which
 *     command fills it in.
 */
#ifndef RK_REPORT_H
#define RK_REPORT_H

#include "common.h" /* enum rk_err */

#ifdef __cplusplus
extern "C" {
#endif

struct db;

/*
 * Which measurements a report covers (`roofkit report --capture --device --kernel --family`).
 * Every field empty (a zeroed struct) selects everything. report_write() checks the values
 * against the database before it writes anything: a capture or device the database does not
 * hold, a family none of its measurements has, or a selection that leaves no measurement while
 * --kernel or --family asked for some, is refused (RK_EUSAGE, one line).
 */
struct report_select {
    const long long *captures; /* capture ids: the measurements a capture stored, the ones a
                                  model capture predicted, the device a probe capture measured */
    int ncaptures;
    const char *const *devices; /* device ids as `roofkit list devices` and the report show them
                                   ("1" for "#1"), or UUIDs, whole or a prefix ("GPU-0a1b2c3d") */
    int ndevices;
    const char *kernel; /* common/kname.h's rule: an exact kernel name, or "regex:EXPR" (a POSIX
                           extended regular expression that may match anywhere), against the
                           stored name and its function name ("gemm" for "void ns::gemm<T>(..)") */
    const char *const *families; /* family names; "none": kernels of no family (profiled) */
    int nfamilies;
};

/*
 * Checks what can be checked without a database: the kernel rule compiles, no list is empty,
 * no capture id is below 1. RK_OK, or RK_EUSAGE printed as one line naming the option
 * ("option '--kernel' has a bad regular expression '('").
 */
int report_select_check(const struct report_select *sel);

/* Bits of report_opts.formats. Charts are drawn when html or md is asked for. */
enum report_format {
    REPORT_HTML = 1 << 0,
    REPORT_MD = 1 << 1,
    REPORT_CSV = 1 << 2,
    REPORT_ALL = REPORT_HTML | REPORT_MD | REPORT_CSV,
};

struct report_opts {
    const char *out_dir;         /* created (with parents) if missing; NULL: "roofkit-report" */
    unsigned formats;            /* REPORT_* bits; 0 means REPORT_ALL */
    const char *label;           /* shown at the top of every page, e.g. "example data recorded
                                    on an H100"; NULL for none */
    const char *gnuplot;         /* the gnuplot program: NULL searches PATH for "gnuplot"; a path
                                    (with a '/') is used as given */
    const char *title;           /* page title; NULL: "roofkit report" */
    const char *source;          /* where the data came from, shown in place of the database's
                                    path (e.g. "examples/h100.sql"); NULL: the path */
    struct report_select select; /* the measurements covered; zeroed: all */
};

/*
 * Parses a --format list ("html,md,csv") into REPORT_* bits. Returns RK_OK, or
 * RK_EUSAGE (nothing printed) for an empty list, an empty or unknown name, or RK_ENOMEM.
 */
int report_parse_formats(const char *list, unsigned *out /* OUT */);

/*
 * Writes the report of everything in db into opts->out_dir.
 * Returns:
 *   RK_OK       every file written, charts drawn
 *   RK_ENOTOOL  gnuplot is missing: everything but the SVG charts was written
 *   RK_EUSAGE   opts->select names what the database does not hold (printed; nothing
 *               written, the directory not even created)
 *   RK_EIO      the directory cannot be created or written, or holds files that are
 *               not roofkit's (message printed; files already there are unchanged)
 *   RK_EDB      reading the database failed (message printed)
 *   RK_EFAIL    gnuplot failed on the scripts (its log is in plots/gnuplot.log)
 *   RK_ENOMEM   out of memory
 * On RK_OK and RK_ENOTOOL, prints one line naming the directory unless quiet.
 */
int report_write(struct db *db, const struct report_opts *opts);

/* `roofkit report --baseline A[:B]`: capture B of the report's database against capture A, as
 * `roofkit diff A B` compares them (docs/compare.md), shown as a section of its own. */
struct report_baseline {
    long long capture; /* A */
    long long current; /* B; 0: the newest done or interrupted capture of A's kind but A */
    double threshold;  /* a slower configuration is a regression above 1 + threshold (0.05) */
    double noise;      /* the run-to-run noise floor (ANALYSIS_CMP_NOISE) */
};
/* report_write with that section (base NULL: none). Also RK_EUSAGE (printed, nothing written)
 * when A or B is not in the database, there is no B, or they cannot be compared. */
int report_write_compare(struct db *db, const struct report_opts *opts,
                         const struct report_baseline *base);

#ifdef __cplusplus
}
#endif
#endif /* RK_REPORT_H */
