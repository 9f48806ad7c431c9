/*
 * db.h - roofkit's storage: one SQLite file holding devices, captures, measured
 * ceilings, the latency curve, kernel measurements with their counters, and model
 * predictions. This header is the whole public interface of db/; no other module
 * speaks SQL.
 *
 * Invariants:
 *   - The file is marked as roofkit's with PRAGMA application_id (DB_APPLICATION_ID)
 *     and carries its schema version in PRAGMA user_version. A build of roofkit
 *     migrates older schemas forward, one transaction per step, and refuses newer
 *     ones.
 *   - db_open() validates a file before anything writes to it. A file it refuses
 *     (not SQLite, not roofkit's, truncated or corrupt, newer schema, read-only when
 *     writing was asked for) is left byte-for-byte unchanged.
 *   - Every row is written inside a transaction together with everything it needs:
 *     a measurement and its metrics commit together or not at all, a latency curve
 *     commits whole. An interrupted run leaves complete rows and a capture marked
 *     `interrupted`.
 *   - WAL journal, foreign keys on, synchronous=NORMAL and a busy timeout, so that
 *     two roofkit processes can write one file; each write transaction starts with
 *     BEGIN IMMEDIATE, so a writer waits for the lock instead of failing on upgrade.
 *
 * Errors: every function returns an enum rk_err (common.h). On failure the message
 * has been printed with rk_error(), naming the file and SQLite's message:
 *   RK_OK      success
 *   RK_EDB     SQLite failed, the file was refused, or it stayed locked past the
 *              busy timeout ("database 'x' is locked by another process; ...")
 *   RK_ENODATA (queries that look for one row only) nothing matched; NOT printed,
 *              the caller says what the user should do
 *   RK_EUSAGE  a bad argument that came from the user (unknown table name in
 *              db_dump_table)
 *   RK_ENOMEM  out of host memory
 * Misuse (a write on a DB_RO connection, db_begin inside a transaction, a bad enum
 * value) is a programmer error: RK_BUG aborts.
 *
 * Strings: the structs passed to inserts are borrowed for the duration of the
 * call. The structs that queries return own their strings; release them with the
 * matching db_free_* / db_*_release function, which frees the strings too.
 *
 * Numbers: a double field that is NaN is stored as SQL NULL and read back as NaN
 * ("unknown"); an int64 id of 0 means "none" (stored as NULL).
 *
 * Units: clocks in MHz, sizes in bytes, times in nanoseconds, timestamps are UTC
 * text "YYYY-MM-DDTHH:MM:SSZ".
 */
#ifndef RK_DB_H
#define RK_DB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PRAGMA application_id of a roofkit database: 'Roof'. */
#define DB_APPLICATION_ID 0x526f6f66
/* Busy timeout used by db_open, in milliseconds (db_set_busy_timeout changes it). */
#define DB_BUSY_TIMEOUT_MS 5000

struct db; /* opaque: one open database file (one SQLite connection) */

enum db_mode {
    DB_RO = 0, /* existing roofkit database only; never creates, migrates or writes */
    DB_RW = 1, /* creates the file when missing, migrates an older schema */
};

/* The schema version this build writes (the highest PRAGMA user_version it knows). */
int db_schema_version(void);

/*
 * Opens (DB_RW: creating if missing) the roofkit database at `path`.
 * Refuses, with one message and RK_EDB, leaving the file unchanged:
 *   - DB_RO and the file does not exist (nothing is created);
 *   - a file that is not SQLite ("'x' is not a SQLite database");
 *   - an SQLite file of another application (application_id not roofkit's, or 0
 *     with tables in it); an SQLite file with no tables at all is initialised;
 *   - a truncated or corrupt file (header checks; PRAGMA quick_check on files up
 *     to 64 MiB, db_check() reads bigger ones whole);
 *   - a schema newer than db_schema_version() ("written by a newer roofkit");
 *   - DB_RW on a file that cannot be written;
 *   - DB_RO on an empty file or an older schema (upgrading needs a write: open it
 *     once with DB_RW).
 * A file left half-created by a failed DB_RW open is completed by the next one.
 * DB_RO on a WAL file in a writable folder may create its -wal/-shm side files
 * (SQLite needs them to read) and removes them on close.
 * On success *out owns the connection; close it with db_close().
 */
