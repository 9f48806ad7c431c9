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
INSERT INTO device VALUES(1,'NVIDIA H100 80GB HBM3','GPU-811e2a62-288f-7361-85fa-c0db2efdb77a','0000:00:06.0',9,0,132,1980,2619,5120,52428800,85017493504,233472,232448,65536,2048,13000,13000,'vm','2026-11-23T18:29:14Z','2026-11-23T18:31:46Z');
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
INSERT INTO capture VALUES(1,1,'probe','done','/work/main/build-dev/cli/roofkit --db /root/out/h100.db probe','0.1.0','2026-11-23T18:29:14Z','2026-11-23T18:29:19Z',NULL);
INSERT INTO capture VALUES(2,1,'run','done','/work/main/build-dev/cli/roofkit --db /root/out/h100.db run --suite default','0.1.0','2026-11-23T18:29:20Z','2026-11-23T18:29:37Z','counters: 28 of 28 measurements, 2 replay passes each, from one untimed launch per measurement');
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
INSERT INTO ceiling VALUES(1,1,'bw_dram_read','bandwidth','dram',NULL,3177.8039361775436192,'GB/s','read (XOR of every word) over 1024 MiB buffers, 16-byte accesses, grid-stride; best median of 3 block sizes x 4 grid shapes; bytes moved once','{"buffer_bytes":1073741824,"block":1024,"grid":16384,"elem_bytes":16}',12,3168.8008796388876361,3177.8039361775436192,3180.8162406761994133,3352.3200000000001636,1980.0,138.38300000000000977,43.0);
INSERT INTO ceiling VALUES(2,1,'bw_dram_write','bandwidth','dram',NULL,3269.6157763696865002,'GB/s','write over 1024 MiB buffers, 16-byte accesses, grid-stride; best median of 3 block sizes x 4 grid shapes; bytes moved once','{"buffer_bytes":1073741824,"block":1024,"grid":16384,"elem_bytes":16}',12,3258.0281714422048935,3269.6157763696865002,3276.1600538974025766,3352.3200000000001636,1980.0,166.99799999999999045,44.0);
CREATE TABLE latency_point (
  id INTEGER PRIMARY KEY,
  capture_id INTEGER NOT NULL REFERENCES capture(id) ON DELETE CASCADE,
  footprint_bytes INTEGER NOT NULL CHECK (footprint_bytes > 0),
  stride_bytes INTEGER NOT NULL CHECK (stride_bytes > 0),
  cycles REAL,
  ns REAL
);
INSERT INTO latency_point VALUES(1,1,4096,128,32.008789062499999999,16.166019157583690457);
INSERT INTO latency_point VALUES(2,1,5248,128,32.008789062499999999,16.166019157583690457);
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
INSERT INTO measurement VALUES(1,2,'tsm2_v3','tsm2','fp32',20480,4,20480,'{"t1":256,"t2":4,"t3":16,"ksplit":3,"apipe":1,"rpt":2}',40,3,1,256,1,1,128,0,135168,10,548608.00504684448242,551952.00443267822265,556384.02700424194335,3355443200.0,1704591360.0,1704591360.0,1704591360.0,6737100800.0,1,1.4742517318285717998e-06,'cold','suite',NULL,NULL);
INSERT INTO measurement VALUES(2,2,'cublas_sgemm','cublas','fp32',20480,4,20480,'{}',0,0,0,0,0,0,0,0,0,10,613727.98681259155273,615263.99850845336914,616864.02559280395507,3355443200.0,1678376960.0,1678376960.0,1678376960.0,0.0,1,2.3733821291747708307e-07,'cold','suite',NULL,NULL);
CREATE TABLE metric (
  id INTEGER PRIMARY KEY,
  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  raw_name TEXT,
  value REAL,
  unit TEXT,
  UNIQUE (measurement_id, name)
);
INSERT INTO metric VALUES(1,1,'gld_throughput','l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second',3033225473321.8588867,'byte/second');
INSERT INTO metric VALUES(2,1,'gld_efficiency','smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct',100.0,'percent');
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
INSERT INTO prediction VALUES(1,1,7,'roofline',536405.45302187104242,'dram','{"model":"roofline","predicted_time_s":0.00053640545302187099,"bound":"dram","flops":3355443200,"peak_flops":66136873356433.953,"time_compute_s":5.0734832623797971e-05,"intensity":1.9684736639753941,"attainable_flops":6255423357642.8379,"bytes_dram":1704591360,"bandwidth_dram":3177803936177.5435,"time_dram_s":0.00053640545302187099,"ridge":20.812131485993255,"ceilings":{"compute":{"id":24,"name":"peak_fp32_fma","value":66.136873356433952,"unit":"TFLOP/s","capture":1},"dram":{"id":1,"name":"bw_dram_read","value":3177.8039361775436,"unit":"GB/s","capture":1}}}','2026-11-23T18:34:15Z');
INSERT INTO prediction VALUES(2,1,7,'hierarchical',528259.34944848995655,'dram','{"model":"hierarchical","predicted_time_s":0.00052825934944849,"bound":"dram","flops":3355443200,"peak_flops":66136873356433.953,"time_compute_s":5.0734832623797971e-05,"intensity":1.9988288112434121,"attainable_flops":6351886064114.3955,"dram_bytes":"compulsory (model_cost bytes_dram_min)","levels":{"dram":{"bytes":1678704640,"bandwidth":3177803936177.5435,"time_s":0.00052825934944849},"l2":{"bytes":1704591360,"bandwidth":8293608160996.3291,"time_s":0.00020553073245206508},"l1":{"bytes":1704591360,"bandwidth":33241534632775.039,"time_s":5.1278961059737901e-05},"shared":{"bytes":6737100800,"bandwidth":33280372734084.617,"time_s":0.00020243465582042873}},"ceilings":{"compute":{"id":24,"name":"peak_fp32_fma","value":66.136873356433952,"unit":"TFLOP/s","capture":1},"dram":{"id":1,"name":"bw_dram_read","value":3177.8039361775436,"unit":"GB/s","capture":1},"l2":{"id":5,"name":"bw_l2_read","value":8293.6081609963294,"unit":"GB/s","capture":1},"l1":{"id":6,"name":"bw_l1_read","value":33241.534632775038,"unit":"GB/s","capture":1},"shared":{"id":7,"name":"bw_shared_read","value":33280.372734084616,"unit":"GB/s","capture":1}}}','2026-11-23T18:34:15Z');
CREATE INDEX capture_device ON capture(device_id);
CREATE INDEX ceiling_capture ON ceiling(capture_id);
CREATE INDEX ceiling_name ON ceiling(name);
CREATE INDEX latency_point_capture ON latency_point(capture_id);
CREATE INDEX measurement_capture ON measurement(capture_id);
CREATE INDEX prediction_capture ON prediction(capture_id);
COMMIT;
