/*
 * cli.h - what the subcommand files of cli/ share: the context main() prepares,
 * the command table, and the entry point of each subcommand.
 *
 * One file per subcommand (cli/probe.c holds cmd_probe()), listed in the table of
 * cli/commands.c with the flags that tell main() what to set up first (git's
 * builtin/ and git.c). Only cli/ calls exit(); a cmd_* returns an enum rk_err,
 * which becomes the exit code. Adding a subcommand: see cli/README.md.
 */
#ifndef RK_CLI_H
#define RK_CLI_H

#include "launch.h"

#include <stdint.h>
#include <stdio.h>

struct db;

/* Set up by main() according to the command's flags before cmd_*() runs. */
struct rk_ctx {
    const char *db_path;     /* --db with its placeholders expanded, default "./roofkit.db" */
    int device;              /* the one GPU of this process: --device N, else the GPU of the
                                launcher's local rank, else 0 */
    const char *device_spec; /* --device as given ("all", "0,1", a UUID), or NULL */
    int serial;              /* --serial: several GPUs one after another */
    int quiet;               /* --quiet */
    struct db *db;           /* open when the command has NEED_DB, else NULL */
    const char *cmdline;     /* the whole command line, for capture.cmdline */
    const char *argv0;       /* how roofkit was invoked (to find its injection library) */
    struct rk_launch launch; /* the launcher's rank (mpirun, srun), or none */
    char host[256];          /* this host's name */
    int gpus_concurrent;     /* other GPUs a parent roofkit measures at the same time; -1 unknown */
    int per_gpu_child;       /* 1 in a roofkit started by another for one GPU of a list */
    /* After the per-GPU runs of a command with RK_AFTER_GPUS: the GPUs they ran on. */
    const int *gpus;
    int ngpus;
};

enum rk_cmd_flags {
    RK_NEED_DB = 1 << 0,    /* open (creating if missing) ctx->db read-write */
    RK_NEED_DB_RO = 1 << 1, /* open an existing database without creating or writing it */
    /* --device with several GPUs runs one roofkit per GPU (per_gpu.c), all at once unless
     * --serial, each `roofkit CMD --device N` with the same arguments and database. */
    RK_PER_GPU = 1 << 2,
    /* ... then the command runs once more in this process with ctx->gpus set (the work of
     * the GPUs together: peer probes, the model, the report). */
    RK_AFTER_GPUS = 1 << 3,
};

/*
 * per_gpu.c: runs `roofkit [--quiet] --db DB --device G ARGS...` (ARGS: argv[0..argc-1], the
 * command and its arguments) once for each of the n GPUs, all at once or (serial) one after
 * another, each line of their output prefixed with its GPU; waits for them and forwards SIGINT
 * and SIGTERM. Returns RK_OK when every one succeeded, else the first failure's exit code.
 */
int rk_run_per_gpu(struct rk_ctx *ctx, int argc, char **argv, const int *gpus, int n);
/* The environment variable a parent roofkit sets for the roofkit it starts per GPU: how many
 * other GPUs it measures at the same time. */
#define RK_PER_GPU_ENV "ROOFKIT_PER_GPU_CONCURRENT"

struct rk_cmd {
    const char *name;
    int (*fn)(int argc, char **argv, struct rk_ctx *ctx);
    int flags;
    const char *summary; /* one line for `roofkit --help` */
    const char *usage;   /* full text for `roofkit help NAME` and `NAME --help` */
};

extern const struct rk_cmd rk_commands[];
const struct rk_cmd *rk_find_command(const char *name);

/*
 * Subcommand helpers for their own option parsing: argv[0] is the subcommand's
 * name. rk_wants_help() is true when argv holds -h or --help (before any "--");
 * rk_print_usage() prints cmd->usage on stdout.
 */
int rk_wants_help(int argc, char **argv);
void rk_print_usage(const struct rk_cmd *cmd, FILE *to);

/*
 * Opens ctx->db if it is not open yet: rw != 0 creates the file if missing and may
 * write; rw == 0 opens an existing roofkit database read-only. Returns RK_OK or
 * RK_EDB (message already printed).
 */
int rk_ctx_open_db(struct rk_ctx *ctx, int rw);
/* Where the captures begun next run (host, launcher rank, GPUs measured at once: ctx), with
 * gpus_busy other GPUs of the host busy (-1: unknown); ctx->db must be open. */