int db_open(const char *path, enum db_mode mode, struct db **out /* OUT */);

/* Closes the connection (rolling back an open transaction). NULL is a no-op. */
void db_close(struct db *db);

/* The path given to db_open (owned by db; valid until db_close). */
const char *db_path(const struct db *db);

/* Changes the busy timeout (milliseconds, >= 0). RK_OK or RK_EDB. */
int db_set_busy_timeout(struct db *db, int ms);

/*
 * Runs PRAGMA integrity_check (slow on big files: reads every page). RK_OK, or
 * RK_EDB after printing the first problem found.
 */
int db_check(struct db *db);

/*
 * Explicit transactions, to group several inserts into one unit (all ceilings of a
 * probe). db_begin starts BEGIN IMMEDIATE (waiting up to the busy timeout for other
 * writers); inserts called inside it join it (as savepoints). Transactions do not
 * nest: db_begin inside a transaction is a programmer error (RK_BUG).
 * db_rollback is safe to call with no transaction open (it does nothing).
 */
int db_begin(struct db *db);
int db_commit(struct db *db);
int db_rollback(struct db *db);

/* ---------------------------------------------------------------- devices */

/* One GPU. Strings may be NULL unless marked NOT NULL; 0 = unknown for numbers. */
struct db_device {
    int64_t id;             /* set by queries; ignored by db_device_upsert */
    const char *name;       /* NOT NULL: "NVIDIA H100 80GB HBM3" */
    const char *uuid;       /* NOT NULL, unique: "GPU-xxxxxxxx-..." */
    const char *pci_bus_id; /* "0000:19:00.0" */
    int cc_major, cc_minor;
    int sm_count;
    int sm_clock_mhz;  /* peak SM clock, MHz */
    int mem_clock_mhz; /* peak memory clock, MHz */
    int bus_width_bits;
    int64_t l2_bytes;
    int64_t memory_bytes; /* global memory */
    int smem_per_sm_bytes;
    int smem_per_block_optin_bytes;
    int regs_per_sm;
    int max_threads_per_sm;
    int driver_version, runtime_version; /* CUDA encoding: 13000 = 13.0 */
    const char *host;                    /* host name */
    const char *first_seen, *last_seen;  /* set by queries */
};

/*
 * Inserts the device, or updates every field of the row with the same uuid.
 * *id (may be NULL) receives the row's id. RK_OK or RK_EDB.
 */
int db_device_upsert(struct db *db, const struct db_device *dev, int64_t *id /* OUT */);

/* Reads device `id` into *out (release with db_device_release). RK_ENODATA if absent. */
int db_get_device(struct db *db, int64_t id, struct db_device *out /* OUT */);
void db_device_release(struct db_device *dev);

/* All devices, by id. *out is malloc'd (NULL when *n == 0); free with db_free_devices. */
int db_list_devices(struct db *db, struct db_device **out /* OUT */, int *n /* OUT */);
void db_free_devices(struct db_device *devs, int n);

/* --------------------------------------------------------------- captures */

/* What a capture was: one roofkit invocation that stored something. */
enum db_capture_kind {
    DB_CAPTURE_ANY = 0, /* queries only: any kind */
    DB_CAPTURE_PROBE,
    DB_CAPTURE_RUN,
    DB_CAPTURE_PROFILE,
    DB_CAPTURE_MODEL,
    DB_CAPTURE_TUNE,
    DB_CAPTURE_IMPORT,
};

enum db_status {
    DB_RUNNING = 0, /* begun, not ended: in progress, or the process died */
    DB_DONE,
    DB_FAILED,
    DB_INTERRUPTED, /* stopped by SIGINT/SIGTERM: its rows are complete */
};

/* "probe", "run", ...; "any" for DB_CAPTURE_ANY; "?" for bad values. */
const char *db_capture_kind_name(enum db_capture_kind kind);
/* "running", "done", "failed", "interrupted"; "?" for bad values. */
const char *db_status_name(enum db_status status);

/*
 * Where this connection's captures run, stored with every capture db_capture_begin starts
 * afterwards (the strings are copied). Set once by the command before it stores anything;
 * without it a capture's host is NULL and the numbers unknown.
 */
