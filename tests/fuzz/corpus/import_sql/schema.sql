-- roofkit example database (examples/README.md): load with sqlite3 x.db < h100.sql
PRAGMA application_id=1383034726;
PRAGMA user_version=1;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE device (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  uuid TEXT NOT NULL UNIQUE,
  pci_bus_id TEXT,
  cc_major INTEGER, cc_minor INTEGER,
  sm_count INTEGER,
  sm_clock_mhz INTEGER,
  mem_clock_mhz INTEGER,
  bus_width_bits INTEGER,
  l2_bytes INTEGER,
  memory_bytes INTEGER,
  smem_per_sm_bytes INTEGER,
  smem_per_block_optin_bytes INTEGER,
  regs_per_sm INTEGER,
  max_threads_per_sm INTEGER,
  driver_version INTEGER,
  runtime_version INTEGER,
  host TEXT,
  first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  last_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE TABLE capture (
  id INTEGER PRIMARY KEY,
  device_id INTEGER REFERENCES device(id) ON DELETE CASCADE,
  kind TEXT NOT NULL
    CHECK (kind IN ('probe', 'run', 'profile', 'model', 'tune', 'import')),
  status TEXT NOT NULL DEFAULT 'running'
    CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
  cmdline TEXT,
  tool_version TEXT,
  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  ended_at TEXT,
  note TEXT
);
CREATE TABLE ceiling (
  id INTEGER PRIMARY KEY,
  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('bandwidth', 'compute', 'latency', 'launch')),
  level TEXT,
  precision TEXT,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  method TEXT,
  params TEXT CHECK (params IS NULL OR json_valid(params)),
  reps INTEGER,
  min REAL, median REAL, max REAL,
  theoretical REAL,
  sm_clock_mhz REAL,
  power_w REAL,
  temp_c REAL
);
CREATE TABLE latency_point (
  id INTEGER PRIMARY KEY,
  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,
  footprint_bytes INTEGER NOT NULL CHECK (footprint_bytes > 0),
  stride_bytes INTEGER NOT NULL CHECK (stride_bytes > 0),
  cycles REAL,
  ns REAL
);
CREATE TABLE measurement (
  id INTEGER PRIMARY KEY,
  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,
  kernel TEXT NOT NULL,
  family TEXT,
  precision TEXT,
  m INTEGER, n INTEGER, k INTEGER,
  params TEXT CHECK (params IS NULL OR json_valid(params)),
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  registers INTEGER,
  smem_static INTEGER,
  smem_dynamic INTEGER,
  reps INTEGER,
  time_min_ns REAL, time_median_ns REAL, time_max_ns REAL,
  flops REAL,
  bytes_dram REAL, bytes_l2 REAL, bytes_l1 REAL, bytes_shared REAL,
  verified INTEGER CHECK (verified IS NULL OR verified IN (0, 1)),
  rel_error REAL,
  cache_state TEXT NOT NULL CHECK (cache_state IN ('cold', 'warm')),
  source TEXT NOT NULL CHECK (source IN ('suite', 'profile')),
  launch_index INTEGER,
  correlation_id INTEGER
);
CREATE TABLE metric (
  id INTEGER PRIMARY KEY,
  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  raw_name TEXT,
  value REAL,
  unit TEXT,
  UNIQUE (measurement_id, name)
);
CREATE TABLE prediction (
  id INTEGER PRIMARY KEY,
  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,
  capture_id INTEGER REFERENCES capture(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  predicted_time_ns REAL,
  bound TEXT,
  details TEXT CHECK (details IS NULL OR json_valid(details)),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  UNIQUE (measurement_id, model)
);
CREATE INDEX capture_device ON capture(device_id);
CREATE INDEX ceiling_capture ON ceiling(capture_id);
CREATE INDEX ceiling_name ON ceiling(name);
CREATE INDEX latency_point_capture ON latency_point(capture_id);
CREATE INDEX measurement_capture ON measurement(capture_id);
CREATE INDEX prediction_capture ON prediction(capture_id);
COMMIT;
