/*
 * internal.h - what the files of report/ share; not part of the module's interface
 * (report.h is). Cross-file names start with rp_.
 *
 * The flow of report_write() (report.c):
 *
 *   rp_load()          db/ -> struct rp_data: the selection (select.c) of devices with
 *                      their current ceilings and latency curve, every selected
 *                      measurement with its derived figures (GFLOP/s, GB/s, intensity,
 *                      % of roof), the model names, each device's best model and the
 *                      kernels that take the most time (overview.c)
 *   rp_build_tables()  rp_data -> struct rp_table[]: one result model ... (tables.c; the
 *                      section of several GPUs and ranks in gpus.c)
 *   rp_build_charts()  rp_data -> gnuplot scripts and data files + struct rp_chart[]
 *                      (charts.c; the rooflines in roofline.c; the charts of several GPUs and
 *                      ranks in gpucharts.c; script writing in gnuplot.c)
 *   rp_write_html(), rp_write_md(), rp_write_csv()   ... three printers
 *   rp_run_gnuplot()   one gnuplot process for all the scripts
 *   rp_chart_marks()   each point gnuplot drew gets its <title> and its link (marks.c)
 *
 * Every file goes through rp_out_write() (out.c), which writes a temporary file and
 * renames it, and records the name for the ownership marker.
 *
 * Calls go one way: report.c -> tables.c, charts.c, pages.c (and load.c) -> out.c, buf.c;
 * tables.c -> gpus.c; charts.c -> roofline.c, gpucharts.c -> gnuplot.c -> out.c, buf.c;
 * gpucharts.c -> gpus.c (its labels and lookups).
 */
#ifndef RK_REPORT_INTERNAL_H
#define RK_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "db.h"
#include "report.h"

/* ---------------------------------------------------------------- buffers */

/* A growable text buffer; after an allocation failure it sets oom and ignores
 * further appends (checked once, when the buffer is used). */
struct rp_buf {
    char *p;
    size_t len, cap;
    int oom;
};