struct db_origin {
    const char *host;                 /* the host name, or NULL */
    int rank, local_rank, world_size; /* the launcher's (mpirun, srun); -1: not under one */
    int gpus_concurrent; /* other GPUs this roofkit measured at the same time; -1: unknown */
    int gpus_busy;       /* other GPUs of the host busy with other work at the start; -1: unknown */
};
/* RK_OK, or RK_ENOMEM (printed). */
int db_set_origin(struct db *db, const struct db_origin *o);

/*
 * Starts a capture with status `running`, a fresh random uid and the connection's origin
 * (db_set_origin). device_id 0 = no device (model, import). cmdline and tool_version may be
 * NULL. *id receives the capture's id.
 */
int db_capture_begin(struct db *db, int64_t device_id, enum db_capture_kind kind,
                     const char *cmdline, const char *tool_version, int64_t *id /* OUT */);

/* Sets the capture's status and end time. */
int db_capture_end(struct db *db, int64_t id, enum db_status status);

/*
 * For an interrupted run: rolls back a transaction left open on this connection
 * (nothing half-written stays), then marks the capture `interrupted` with its end
 * time. Rows committed before stay.
 */
int db_capture_mark_interrupted(struct db *db, int64_t id);

/* Sets (replaces) the capture's free-text note; NULL clears it. */
int db_capture_note(struct db *db, int64_t id, const char *note);

/* Sets the capture's device (a profile capture learns it from its launches). */
int db_capture_set_device(struct db *db, int64_t id, int64_t device_id);

/* Names device_id as the GPU of every measurement of the capture whose params name GPU `uuid`
 * ("uuid" key, as profiled launches store it): a program that ran on several GPUs. */
int db_capture_set_launch_device(struct db *db, int64_t capture_id, const char *uuid,
                                 int64_t device_id);

/*
 * The distinct GPU UUIDs ("GPU-...") the measurements of a capture name in their params
 * ("uuid", written by the injection library for each profiled launch), sorted. *out is a
 * malloc'd array of malloc'd strings (free with rk_free_name_list); *n may be 0.
 */
int db_capture_gpu_uuids(struct db *db, int64_t capture_id, char ***out /* OUT */,
                         int *n /* OUT */);

/* A capture as listed by `roofkit list captures`. */
struct db_capture {
    int64_t id;
    int64_t device_id;       /* 0 = none */
    const char *device_name; /* NULL when no device */
    enum db_capture_kind kind;
    enum db_status status;
    const char *cmdline, *tool_version, *note;
    const char *started_at, *ended_at; /* ended_at NULL while running */
    int64_t n_ceilings, n_latency_points, n_measurements;
    int64_t n_predictions; /* predictions this capture produced (a model capture) */
    const char *uid;  /* 32 hex digits, the same in every database the capture is merged into */
    const char *host; /* NULL: unknown */
    int rank, local_rank, world_size; /* -1: not under a launcher (or unknown) */
    int gpus_concurrent, gpus_busy;   /* as in struct db_origin; -1: unknown */
};

/* All captures, by id. Free with db_free_captures. */
int db_list_captures(struct db *db, struct db_capture **out /* OUT */, int *n /* OUT */);
void db_free_captures(struct db_capture *caps, int n);
/* One capture (release with db_capture_release). RK_ENODATA if absent. */
int db_get_capture(struct db *db, int64_t id, struct db_capture *out /* OUT */);
void db_capture_release(struct db_capture *cap);

/*
 * The newest capture (highest id) of `kind` (DB_CAPTURE_ANY: any kind) whose status
 * is `done` or `interrupted` (complete rows), and, when device_id != 0, of that
 * device. RK_ENODATA (not printed) when there is none.
 */
int db_latest_capture(struct db *db, enum db_capture_kind kind, int64_t device_id,
                      int64_t *id /* OUT */);

/* --------------------------------------------------------------- ceilings */