int rk_ctx_set_origin(struct rk_ctx *ctx, int gpus_busy);

/*
 * getopt_long for subcommands, with roofkit's messages: argv[0] is the
 * subcommand's name, optstring must start with ':'. Returns the option's value as
 * getopt_long does, -1 at the end of options, or -2 after printing "unknown
 * option" / "option needs a value" (the caller returns RK_EUSAGE).
 */
struct option;
int rk_getopt(int argc, char **argv, const char *optstring, const struct option *longopts);
/* Resets rk_getopt for a new argv. */
void rk_getopt_reset(void);
/* Parses a number option: prints "option '--name' needs ..." and returns RK_EUSAGE on error. */
int rk_opt_double(const char *name, const char *val, double *out /* OUT */);
int rk_opt_long(const char *name, const char *val, long min, long max, long *out /* OUT */);
/* A percentage from 0 to 1000, "5%" or "5", as a fraction (0.05) into *out; RK_EUSAGE printed. */
int rk_opt_percent(const char *name, const char *val, double *out /* OUT */);

/*
 * Hardware counters of `roofkit run` (cli/run_counters.c): a CUPTI collection session around
 * each untimed extra launch of a measured configuration (kernels_session_launch; one launch per
 * pass group), their values turned into the metric rows stored with the measurement. Never part
 * of the timed repetitions.
 */
struct rk_counters;
struct db_metric;
/*
 * rk_counters_new: metrics is NULL or "default" (the default set), "none" (no counters: *out is
 * then NULL), or a comma-separated list of aliases and raw CUPTI names, checked with CUPTI's
 * host API against the chip of CUDA device `device` (GH100 without one; unknown names dropped
 * with a warning). Needs no GPU. Returns RK_OK, RK_EUSAGE, RK_ECUPTI or RK_ENOMEM (printed).
 */
int rk_counters_new(const char *metrics, int device, struct rk_counters **out /* OUT */);
void rk_counters_free(struct rk_counters *c); /* NULL is fine */
/* 1 while counters are wanted and have not been given up on (no permission, no support). */
int rk_counters_active(const struct rk_counters *c);
/*
 * rk_counters_groups: how many untimed launches each configuration takes: one per single-pass
 * group of the metrics (collect_plan_groups on the chip of the device; computed on the first
 * call, which needs the GPU), each collected with nothing replayed; 1 when the metrics fit one
 * pass or cannot be grouped (kernel replay then replays the passes inside the one launch).
 * Without a call, 1. rk_counters_set_group chooses the group the next begin/end pair collects.
 */
int rk_counters_groups(struct rk_counters *c);
void rk_counters_set_group(struct rk_counters *c, int group);
/* The kernels_hook pair: arg is the struct rk_counters. begin starts a session, end stops it;
 * the pair of the last group joins every group's values. */
int rk_counters_begin(void *arg);
int rk_counters_end(void *arg);
/*
 * The metric rows of the last group's begin/end pair (*n = 0 when none were collected), valid
 * until the next begin of group 0; for db_insert_measurement.
 */
void rk_counters_rows(const struct rk_counters *c, const struct db_metric **rows /* OUT */,
                      int *n /* OUT */);
/*
 * rk_counters_fill_launch: a library call (cuBLAS) has no launch configuration of its own in
 * the harness (m's grid is 0); the counter launches just recorded it. Fills m's grid, block,
 * registers and shared memory from the recorded launch that ran longest (gpu__time_duration;
 * the GEMM rather than a split-k reduction after it), or, when no duration is known, from the
 * one with the most threads, and returns 1; 0 (m untouched) when m has a grid already or
 * nothing was recorded.
 */
struct db_measurement;
int rk_counters_fill_launch(const struct rk_counters *c, struct db_measurement *m);
/* At the end of a run: keeps in the capture's note how many of the `measured` stored
 * measurements have counters, and why the others have none. */
void rk_counters_note(const struct rk_counters *c, struct db *db, int64_t capture, long measured);
/* RK_OK, or RK_ECUPTI (one error line) when metrics were named on the command line and some of
 * the `measured` stored measurements have none. */
int rk_counters_status(const struct rk_counters *c, long measured);

