/*
 * schema.c - roofkit's database schema, as migration steps: step i takes
 * PRAGMA user_version i to i + 1 and runs in one transaction (open.c). A released
 * step is never edited; a change to the schema is a new step appended here, with
 * a test that migrates a file of the previous version.
 *
 * Assumes SQLite >= 3.24 (UPSERT) with the JSON functions (json_valid in CHECK
 * constraints): the CHECKs keep params/details exportable as JSON.
 *
 * Conventions of the tables:
 *   - every table has `id INTEGER PRIMARY KEY`; foreign keys cascade on delete and
 *     are indexed;
 *   - enumerations are TEXT with a CHECK, so the file reads well in `sqlite3`;
 *   - clocks in MHz, sizes in bytes, times in ns, timestamps UTC ISO 8601 text;
 *   - NULL means unknown or not applicable, never zero.
 */
#include "internal.h"

#include <stddef.h>

#define NOW "(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"

static const char schema_v1[] =
    /* One GPU, as the CUDA runtime describes it (001_7cc6b74500dcf7c8.txt, the
       device-property query). */
    "CREATE TABLE device (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL,\n"
    "  uuid TEXT NOT NULL UNIQUE,\n"
    "  pci_bus_id TEXT,\n"
    "  cc_major INTEGER, cc_minor INTEGER,\n"
    "  sm_count INTEGER,\n"
    "  sm_clock_mhz INTEGER,\n"
    "  mem_clock_mhz INTEGER,\n"
    "  bus_width_bits INTEGER,\n"
    "  l2_bytes INTEGER,\n"
    "  memory_bytes INTEGER,\n"
    "  smem_per_sm_bytes INTEGER,\n"
    "  smem_per_block_optin_bytes INTEGER,\n"
    "  regs_per_sm INTEGER,\n"
    "  max_threads_per_sm INTEGER,\n"
    "  driver_version INTEGER,\n"
    "  runtime_version INTEGER,\n"
    "  host TEXT,\n"
    "  first_seen TEXT NOT NULL DEFAULT " NOW ",\n"
    "  last_seen TEXT NOT NULL DEFAULT " NOW "\n"
    ");\n"
    /* One roofkit invocation that stored something. */
    "CREATE TABLE capture (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  device_id INTEGER REFERENCES device(id) ON DELETE CASCADE,\n"
    "  kind TEXT NOT NULL\n"
    "    CHECK (kind IN ('probe', 'run', 'profile', 'model', 'tune', 'import')),\n"
    "  status TEXT NOT NULL DEFAULT 'running'\n"
    "    CHECK (status IN ('running', 'done', 'failed', 'interrupted')),\n"
    "  cmdline TEXT,\n"
    "  tool_version TEXT,\n"
    "  started_at TEXT NOT NULL DEFAULT " NOW ",\n"
    "  ended_at TEXT,\n"
    "  note TEXT\n"
    ");\n"
    "CREATE INDEX capture_device ON capture(device_id);\n"
    /* A measured ceiling: the roofline's roofs and the model's latencies. */
    "CREATE TABLE ceiling (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,\n"
    "  name TEXT NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK (kind IN ('bandwidth', 'compute', 'latency', 'launch')),\n"
    "  level TEXT,\n"
    "  precision TEXT,\n"
    "  value REAL NOT NULL,\n"
    "  unit TEXT NOT NULL,\n"
    "  method TEXT,\n"
    "  params TEXT CHECK (params IS NULL OR json_valid(params)),\n"
    "  reps INTEGER,\n"
    "  min REAL, median REAL, max REAL,\n"
    "  theoretical REAL,\n"
    "  sm_clock_mhz REAL,\n"
    "  power_w REAL,\n"
    "  temp_c REAL\n"
    ");\n"
    "CREATE INDEX ceiling_capture ON ceiling(capture_id);\n"
    "CREATE INDEX ceiling_name ON ceiling(name);\n"
    /* The pointer-chase latency curve. */
    "CREATE TABLE latency_point (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,\n"
    "  footprint_bytes INTEGER NOT NULL CHECK (footprint_bytes > 0),\n"
    "  stride_bytes INTEGER NOT NULL CHECK (stride_bytes > 0),\n"
    "  cycles REAL,\n"
    "  ns REAL\n"
    ");\n"
    "CREATE INDEX latency_point_capture ON latency_point(capture_id);\n"
    /* One timed or profiled kernel launch configuration. */
    "CREATE TABLE measurement (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,\n"
    "  kernel TEXT NOT NULL,\n"
    "  family TEXT,\n"
    "  precision TEXT,\n"
    "  m INTEGER, n INTEGER, k INTEGER,\n"
    "  params TEXT CHECK (params IS NULL OR json_valid(params)),\n"
    "  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,\n"
    "  block_x INTEGER, block_y INTEGER, block_z INTEGER,\n"
    "  registers INTEGER,\n"
    "  smem_static INTEGER,\n"
    "  smem_dynamic INTEGER,\n"
    "  reps INTEGER,\n"
    "  time_min_ns REAL, time_median_ns REAL, time_max_ns REAL,\n"
    "  flops REAL,\n"
    "  bytes_dram REAL, bytes_l2 REAL, bytes_l1 REAL, bytes_shared REAL,\n"
    "  verified INTEGER CHECK (verified IS NULL OR verified IN (0, 1)),\n"
    "  rel_error REAL,\n"
    "  cache_state TEXT NOT NULL CHECK (cache_state IN ('cold', 'warm')),\n"
    "  source TEXT NOT NULL CHECK (source IN ('suite', 'profile')),\n"
    "  launch_index INTEGER,\n"
    "  correlation_id INTEGER\n"
    ");\n"
    "CREATE INDEX measurement_capture ON measurement(capture_id);\n"
    /* A counter of a measurement: the alias (gld_throughput) and the CUPTI name. */
    "CREATE TABLE metric (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,\n"
    "  name TEXT NOT NULL,\n"
    "  raw_name TEXT,\n"
    "  value REAL,\n"
    "  unit TEXT,\n"
    "  UNIQUE (measurement_id, name)\n"
    ");\n"
    /* What a model predicted for a measurement; one row per (measurement, model). */
    "CREATE TABLE prediction (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,\n"
    "  capture_id INTEGER REFERENCES capture(id) ON DELETE CASCADE,\n"
    "  model TEXT NOT NULL,\n"
    "  predicted_time_ns REAL,\n"
    "  bound TEXT,\n"
    "  details TEXT CHECK (details IS NULL OR json_valid(details)),\n"
    "  created_at TEXT NOT NULL DEFAULT " NOW ",\n"
    "  UNIQUE (measurement_id, model)\n"
    ");\n"
    "CREATE INDEX prediction_capture ON prediction(capture_id);\n";