/* One measured ceiling (probes/ fills them). NaN doubles are stored as NULL. */
struct db_ceiling {
    int64_t id, capture_id; /* set by queries; ignored by db_insert_ceiling */
    const char *name;       /* NOT NULL: "bw_dram_read", "peak_fp64_fma" */
    const char *kind;       /* NOT NULL: "bandwidth", "compute", "latency", "launch", "energy" */
    const char *level;      /* "dram", "l2", "l1", "shared", "host", "register" or NULL */
    const char *precision;  /* "fp32", "bf16", ... or NULL */
    double value;           /* the ceiling, in `unit` */
    const char *unit;       /* NOT NULL: "GB/s", "TFLOP/s", "cycles", "ns", "us"; energy:
                             * "pJ/FLOP", "pJ/B", "W" (schema 5; params: the fit's residuals) */
    const char *method;     /* how it was measured, in words */
    const char *params;     /* JSON object text, or NULL */
    int reps;
    double min, median, max;
    double theoretical; /* datasheet formula at the clock seen; NaN if none */
    double sm_clock_mhz, power_w, temp_c;
    int64_t peer_device_id; /* a ceiling of a pair of GPUs: the other one; 0 = none */
};

/* Inserts one ceiling of capture `capture_id`; *id may be NULL. */
int db_insert_ceiling(struct db *db, int64_t capture_id, const struct db_ceiling *c,
                      int64_t *id /* OUT */);

/*
 * Ceilings, by id:
 *   capture_id != 0: the rows of that capture;
 *   else device_id != 0: for each ceiling name (and peer), the row from the newest `done` or
 *     `interrupted` capture of that device that measured it (the device's current
 *     ceilings, even when probes were run in several invocations);
 *   else every row.
 * Free with db_free_ceilings.
 */
int db_query_ceilings(struct db *db, int64_t device_id, int64_t capture_id,
                      struct db_ceiling **out /* OUT */, int *n /* OUT */);
void db_free_ceilings(struct db_ceiling *c, int n);

/* ----------------------------------------------------------- latency curve */

struct db_latency_point {
    int64_t footprint_bytes;
    int64_t stride_bytes;
    double cycles; /* per dependent load */
    double ns;     /* per dependent load */
};

/* Inserts the n points of one curve in one transaction (all or none). */
int db_insert_latency_points(struct db *db, int64_t capture_id, const struct db_latency_point *p,
                             int n);

/*
 * The curve, by footprint then stride: capture_id != 0: that capture's points;
 * else device_id != 0: the points of the newest done/interrupted capture of that
 * device that has any; else every point. *out is malloc'd; free() it.
 */
int db_query_latency_points(struct db *db, int64_t device_id, int64_t capture_id,
                            struct db_latency_point **out /* OUT */, int *n /* OUT */);

/* ----------------------------------------------------- measurements, metrics */

/* One kernel launch configuration, timed (suite) or profiled (profile). */
struct db_measurement {
    int64_t id, capture_id; /* set by queries; ignored by db_insert_measurement */
    const char *kernel;     /* NOT NULL: "tsm2_v3", or the profiled kernel's name */
    const char *family;     /* "tsm2", "stmvb", ... or NULL */
    const char *precision;  /* "fp32", "fp64" or NULL */
    int64_t m, n, k;        /* 0 when not a GEMM */
    const char *params;     /* JSON object of the kernel's parameters, or NULL */
    int grid[3], block[3];
    int registers;    /* per thread */
    int smem_static;  /* bytes per block */
    int smem_dynamic; /* bytes per block */
    int reps;
    double time_min_ns, time_median_ns, time_max_ns;
    double flops;                                        /* analytic (model/), NaN if unknown */
    double bytes_dram, bytes_l2, bytes_l1, bytes_shared; /* analytic, NaN if unknown */
    int verified;            /* 1 passed, 0 failed, -1 not checked (NULL) */
    double rel_error;        /* ||out - ref|| / ||ref||, NaN if not checked */
    const char *cache_state; /* NOT NULL: "cold" or "warm" */
    const char *source;      /* NOT NULL: "suite" or "profile" */
    int64_t launch_index;    /* profile: n-th launch of the program; -1 = none */
    int64_t correlation_id;  /* profile: CUPTI correlation id; -1 = none */
    int64_t device_id;       /* the GPU it ran on when not the capture's; 0 = the capture's */
    /* Every timed repetition [ns] in the order timed (column times_ns, a JSON array; schema
     * 3): n_times values, or NULL and 0 when not stored (rows written before schema 3, profiled
     * launches). Borrowed by the insert; a query's rows own theirs (db_free_measurements). */
    const double *times_ns;
    int n_times;
    /* profile --nvtx: the NVTX ranges the launch ran in (column nvtx, schema 4), as
     * collect/nvtx.c writes them ("outer/inner/;Solver@assemble/": push/pop stacks, start/end
     * ranges, per domain; docs/metrics.md); NULL when none or not asked. */
    const char *nvtx;
    /* Energy (schema 5), read from NVML's energy counter around energy_launches back-to-back
     * launches: energy_j the energy of ONE launch [J], power_w the average power over the
     * interval [W], sm_clock_mhz and temp_c the SM clock and GPU temperature sampled over it.
     * energy_launches 0 = no reading taken: the five columns are all stored as NULL whatever
     * the doubles hold (a zero-initialised struct stores no energy); > 0: NaN doubles are NULL
     * (energy_j NaN: power samples but no energy counter). */
    double energy_j, power_w, sm_clock_mhz, temp_c;
    int64_t energy_launches;
};