/*
 * Energy of `roofkit run` (cli/run_energy.c): after a configuration is timed and its counters
 * read, it runs once more as a batch of back-to-back launches (kernels_session_repeat) sized
 * for about 0.8 s, with probes/'s meter reading NVML's energy counter around it; the
 * reading is stored with the measurement (db.h: energy_j, power_w, sm_clock_mhz, temp_c,
 * energy_launches).
 */
struct rk_energy;
struct kernels_session;
struct kernels_kernel;
/* Opens the meter of the GPU at pci_bus_id; when there is no energy to read (no NVML, no
 * counter, no permission) says so once (a warning) and *out is NULL: nothing is stored then.
 * RK_OK or RK_ENOMEM. */
int rk_energy_new(const char *pci_bus_id, struct rk_energy **out /* OUT */);
void rk_energy_free(struct rk_energy *e); /* NULL is fine */
/* Reads the energy of kernel k with its resolved params (time_ns a launch, from the timing)
 * into m's energy fields; with e NULL leaves them as no reading. RK_OK (also when the counter
 * did not move: m then has no reading, and a warning says why), or the launch's error. */
int rk_energy_read(struct rk_energy *e, struct kernels_session *s, const struct kernels_kernel *k,
                   const long *params, double time_ns, struct db_measurement *m);
/* One line: the readings taken and the time they added (nothing with e NULL). */
void rk_energy_summary(const struct rk_energy *e);

/*
 * cli/format.c: the one table writer. What a command prints as data is a table of named,
 * typed columns, written as `--format text` (aligned, for a person), `csv` (RFC 4180: CRLF,
 * a header line always, fields quoted when they hold , " CR or LF) or `json` (an array of
 * objects, one a line; a missing value, NaN and the infinities as null). Reals in CSV and
 * JSON are the shortest text that reads back as the same double; the precision is for text.
 *
 *   struct rk_table *t;
 *   static const struct rk_col cols[] = {{"name", RK_COL_TEXT, 0}, {"GB/s", RK_COL_REAL, 1}};
 *   if ((rc = rk_table_new(fmt, stdout, cols, 2, &t)) != RK_OK) return rc;
 *   for (...) { rk_table_row(t); rk_table_str(t, name); rk_table_real(t, gbs); }
 *   return rk_table_end(t);   (writes what is left, frees t)
 *
 * CSV and JSON rows go out as each row is complete; text keeps every row until
 * rk_table_end to align the columns.
 */
enum rk_format { RK_FMT_TEXT, RK_FMT_CSV, RK_FMT_JSON };
/* "text", "csv" or "json" -> *out: RK_OK, else RK_EUSAGE printed (an option '--format' error). */
int rk_parse_format(const char *s, enum rk_format *out /* OUT */);
const char *rk_format_name(enum rk_format f); /* "text", "csv", "json" */

enum rk_col_kind {
    RK_COL_TEXT, /* left-aligned in text */
    RK_COL_INT,  /* right-aligned */
    RK_COL_REAL, /* right-aligned; text shows prec digits after the point (prec < 0: %g) */
};
struct rk_col {
    const char *name; /* header, CSV column and JSON key; copied */
    enum rk_col_kind kind;
    int prec;
};
struct rk_table;
/* A table of ncols columns (cols copied) written to `to` in fmt: RK_OK or RK_ENOMEM printed. */
int rk_table_new(enum rk_format fmt, FILE *to, const struct rk_col *cols, int ncols,
                 struct rk_table **out /* OUT */);
/* Begins a row (ending the one before: CSV/JSON write it). RK_OK, RK_ENOMEM or RK_EIO
 * printed. Its cells follow in column order; cells not given are missing. */
int rk_table_row(struct rk_table *t);
/* The next cell of the row: a string (NULL: missing; JSON string), a whole number, a real
 * (NaN or infinite: missing), or missing. A cell's kind decides its JSON type; the column's
 * kind only its alignment. Memory failures surface in rk_table_row / rk_table_end. */
void rk_table_str(struct rk_table *t, const char *s);
void rk_table_int(struct rk_table *t, int64_t v);
void rk_table_real(struct rk_table *t, double v);
void rk_table_null(struct rk_table *t);
/* Writes what is left (text: all of it; CSV: the header of an empty table; JSON: the closing
 * bracket), flushes and frees t. RK_OK, RK_ENOMEM or RK_EIO printed. */