/*
 * Many GPUs and many ranks: where a capture ran (host, the launcher's rank), how many other
 * GPUs roofkit measured at the same time, and a stable identity `uid` (a random 128-bit hex
 * text) that `roofkit merge` keys captures by, so merging a file twice adds nothing. A ceiling of
 * a pair of GPUs (peer bandwidth, peer latency) names the other GPU; a profiled launch names its
 * GPU, since one program may use several.
 */
static const char schema_v2[] =
    "ALTER TABLE capture ADD COLUMN uid TEXT;\n"
    "UPDATE capture SET uid = lower(hex(randomblob(16)));\n"
    "CREATE UNIQUE INDEX capture_uid ON capture(uid);\n"
    "ALTER TABLE capture ADD COLUMN host TEXT;\n"
    "ALTER TABLE capture ADD COLUMN rank INTEGER CHECK (rank IS NULL OR rank >= 0);\n"
    "ALTER TABLE capture ADD COLUMN local_rank INTEGER CHECK (local_rank IS NULL OR local_rank >= "
    "0);\n"
    "ALTER TABLE capture ADD COLUMN world_size INTEGER CHECK (world_size IS NULL OR world_size > "
    "0);\n"
    "ALTER TABLE capture ADD COLUMN gpus_concurrent INTEGER;\n"
    "ALTER TABLE capture ADD COLUMN gpus_busy INTEGER;\n"
    "ALTER TABLE ceiling ADD COLUMN peer_device_id INTEGER REFERENCES device(id);\n"
    "CREATE INDEX ceiling_peer ON ceiling(peer_device_id);\n"
    "ALTER TABLE measurement ADD COLUMN device_id INTEGER REFERENCES device(id);\n"
    "CREATE INDEX measurement_device ON measurement(device_id);\n";

/*
 * Every timed repetition of a suite measurement, so that two captures can be compared with a
 * confidence interval (`roofkit diff`, analysis/compare.c) rather than from min/median/max: a
 * JSON array of the times in ns in the order they were timed. NULL for rows written before
 * this step and for a profiled launch (one launch: its time is the row's).
 */
static const char schema_v3[] =
    "ALTER TABLE measurement ADD COLUMN times_ns TEXT\n"
    "  CHECK (times_ns IS NULL OR (json_valid(times_ns) AND json_type(times_ns) = 'array'));\n";

/*
 * The NVTX ranges a profiled launch ran in (`roofkit profile --nvtx`): text in the format of
 * collect/nvtx.c (one part per domain, ';' between: "A/B/" the launching thread's push/pop
 * stack, bottom first, "X,Y" the open start/end ranges, "DOMAIN@" before a named domain's),
 * so that a report can group a program's kernels by range. NULL for every other row.
 */
static const char schema_v4[] = "ALTER TABLE measurement ADD COLUMN nvtx TEXT;\n";