/* One counter value of a measurement. */
struct db_metric {
    int64_t id, measurement_id; /* set by queries */
    const char *name;           /* NOT NULL: the alias ("gld_throughput") or the raw name */
    const char *raw_name;       /* the CUPTI metric, or NULL */
    double value;               /* NaN (not collected / not applicable) is stored as NULL */
    const char *unit;           /* "bytes/second", "%", ... or NULL */
};

/*
 * Inserts one measurement and its nmetrics metrics (metrics may be NULL when
 * nmetrics == 0) in ONE transaction: on any failure nothing of it is stored.
 * *id (may be NULL) receives the measurement's id.
 */
int db_insert_measurement(struct db *db, int64_t capture_id, const struct db_measurement *m,
                          const struct db_metric *metrics, int nmetrics, int64_t *id /* OUT */);

/* ------------------------------------------------------------ predictions */

struct db_prediction {
    int64_t id;             /* set by queries */
    int64_t measurement_id; /* NOT NULL */
    int64_t capture_id;     /* the model capture that produced it; 0 = none */
    const char *model;      /* NOT NULL: "roofline", "hierarchical", "tsm2" */
    double predicted_time_ns;
    const char *bound;   /* "compute", "dram", "l2", "l1", "shared", "latency" or NULL */
    const char *details; /* JSON object of intermediate quantities, or NULL */
    /* The energy the model predicts for one launch [J] (schema 5); 0 or NaN: none (NULL). */
    double predicted_energy_j;
};

/*
 * Stores a prediction. There is one prediction per (measurement, model): a newer
 * one replaces the older. *id may be NULL.
 */
int db_insert_prediction(struct db *db, const struct db_prediction *p, int64_t *id /* OUT */);

/*
 * Predictions of the measurements of capture `capture_id` (0 = all), by
 * measurement id then model. Free with db_free_predictions.
 */
int db_query_predictions(struct db *db, int64_t capture_id, struct db_prediction **out /* OUT */,
                         int *n /* OUT */);
void db_free_predictions(struct db_prediction *p, int n);

/* A measurement with everything stored about it. */
struct db_measurement_row {
    struct db_measurement m;
    struct db_metric *metrics; /* by id */
    int n_metrics;
    struct db_prediction *predictions; /* by model */
    int n_predictions;
};

/*
 * Measurements of capture `capture_id` (0 = all), by id, each with its metrics and
 * predictions. Free with db_free_measurements.
 */
int db_query_measurements(struct db *db, int64_t capture_id,
                          struct db_measurement_row **out /* OUT */, int *n /* OUT */);
void db_free_measurements(struct db_measurement_row *rows, int n);

/* ------------------------------------------------------------ energy spans */

/* The energy of a part of a profiled program (schema 5): the whole program, an NVTX range or a
 * kernel (summed over its launches). */
struct db_energy_span {
    int64_t id, capture_id; /* set by queries; ignored by db_insert_energy_spans */
    int64_t device_id;      /* the GPU it was read on; 0 = the capture's */
    const char *scope;      /* NOT NULL: "program", "nvtx" or "kernel" */
    const char *name;       /* NOT NULL: the program, the NVTX path, the kernel name */
    double energy_j;        /* NaN: unknown (no energy counter) */
    double time_ns;         /* the time it covers, NaN if unknown */
    double power_w;         /* average power over time_ns, NaN if unknown */
    int64_t launches;       /* kernel launches inside it; -1 = unknown */
};

/* Inserts the n spans of capture capture_id in one transaction (all or none). */
int db_insert_energy_spans(struct db *db, int64_t capture_id, const struct db_energy_span *s,
                           int n);