int rk_table_end(struct rk_table *t);
/* Frees t without writing more (after an error). NULL is fine. */
void rk_table_free(struct rk_table *t);
/* The end of a table whatever happened: rk_table_end when rc is RK_OK (t NULL: nothing to
 * write), else rk_table_free; returns rc, or what rk_table_end returns. */
int rk_table_done(struct rk_table *t, int rc);
/*
 * Takes `--format V` / `--format=V` out of a subcommand's argv (argv[0] its name; nothing
 * after "--"), the last one winning: *fmt is RK_FMT_TEXT without one. RK_OK, or RK_EUSAGE
 * printed for a missing or unknown value. For a command whose own parser does not know the
 * option (list's subjects, probe, run, model).
 */
int rk_take_format(int *argc, char **argv, enum rk_format *fmt /* OUT */);

/* cli/shared.c: what several subcommands need alike. */
/* A file or folder name with its placeholders (%h, %p, %r, %q{VAR}, %%: launch.h's
 * rk_expand_name) expanded for this process: *out malloc'd, or RK_EUSAGE / RK_ENOMEM printed. */
int rk_ctx_expand(const struct rk_ctx *ctx, const char *pattern, char **out /* OUT */);
struct rk_gpu;
struct db_device;
struct db_ceiling;
/* The database row of a session's GPU, probes/ or kernels/ (pointers into d and host, not
 * copies). */
void rk_device_row(const struct rk_gpu *d, const char *host, struct db_device *dv);

/*
 * rk_session_ceilings (cli/tune.c): gives session s the measured ceilings of its device from
 * ctx's open database (the TSM2 model's GPU of each precision, analysis_tsm2_gpu), for the
 * entry point tsm2's choice. Returns the number of precisions set: 0 when the database has
 * no probe capture of the device (the entry point then uses datasheet figures).
 */
struct kernels_session;
int rk_session_ceilings(struct rk_ctx *ctx, struct kernels_session *s);
/* Stores that GPU (with this host's name) in ctx->db: RK_OK with *device_id, or the database's
 * error (printed). */
int rk_store_device(struct rk_ctx *ctx, const struct rk_gpu *d, int64_t *device_id /* OUT */);
/* Stores that GPU (with this host's name) in ctx->db and begins a capture of `kind` on it:
 * RK_OK with *capture, or the database's error (printed). */
int rk_begin_device_capture(struct rk_ctx *ctx, const struct rk_gpu *d, int kind,
                            int64_t *capture /* OUT */);
struct kernels_kernel;
struct kernels_shape;
struct kernels_result;
struct model_cost;
struct db_measurement;
/* The measurement row of one verified and timed configuration (pointers into k and r);
 * cost NULL: flops and bytes unknown (NaN). */
void rk_measurement_row(const struct kernels_kernel *k, int prec, const struct kernels_shape *sh,
                        const struct kernels_result *r, const struct model_cost *cost,
                        struct db_measurement *m);
/*
 * cli/help.c: the help of `roofkit --help` and, from the same texts and rk_commands[], the man
 * page (`roofkit --help-man`, roff) and the bash completion (`roofkit --help-completion`) that
 * the build generates. RK_OK or RK_EIO printed.
 */
void rk_print_main_help(FILE *to);
int rk_write_man(FILE *to);
int rk_write_completion(FILE *to);
/* cli/version.c: `roofkit --version`, the versions built with and run with. RK_OK or RK_EIO. */
int rk_print_version(FILE *to);

int cmd_probe(int argc, char **argv, struct rk_ctx *ctx);
int cmd_run(int argc, char **argv, struct rk_ctx *ctx);
int cmd_profile(int argc, char **argv, struct rk_ctx *ctx);
int cmd_model(int argc, char **argv, struct rk_ctx *ctx);
/* `roofkit model explain` (cli/model_explain.c): needs no GPU and no database. */
int cmd_model_explain(int argc, char **argv);
int cmd_report(int argc, char **argv, struct rk_ctx *ctx);
int cmd_tune(int argc, char **argv, struct rk_ctx *ctx);
int cmd_list(int argc, char **argv, struct rk_ctx *ctx);
int cmd_export(int argc, char **argv, struct rk_ctx *ctx);
int cmd_all(int argc, char **argv, struct rk_ctx *ctx);
int cmd_merge(int argc, char **argv, struct rk_ctx *ctx);
int cmd_diff(int argc, char **argv, struct rk_ctx *ctx);

#endif /* RK_CLI_H */