void rp_buf_add(struct rp_buf *b, const char *s, size_t n);
void rp_buf_puts(struct rp_buf *b, const char *s);
void rp_buf_printf(struct rp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s escaped for HTML text and attribute values (& < > "). */
void rp_buf_html(struct rp_buf *b, const char *s);
/* The same for text between tags only (& <): quotes stay as they are. */
void rp_buf_html_text(struct rp_buf *b, const char *s);
void rp_buf_free(struct rp_buf *b);

/* A number for people: 4 significant digits ("1234", "0.0123", "1.235e+06"); "" for
 * NaN. buf holds at least 32 bytes. */
const char *rp_fmt_num(char *buf, double v);
/* A number for machines: 17 significant digits (round-trips a double); "" for NaN. */
const char *rp_fmt_exact(char *buf, double v);

/* ------------------------------------------------------------ loaded data */

/* One kernel of a device's overview (overview.c): the launches of one kernel with one shape,
 * precision and parameters (a profiled kernel's launches, a suite kernel's configuration). */
struct rp_top {
    const struct rp_meas *rep; /* its longest launch: the row its entry links to */
    int launches;
    double time_s;      /* the sum of their median times [s] */
    double share_pct;   /* 100 x time_s / the device's time */
    double pct_roof;    /* time-weighted % of roof (100 x sum(flops / roof) / sum(time)); NaN */
    const char *bound;  /* the bound of most of its time (analysis_place); NULL when unknown */
    int npred;          /* launches the device's best model predicted (with a time) */
    double pred_s;      /* the sum of those predictions [s] */
    double pred_meas_s; /* the sum of those launches' measured times [s] */
};

/* One device with its current ceilings (analysis_device_load). */
struct rp_dev {
    struct analysis_device a; /* the device row, its current ceilings and latency curve */
    /* The bandwidth of each level [B/s] by the ceiling policy (analysis_ceiling, device-wide)
     * and the ceiling it is (NULL when none): index = enum model_level_id (dram, l2, l1,
     * shared). */
    double bw[4];
    const struct db_ceiling *bw_c[4];
    int nmeas;          /* measurements taken on it */
    const char *model;  /* the model with the lowest median APE on its charted rows; NULL: none */
    struct rp_top *top; /* the kernels that take the most time, the most first (ntop <= 10) */
    int ntop;
    int nkernels;  /* kernels (shape, precision and parameters apart) with a charted row */
    double time_s; /* the sum of its charted rows' median times [s] */
};

/* A measurement with what the report derives from it: its roofline placement (pt: time,
 * the point's flops, bytes and intensity per level, roofs, % of roof, counters or analytic)
 * and the figures the tables and charts show in their units. */
struct rp_meas {
    const struct db_measurement_row *row;
    int dev;                  /* index into rp_data.devs, -1 when its capture names none */
    struct analysis_point pt; /* analysis_place */
    double gflops;            /* analytic (useful) flops / time [GFLOP/s]; NaN when unknown */
    double point_gflops;      /* the roofline point's height, pt.flop_rate [GFLOP/s] */
    double gbs;               /* pt.dram_rate [GB/s]; NaN without counters */
    double eff_gbs;           /* effective bandwidth, A, B and C once [GB/s]
                                 (analysis_effective_bandwidth); NaN without a GEMM shape */
    double bw_util;           /* memory throughput [GB/s] for the utilisation charts: gld_throughput
                                 when stored, else gbs */
    const char *bw_src;       /* "gld_throughput", "dram counters" or "cost formula" */
    int charted;              /* verified (or not checked) and has a time: drawn in charts */
    int top;                  /* 1..10: its rank among its device's kernels that take the most
                                 time when it is that kernel's longest launch; 0 otherwise */
};

/* One rank of a profiled MPI program: a profile capture with a rank, its launches. */
struct rp_rank {
    const struct db_capture *cap;
    int launches;   /* its measurements (one per launch profiled) */
    double time_ns; /* the sum of their median times [ns] */
};

/* The profile captures with a rank of one program (its command after " -- ", and world size):
 * the ranks of one MPI job, when they were merged into one database. */
struct rp_rank_group {
    char program[256];
    int world_size;       /* -1: unknown */
    struct rp_rank *rank; /* by rank, then capture id */
    int nrank;
    double total_ns, mean_ns, max_ns; /* over its ranks' times */
    int repeated;                     /* some rank appears in more than one capture */
};

struct rp_data {
    const char *db_path;
    struct rp_dev *devs;
    int ndevs;
    struct db_capture *caps;
    int ncaps;     /* the captures reported (all, or those of the selection) ... */
    int ncaps_all; /* ... and kept behind them, caps[ncaps .. ncaps_all) (freed with all) */
    struct db_measurement_row *rows;
    int nrows;            /* the rows reported: tune captures' rows are left out ... */
    int nrows_all;        /* ... and kept behind them with the rows the selection leaves out,
                             rows[nrows .. nrows_all) (freed with all) */
    int n_tune_caps;      /* captures of kind tune with measurements, not selected by --capture */
    int n_tune_rows;      /* their rows, left out */
    int n_unselected;     /* rows the selection leaves out */
    char selection[512];  /* the selection in words ("captures 2, 3; family tsm2"); "" for all */
    struct rp_meas *meas; /* nrows entries, same order (by id) */
    const char **models;  /* distinct prediction.model values, sorted; strings owned by rows */
    int nmodels;
    const char **families; /* distinct measurement.family values, sorted ("" for NULL) */
    int nfamilies;
    int64_t n_predictions;
    const struct rp_meas **cublas; /* charted cuBLAS measurements, by shape then time */
    int ncublas;
    const struct rp_meas **floors; /* charted measurements of move (the floors), likewise */
    int nfloors;
    /* Several GPUs and ranks (load.c; shown by gpus.c and gpucharts.c when there): */
    int *gpus;               /* indices into devs of the devices with ceilings of their own (not
                                of a pair), in id order */
    int ngpus;               /* the ceilings across GPUs are shown when 2 or more */
    const char **peer_names; /* distinct names of the ceilings of a pair of GPUs, sorted */
    int npeer_names;
    int *peer_devs; /* indices into devs of the GPUs of those pairs (either end), in id order */
    int npeer_devs;
    struct rp_rank_group *groups; /* programs profiled as 2 or more ranks */
    int ngroups;
    struct analysis_cmp *cmp;     /* --baseline: the comparison (compare.c); NULL without */
    struct db_energy_span *spans; /* energy spans of the reported captures (profile --energy) */
    int nspans;                   /* ... those, first ... */
    int nspans_all; /* ... then the others, spans[nspans .. nspans_all) (freed with all) */
};

int rp_load(struct db *db, const struct report_select *sel, struct rp_data *out /* OUT */);
void rp_data_release(struct rp_data *d);

/* The measurement's family, "" when NULL. */
const char *rp_family(const struct rp_meas *m);
/* Its prediction of `model`, or NULL. */
const struct db_prediction *rp_prediction(const struct rp_meas *m, const char *model);
/* Its metric `name` (alias or raw name) when stored with a finite value, else NaN. */
double rp_metric(const struct rp_meas *m, const char *name);
/* The compute ceiling of `precision` on the CUDA cores by the ceiling policy
 * (analysis_ceiling), or NULL. */
const struct db_ceiling *rp_peak_ceiling(const struct rp_dev *d, const char *precision);
/* Orders measurements by device, precision, m, n, k (0 = same shape). */
int rp_shape_cmp(const struct rp_meas *a, const struct rp_meas *b);
/* The charted measurements for which keep() is true, sorted by shape then median
 * time (the fastest of a shape first). *out is malloc'd (NULL when *n is 0). */
int rp_select(const struct rp_data *d, int (*keep)(const struct rp_meas *),
              const struct rp_meas ***out /* OUT */, int *n /* OUT */);
/* qsort order of an array of const struct rp_meas *: the longest median time first, then id. */
int rp_cmp_time_desc(const void *a, const void *b);
/* The cuBLAS measurement that judges x (analysis_reference_pick: the faster call of x's run,
 * precision, shape and cache state), or NULL. */
const struct rp_meas *rp_cublas_at(const struct rp_data *d, const struct rp_meas *x);
/* The move measurement under x (analysis_floor_pick: x's run, precision, shape and cache
 * state), or NULL. */
const struct rp_meas *rp_floor_at(const struct rp_data *d, const struct rp_meas *x);
/* A short label for a kernel: its function name (without return type, template arguments,
 * parameter list and namespaces), or a generic wrapper's first template argument's
 * ("cutlass::Kernel2<cutlass_80_simt_sgemm_...>"); at most 28 characters, a longer one cut in the
 * middle. */
void rp_short_kernel_name(const char *in, char *out, size_t len);
/* "torch_mix.py": the program a profile capture ran (its command line after " -- ", skipping
 * interpreters), "?" when unknown. */
void rp_program_name(const char *cmdline, char *out, size_t len);
/* The command line of capture `id`, or NULL. */
const char *rp_capture_cmdline(const struct rp_data *d, int64_t id);
/* Short device label: "#1 NVIDIA H100 80GB HBM3". */
const char *rp_dev_label(const struct rp_data *d, int dev, char *buf, size_t len);
/* The program of a command line: what follows " -- " (what `roofkit profile -- PROGRAM` ran),
 * else the whole line; "" for NULL. Points into cmdline. */
const char *rp_program_of(const char *cmdline);

/* ------------------------------------------------------------------ selection */

/* select.c: the selection's state while rp_load reads (compiled kernel rule, device ids). */
struct rp_sel;
/* Checks sel against the devices and captures of the database (printed, RK_EUSAGE) and
 * compiles it; *out NULL when sel selects everything. */
int rp_sel_open(struct db *db, const struct report_select *sel, const struct db_device *devs,
                int ndevs, const struct db_capture *caps, int ncaps, struct rp_sel **out /* OUT */);
/* Is device devs[i] of rp_sel_open's list reported? */
int rp_sel_device(const struct rp_sel *s, int i);
/* Is the measurement row (stored by capture `cap`, on device index dev of the list, -1: none)
 * reported? */
int rp_sel_row(const struct rp_sel *s, const struct db_measurement_row *row, int dev);
/* Is capture c explicitly selected (--capture)? */
int rp_sel_capture(const struct rp_sel *s, int64_t id);
int rp_sel_has_captures(const struct rp_sel *s);
int rp_sel_has_devices(const struct rp_sel *s);
/* After the rows are chosen: refuses (RK_EUSAGE, printed) a --family none of the database's
 * measurements has, or a --kernel / --family that leaves no row (nsel: rows chosen). */
int rp_sel_check_rows(const struct rp_sel *s, const struct db_measurement_row *rows, int nrows,
                      int nsel);
/* The selection in words into buf ("" for everything). */
void rp_sel_describe(const struct rp_sel *s, char *buf, size_t len);
void rp_sel_free(struct rp_sel *s);

/* overview.c: each device's best model and the kernels that take the most time (rp_dev.top). */
int rp_overview_load(struct rp_data *d);

/* ------------------------------------------------------------------ tables */

enum rp_section {
    RP_SEC_OVERVIEW = 0, /* each device's roofline and the kernels that take the most time */
    RP_SEC_DEVICE,       /* device and ceilings, latency curve */
    RP_SEC_GPUS,         /* several GPUs, hosts and ranks (gpus.c): only when the data is there */
    RP_SEC_KERNELS,      /* measurements per family, GFLOP/s and speedup charts */
    RP_SEC_MODEL,        /* model accuracy, predicted against measured */
    RP_SEC_TSM2,         /* TSM2 threshold and parameters, bandwidth utilisation */
    RP_SEC_ENERGY,       /* energy roofline, energy per launch, spans, TSM2 against cuBLAS
                            (energy.c); only when the database has energy readings */
    RP_SEC_COMPARE,      /* --baseline: capture B against A (compare.c); only with it */
    RP_SEC_COUNT
};

/* One table: column names and cells, each cell with a text for people (HTML,
 * Markdown) and one for machines (CSV). All strings live in `text`. A cell may carry a
 * CSS class and an inline style (HTML only), and a table a list of lines printed above it
 * ("Flags"), in HTML and Markdown. */
struct rp_table {
    char id[96]; /* CSV file stem and HTML anchor: "measurements-tsm2" */
    char title[160];
    char note[2048]; /* one paragraph under the title, may be empty */
    int section;     /* enum rp_section */
    char family[64]; /* RP_SEC_KERNELS: the family it lists; RP_SEC_GPUS: the key its charts
                        carry in rp_chart.family (they follow it); "" otherwise */
    int ncols, nrows;
    int pending;     /* cells of the row being filled */
    size_t *colname; /* ncols offsets into text */
    size_t *cells;   /* 2 * ncols * nrows offsets: [2*(r*ncols+c)] human, [+1] csv */
    size_t capcells;
    size_t *attr; /* 2 per cell, [2*(r*ncols+c)] class, [+1] style: offset + 1 into text, 0 for
                     none; NULL (nattr 0) until a cell has one */
    size_t nattr;
    size_t *rowid; /* per row: offset + 1 into text of its HTML id ("m-12"), 0 for none; NULL
                      until a row has one */
    int nrowid;
    size_t *link; /* per cell: offset + 1 into text of the href its HTML text links to, 0 for
                     none; NULL until a cell has one */
    size_t nlink;
    int compact; /* HTML without the optional end tags and per-cell classes (numeric columns
                    right-aligned by the page's style): the tables that grow with the database */
    char items_title[64]; /* the list above the table: its heading, and its lines */
    size_t *items;
    int nitems;
    struct rp_buf text;
    int oom;
};

void rp_table_init(struct rp_table *t, const char *id, const char *title, int section);
void rp_table_col(struct rp_table *t, const char *name);
/* Cells are appended row by row; a row is complete after ncols cells. */
void rp_cell_str(struct rp_table *t, const char *s);
void rp_cell_num(struct rp_table *t, double v); /* 4 digits / 17 digits */
void rp_cell_int(struct rp_table *t, long long v);
/* A cell whose text for people differs from the CSV's: a marked number, a blank "—". */
void rp_cell_two(struct rp_table *t, const char *human, const char *csv);
/* Gives the cell appended last a CSS class and an inline style (either NULL: none). */
void rp_cell_attr(struct rp_table *t, const char *cls, const char *style);
/* Gives the row being filled (or, between rows, the next one) an HTML id. */
void rp_row_id(struct rp_table *t, const char *id);
/* Makes the cell appended last a link to href (HTML only). */
void rp_cell_link(struct rp_table *t, const char *href);
const char *rp_table_rowid(const struct rp_table *t, int r);       /* NULL when none */
const char *rp_table_link(const struct rp_table *t, int r, int c); /* NULL when none */
/* Appends a line to the list above the table (its heading: items_title). */
void rp_table_item(struct rp_table *t, const char *line);
const char *rp_table_colname(const struct rp_table *t, int c);
const char *rp_table_txt(const struct rp_table *t, int r, int c);
const char *rp_table_csv(const struct rp_table *t, int r, int c);
/* A cell's class and style, NULL when it has none. */
const char *rp_table_cls(const struct rp_table *t, int r, int c);
const char *rp_table_style(const struct rp_table *t, int r, int c);
const char *rp_table_itemtxt(const struct rp_table *t, int i);
void rp_table_release(struct rp_table *t);

/* The tables built so far; oom is sticky. */
struct rp_tabs {
    struct rp_table *t;
    int n, cap;
    int oom;
};
/* A new empty table at the end of ts, or NULL (ts->oom set). */
struct rp_table *rp_tabs_new(struct rp_tabs *ts, const char *id, const char *title, int section);

int rp_build_tables(const struct rp_data *d, struct rp_table **out /* OUT */, int *n /* OUT */);
void rp_free_tables(struct rp_table *t, int n);

/* overview.c: the table of each device's kernels that take the most time (RP_SEC_OVERVIEW,
 * family "d<ID>": printed under that device's roofline). */
void rp_overview_tables(const struct rp_data *d, struct rp_tabs *ts);
/* tables.c: the pipe whose operations a row's point counts: the counters' busiest slot ("none"
 * when they saw no operations), else the precision and pipe it is judged on ("fp64 tensor"). */
const char *rp_pipe_name(const struct rp_meas *x, char *buf, size_t len);
/* "4096×8×4096 t1=128 t2=8" for a measurement with a shape, "torch_mix.py, grid 1024x1x1, block
 * 128x1x1" for a profiled launch. */
void rp_shape_text(const struct rp_data *d, const struct rp_meas *x, char *buf, size_t len);
/* The HTML id of measurement x's table row: "m-<id>" into buf (16 bytes). */
const char *rp_row_anchor(const struct rp_meas *x, char *buf, size_t len);

/* gpus.c: the tables of several GPUs and ranks (RP_SEC_GPUS), each only when its data is
 * there: captures with their origin, ceilings across GPUs, a matrix per ceiling of GPU pairs,
 * kernel time per rank. */
void rp_gpu_tables(const struct rp_data *d, struct rp_tabs *ts);
/* "GPU-0a1b2c3d (host n1)": the first 8 hex digits of the UUID and the device's host. */
const char *rp_gpu_label(const struct rp_data *d, int dev, char *buf, size_t len);
/* Is a smaller value of ceiling c the better one (latency and launch ceilings, a time or
 * cycles)? Else larger is better (bandwidth, compute). */
int rp_lower_is_better(const struct db_ceiling *c);
/* c's value in `unit` (through analysis_unit_si; c's own value when the units are the same
 * string); NaN when it cannot be converted. */
double rp_ceiling_in(const struct db_ceiling *c, const char *unit);
/* The ceiling `name` of device v towards GPU peer_id (a ceiling of a pair; 0: its own
 * ceiling of that name), or NULL. */
const struct db_ceiling *rp_peer_ceiling(const struct rp_dev *v, const char *name, int64_t peer_id);
/* The ceiling `name` from GPU a to GPU b of the pairs (indices into rp_data.peer_devs), or
 * NULL (always for a == b). */
const struct db_ceiling *rp_pair_ceiling(const struct rp_data *d, const char *name, int a, int b);

/* compare.c: the section of --baseline (RP_SEC_COMPARE). rp_compare_load resolves B (the
 * newest done capture of A's kind other than A when base->current is 0) and compares into
 * d->cmp: RK_OK, RK_EUSAGE (a capture missing or of a kind that cannot be compared) or the
 * database's error, printed. rp_compare_release frees it (d->cmp NULL is fine). The table of
 * configurations and of ceilings, and the chart of the ratios, only when d->cmp is set. */
int rp_compare_load(struct db *db, const struct report_baseline *base, struct rp_data *d);
void rp_compare_release(struct rp_data *d);
void rp_compare_tables(const struct rp_data *d, struct rp_tabs *ts);

/* ------------------------------------------------------------ output (out.c) */

/* The report directory and the files written into it. */
struct rp_out {
    char *dir;
    char **files; /* relative paths written, for the marker */
    int nfiles, capfiles;
};

/* Writes dir/rel (rel may contain one level of folder, created if missing) through
 * a temporary file and rename. RK_OK, RK_EIO (printed) or RK_ENOMEM. */
int rp_out_write(struct rp_out *o, const char *rel, const char *data, size_t len);
/* Records a file written by someone else (gnuplot's SVG). */
int rp_out_record(struct rp_out *o, const char *rel);
/* Reads dir/rel whole into *data (NUL-terminated). RK_OK, RK_EIO (not printed). */
int rp_read_file(const char *dir, const char *rel, char **data /* OUT */, size_t *len /* OUT */);
/* "dir/rel<suffix>", malloc'd; NULL when out of memory. */
char *rp_out_path(const char *dir, const char *rel, const char *suffix);
/* Frees the list of files (not dir) and empties it. */
void rp_out_release(struct rp_out *o);

/* ------------------------------------------------------------ point marks */

/*
 * marks.c: what each point of a chart says when hovered (an SVG <title>) and the table row it
 * links to, recorded while the chart's data blocks are written, one mark per data line of a
 * point clause, and joined to the point elements gnuplot drew once it has run (marks.c says
 * why the report does this itself).
 */
struct rp_marks {
    int n, cap;
    int *clause;   /* the plot clause (1-based, as gnuplot numbers its groups) drawing it */
    int64_t *id;   /* the measurement whose table row it links to; 0: no link */
    size_t *title; /* offset into text */
    struct rp_buf text;
    int oom;
};

/* A plot command built clause by clause, counting them as gnuplot numbers its groups. */
struct rp_plot {
    struct rp_buf b;
    int n;
};
/* Starts the next clause (", \
     " after the first); returns its number (1-based). */
int rp_plot_next(struct rp_plot *p);

/* Records a point's title and link (id 0: none) for a clause not yet numbered. */
void rp_mark(struct rp_marks *mk, int64_t id, const char *title);
/* Numbers the marks recorded since index `from` (rp_marks.n before them) with `clause`. */
void rp_marks_bind(struct rp_marks *mk, int from, int clause);
void rp_marks_release(struct rp_marks *mk);

/*
 * Thinning: points of one series closer than RP_THIN_CELL pixels are one point (the first put
 * is drawn, the others are counted in its title), so that a chart of 10,000 measurements stays
 * as it looks and weighs what it shows. rp_thin_put returns -1 when (series, px, py) falls in a
 * new cell (recorded as point i), else the point already there. Capacity: n points.
 */
enum { RP_THIN_CELL = 3 };
struct rp_thin {
    size_t cap;
    int *slot;
    long long *key;
};
int rp_thin_init(struct rp_thin *t, int n);
int rp_thin_put(struct rp_thin *t, int series, double px, double py, int i);
void rp_thin_free(struct rp_thin *t);

/* The title of measurement x's point at `level` (a model level; -1: not a roofline point),
 * with the prediction of `model` (NULL: none) and, when merged > 0, how many measurements
 * share its spot; into b (plain text, escaped when written). */
void rp_point_title(const struct rp_data *d, const struct rp_meas *x, int level, const char *model,
                    int merged, struct rp_buf *b);

/*
 * Appends svg (gnuplot's) to out with each point of a marked clause inside
 * <a href="HREF_PREFIXm-ID"><title>...</title>POINT</a> (or <g> without a link). A clause whose
 * drawn points are not as many as its marks keeps its points untitled and is counted in
 * *bad. Returns the number of points titled.
 */
int rp_marks_wrap(struct rp_buf *out, const char *svg, size_t len, const struct rp_marks *mk,
                  const char *href_prefix, int *bad /* OUT */);

/* ------------------------------------------------------------------ charts */

struct rp_chart {
    char name[96]; /* file stem in plots/: roofline-d1 */
    char title[200];
    char caption[900];
    int section;            /* enum rp_section */
    char family[64];        /* RP_SEC_KERNELS: the family it belongs to; RP_SEC_OVERVIEW: "d<ID>" */
    struct rp_marks *marks; /* its points' titles and links; NULL when none (owned) */
};

/* The charts written so far, and plots/all.gp that loads them; rc is sticky. */
struct rp_charts {
    struct rp_chart *c;
    int n, cap;
    struct rp_buf all; /* all.gp */
    int rc;
};

/* gnuplot.c: script and data writing. */
/* Appends s as a gnuplot single-quoted string. */
void rp_gp_str(struct rp_buf *b, const char *s);
/* A data value: "?" for a missing one. */
void rp_dat_num(struct rp_buf *b, double v);
/* A number for a script in buf (32 bytes): gnuplot's NaN for a missing one. */
const char *rp_gpv(char *buf, double v);
/* Replaces every character but a-z, 0-9, '-' and '_' by '_' (a file stem). */
void rp_file_safe(char *s);
/* The head of chart c's script: height of the SVG in pixels, gnuplot's `set key` arguments. */
void rp_gp_head_sized(struct rp_buf *s, const struct rp_chart *c, const char *what, int height,
                      const char *key);
/* The same, width pixels wide. */
void rp_gp_head_wh(struct rp_buf *s, const struct rp_chart *c, const char *what, int width,
                   int height, const char *key);
/* The same at 600 pixels with the key outside on the right. */
void rp_gp_head(struct rp_buf *s, const struct rp_chart *c, const char *what);
/* Writes chart c's script and data to plots/ and adds it to cs (nothing on cs->rc != RK_OK). */
void rp_chart_add(struct rp_charts *cs, struct rp_out *o, const struct rp_chart *c,
                  struct rp_buf *script, struct rp_buf *data);
/* roofline.c: the overview's roofline of device index dev: roofline-d<ID>, or one per
 * precision (roofline-d<ID>-fp64, ...) when one chart would hold more than 8 ceilings. */
void rp_roofline_charts(const struct rp_data *d, int dev, struct rp_charts *cs, struct rp_out *o);
/* gpucharts.c: the charts of several GPUs and ranks, each only when its data is there: every
 * GPU's ceilings on one roofline, a heat map per ceiling of GPU pairs, kernel time per rank. */
void rp_gpu_charts(const struct rp_data *d, struct rp_charts *cs, struct rp_out *o);

/* energy.c: the energy section (RP_SEC_ENERGY): its tables when some measurement has an energy
 * reading or a capture has energy spans, and each device's energy roofline when it has energy
 * ceilings. */
void rp_energy_tables(const struct rp_data *d, struct rp_tabs *ts);
void rp_energy_charts(const struct rp_data *d, struct rp_charts *cs, struct rp_out *o);

/* compare.c: the chart of --baseline's ratios (nothing without d->cmp). */
void rp_compare_charts(const struct rp_data *d, struct rp_charts *cs, struct rp_out *o);

/* Writes plots/<name>.gp and .dat for every chart and plots/all.gp. */
int rp_build_charts(const struct rp_data *d, struct rp_out *o, struct rp_chart **out /* OUT */,
                    int *n /* OUT */);
void rp_free_charts(struct rp_chart *c, int n);
/* After gnuplot: rewrites each drawn plots/<name>.svg with its points titled and linked to
 * ../index.html (marks.c). RK_OK, RK_EIO or RK_ENOMEM (printed). */
int rp_chart_marks(struct rp_out *o, const struct rp_chart *c, int n);
/*
 * Runs gnuplot once on plots/all.gp, in plots/. gnuplot: the program (NULL: PATH).
 * RK_OK, RK_ENOTOOL (not installed: printed), RK_EFAIL (failed: printed, log in
 * plots/gnuplot.log).
 */
int rp_run_gnuplot(struct rp_out *o, const char *gnuplot);

/* ----------------------------------------------------------------- printers */

struct rp_page {
    const struct rp_data *d;
    const struct report_opts *opts;
    const struct rp_table *tables;
    int ntables;
    const struct rp_chart *charts;
    int ncharts;
    int charts_drawn;       /* 1 when the SVG files exist */
    const char *charts_why; /* why not, when they do not */
    const char *generated;  /* UTC time text */
};

int rp_write_html(struct rp_out *o, const struct rp_page *pg);
int rp_write_md(struct rp_out *o, const struct rp_page *pg);
int rp_write_csv(struct rp_out *o, const struct rp_page *pg);

#endif /* RK_REPORT_INTERNAL_H */