/* The spans of capture capture_id (0 = all), by id. Free with db_free_energy_spans. */
int db_query_energy_spans(struct db *db, int64_t capture_id, struct db_energy_span **out /* OUT */,
                          int *n /* OUT */);
void db_free_energy_spans(struct db_energy_span *s, int n);

/* --------------------------------------------------------------- export */

/* Storage class of a dumped value. */
enum db_type { DB_NULL = 0, DB_INTEGER, DB_REAL, DB_TEXT };

/* The i-th table name ("device", "capture", ...) for i >= 0; NULL past the end. */
const char *db_table_name(int i);

/*
 * Streams every row of `table` (one of db_table_name(), else RK_EUSAGE with a message
 * listing them), by rowid, to cb: ncols columns with their names, values as text
 * (NULL for SQL NULL; REAL with 17 significant digits) and storage classes. cb
 * returns 0 to continue; a non-zero value stops the dump and db_dump_table returns
 * it. The arrays are valid only during the call.
 */
typedef int (*db_row_fn)(int ncols, const char *const *names, const char *const *values,
                         const enum db_type *types, void *user);
int db_dump_table(struct db *db, const char *table, db_row_fn cb, void *user);
/* The columns of `table` as db_dump_table names them, whether or not it has rows (a CSV
 * header of an empty table): one call of cb with values and types NULL; returns cb's value,
 * or RK_EUSAGE / RK_EDB / RK_ENOMEM printed. */
int db_dump_columns(struct db *db, const char *table, db_row_fn cb, void *user);

/* --------------------------------------------------------------- import */

/*
 * Creates the NEW database `path` (it must not exist) from the SQL text in file
 * `sql_path`, as examples/ keeps it: `sqlite3 x.db .dump` with PRAGMA
 * application_id and user_version. The text may only create tables and indexes,
 * insert rows, run transactions and set those pragmas (and foreign_keys); anything
 * else (ATTACH first of all) is refused. The result must pass db_open(DB_RO) and
 * db_check. RK_OK, or one message and RK_EDB / RK_EIO / RK_EUSAGE / RK_ENOMEM,
 * with `path` removed.
 */
int db_import_sql(const char *path, const char *sql_path);

/* ---------------------------------------------------------------- merge */

/* What one db_merge call added to OUT. */
struct db_merge_stats {
    int64_t captures_added;      /* captures new to OUT, copied with every row under them */
    int64_t captures_present;    /* captures whose uid OUT had already: skipped, rows and all */
    int64_t devices_added;       /* devices new to OUT */
    int64_t devices_joined;      /* devices OUT had already (same uuid): OUT's row is kept */
    int64_t devices_differ;      /* joined devices described differently (one warning each) */
    int64_t rows_added;          /* rows written to OUT, every table (a replaced prediction too) */
    int64_t predictions_dropped; /* predictions for measurements OUT holds differently */
    int upgraded;                /* the input had an older schema: an upgraded copy was merged */
};

/*
 * Checks, writing nothing and creating nothing, that the database `in_path` can be merged
 * into `out_path` (which need not exist): an existing roofkit database of this schema or an
 * older one (older: an upgraded temporary copy is made and removed), not OUT itself.
 * RK_OK, or one message and RK_EDB (missing, a folder, not roofkit's, corrupt, newer schema),
 * RK_EUSAGE (the same file as OUT), RK_EIO or RK_ENOMEM.
 */
int db_merge_check(const char *in_path, const char *out_path);

/*
 * Merges the roofkit database `in_path` into `out`, in one transaction: on failure OUT is as
 * it was. The input is only read; an older schema is merged from an upgraded temporary copy.
 * Devices are joined by uuid (OUT's row kept: one rk_warn line per device described
 * differently; first/last seen widened), captures by uid (a capture OUT has is skipped with all
 * its rows, so merging one file twice adds nothing); every other row of a new capture is copied
 * under new ids with its foreign keys remapped. A prediction of a new model capture for a
 * measurement of a capture OUT already has goes to OUT's copy of that measurement (the newer
 * prediction wins), or is dropped and counted when OUT's copy differs. db/merge.c says why.
 * Call db_merge_check on the input first: db_merge does not repeat its integrity check on files
 * of this schema (corruption met while reading still fails, naming both files). Not inside
 * db_begin (RK_BUG). For the length of its transaction foreign keys are off and, when no other
 * connection has OUT open, OUT uses a rollback journal instead of WAL; both are restored (a
 * warning when another process opened OUT meanwhile and it stays out of WAL until the next
 * DB_RW open). *st receives this input's counts (all 0 on failure).
 * RK_OK, or one message and RK_EDB, RK_EUSAGE (in_path is OUT), RK_EIO or RK_ENOMEM.
 */