/*
 * Energy (docs/model.md "Energy"): what NVML's energy counter read around each measurement, the
 * energy ceilings fitted from the probes, the energy a model predicts, and energy spans of a
 * profiled program.
 *
 * The ceiling table is rebuilt because SQLite cannot change a CHECK constraint: its kind now
 * allows 'energy' (an energy per flop in pJ/FLOP, per byte in pJ/B, or a constant power in W;
 * params holds the fit's residuals). The rows are copied with their ids, in the same column
 * order; no table refers to ceiling(id), so dropping the old table touches nothing else.
 *
 * measurement: energy_j is the energy of ONE launch in J (the counter's difference over
 * energy_launches back-to-back launches, divided by them); power_w the average power over that
 * interval, sm_clock_mhz and temp_c the SM clock and temperature sampled over it;
 * energy_launches NULL when no reading was taken (no NVML, no energy counter, not permitted).
 * prediction: predicted_energy_j beside predicted_time_ns (NULL: the model predicts no energy).
 * energy_span: the energy of a program, an NVTX range or a kernel of a profile capture (scope
 * 'program', 'nvtx' or 'kernel'), with its time, average power and number of launches.
 */
static const char schema_v5[] =
    "CREATE TABLE ceiling_v5 (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,\n"
    "  name TEXT NOT NULL,\n"
    "  kind TEXT NOT NULL\n"
    "    CHECK (kind IN ('bandwidth', 'compute', 'latency', 'launch', 'energy')),\n"
    "  level TEXT,\n"
    "  precision TEXT,\n"
    "  value REAL NOT NULL,\n"
    "  unit TEXT NOT NULL,\n"
    "  method TEXT,\n"
    "  params TEXT CHECK (params IS NULL OR json_valid(params)),\n"
    "  reps INTEGER,\n"
    "  min REAL, median REAL, max REAL,\n"
    "  theoretical REAL,\n"
    "  sm_clock_mhz REAL,\n"
    "  power_w REAL,\n"
    "  temp_c REAL,\n"
    "  peer_device_id INTEGER REFERENCES device(id)\n"
    ");\n"
    "INSERT INTO ceiling_v5 (id, capture_id, name, kind, level, precision, value, unit, method,\n"
    "  params, reps, min, median, max, theoretical, sm_clock_mhz, power_w, temp_c, "
    "peer_device_id)\n"
    "  SELECT id, capture_id, name, kind, level, precision, value, unit, method, params, reps,\n"
    "  min, median, max, theoretical, sm_clock_mhz, power_w, temp_c, peer_device_id\n"
    "  FROM ceiling ORDER BY id;\n"
    "DROP TABLE ceiling;\n"
    "ALTER TABLE ceiling_v5 RENAME TO ceiling;\n"
    "CREATE INDEX ceiling_capture ON ceiling(capture_id);\n"
    "CREATE INDEX ceiling_name ON ceiling(name);\n"
    "CREATE INDEX ceiling_peer ON ceiling(peer_device_id);\n"
    "ALTER TABLE measurement ADD COLUMN energy_j REAL CHECK (energy_j IS NULL OR energy_j >= 0);\n"
    "ALTER TABLE measurement ADD COLUMN power_w REAL;\n"
    "ALTER TABLE measurement ADD COLUMN sm_clock_mhz REAL;\n"
    "ALTER TABLE measurement ADD COLUMN temp_c REAL;\n"
    "ALTER TABLE measurement ADD COLUMN energy_launches INTEGER\n"
    "  CHECK (energy_launches IS NULL OR energy_launches > 0);\n"
    "ALTER TABLE prediction ADD COLUMN predicted_energy_j REAL;\n"
    "CREATE TABLE energy_span (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,\n"
    "  device_id INTEGER REFERENCES device(id),\n"
    "  scope TEXT NOT NULL CHECK (scope IN ('program', 'nvtx', 'kernel')),\n"
    "  name TEXT NOT NULL,\n"
    "  energy_j REAL CHECK (energy_j IS NULL OR energy_j >= 0),\n"
    "  time_ns REAL,\n"
    "  power_w REAL,\n"
    "  launches INTEGER CHECK (launches IS NULL OR launches >= 0)\n"
    ");\n"
    "CREATE INDEX energy_span_capture ON energy_span(capture_id);\n"
    "CREATE INDEX energy_span_device ON energy_span(device_id);\n";

const char *const dbi_migrations[] = {
    schema_v1, /* 0 -> 1: the first schema */
    schema_v2, /* 1 -> 2: captures' origin and uid, pair ceilings, a profiled launch's GPU */
    schema_v3, /* 2 -> 3: every repetition's time of a measurement */
    schema_v4, /* 3 -> 4: a profiled launch's NVTX ranges */
    schema_v5, /* 4 -> 5: energy: readings, energy ceilings, predicted energy, energy spans */
};
const int dbi_nmigrations = (int)(sizeof dbi_migrations / sizeof dbi_migrations[0]);

int db_schema_version(void)
{
    return dbi_nmigrations;
}

/* The tables db_dump_table accepts, in an order where parents come first. */
static const char *const tables[] = {
    "device",      "capture", "ceiling",    "latency_point",
    "measurement", "metric",  "prediction", "energy_span",
};

const char *db_table_name(int i)
{
    if (i < 0 || i >= (int)(sizeof tables / sizeof tables[0]))
        return NULL;
    return tables[i];
}