int db_merge(struct db *out, const char *in_path, struct db_merge_stats *st /* OUT */);

/* ---------------------------------------------------------------- journal */

/*
 * Measurements that outlive the process that made them (db/journal.c says why and gives the
 * format): a profiled program appends each measurement to its own journal file as soon as it is
 * complete, and `roofkit profile`, which survives the program however it ends, stores the
 * journals with db_journal_fold. Files live in a journal folder (`roofkit profile` uses the
 * database's path + ".journal"): c<CAPTURE>-<PID>-<N>.jrn per process, c<CAPTURE>.lock for
 * the roofkit that waits for them.
 *
 * Writer side (inside the profiled program; prints nothing, returns RK_OK or RK_EIO/RK_ENOMEM):
 * db_journal_create makes a new journal of this process for capture_id in dir (path receives
 * its name), locks it for the life of the process and writes its header; *fd is O_APPEND and
 * close-on-exec. db_journal_append writes one measurement with its n metrics as one line with
 * one write(2); db_journal_note one note (key "mode": the collection mode; "end": the writer
 * finished).
 */
int db_journal_create(const char *dir, int64_t capture_id, char *path /* OUT */, size_t size,
                      int *fd /* OUT */);
int db_journal_append(int fd, const struct db_measurement *m, const struct db_metric *metrics,
                      int n);
int db_journal_note(int fd, const char *key, const char *text);

/* 1 when a living process holds the journal at path (it is still being written), 0 when
 * none does, -1 when it cannot be opened. */
int db_journal_busy(const char *path);

/* What db_journal_fold found in one journal. */
struct db_journal_stats {
    long pid;             /* the process that wrote it */
    int64_t stored;       /* measurements stored */
    int64_t with_metrics; /* of them, those with metrics (launches with counters) */
    int64_t torn;         /* a last line cut short by the writer's death, skipped (0 or 1) */
    int64_t bad;          /* lines that are no journal's, skipped */
    int ended;            /* the writer wrote its "end" note: it finished */
    char mode[600];       /* its last "mode" note ("counters", "timing: why"), "" without */
};

/*
 * Stores every complete measurement line of the journal at path in capture capture_id, in one
 * transaction (all or none), in the order written. Does not remove the file. Not inside
 * db_begin (RK_BUG). An empty file (its process died before its header) stores nothing.
 * RK_OK, or one message and RK_EIO (unreadable, not a journal), RK_EDB or RK_ENOMEM; on failure
 * st->stored is 0.
 */
int db_journal_fold(struct db *db, int64_t capture_id, const char *path,
                    struct db_journal_stats *st /* OUT */);

/* One journal file of a folder. */
struct db_journal_file {
    char *path; /* dir/c<CAPTURE>-<PID>-<N>.jrn */
    int64_t capture_id;
    long pid;
};
/* The journals in dir of capture_id (0: of every capture), by capture then name; a missing
 * folder has none. Free with db_journal_free_list. RK_OK, RK_EIO or RK_ENOMEM (not printed). */
int db_journal_list(const char *dir, int64_t capture_id, struct db_journal_file **out /* OUT */,
                    int *n /* OUT */);
void db_journal_free_list(struct db_journal_file *files, int n);

/*
 * The lock of the roofkit that waits for capture_id's journals (dir/c<CAPTURE>.lock): taken
 * (*fd set) when nobody holds it (wait: wait for it), else RK_ENODATA: a living roofkit holds it.
 * RK_EIO when the file cannot be made. db_journal_unlock_capture removes the file and lets go.
 */
int db_journal_lock_capture(const char *dir, int64_t capture_id, int wait, int *fd /* OUT */);
void db_journal_unlock_capture(const char *dir, int64_t capture_id, int fd);

#ifdef __cplusplus
}
#endif
#endif /* RK_DB_H */
