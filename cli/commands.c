/*
 * commands.c - the table of roofkit's subcommands: name, entry point, what main()
 * must set up first, a one-line summary and the full usage text. Adding a
 * subcommand: see cli/README.md.
 */
#include "cli.h"

#include <string.h>

#define COMMON_OPTS                                                                                \
    "\ncommon options: --db FILE (default ./roofkit.db), --device N|UUID|LIST|all, --serial,\n"    \
    "--quiet, --help; exit codes: see 'roofkit --help'\n"

const struct rk_cmd rk_commands[] = {
    {"probe", cmd_probe, RK_PER_GPU | RK_AFTER_GPUS,
     "measure the GPU's ceilings: bandwidth, latency, FLOP/s, launch",
     "usage: roofkit probe [--only GROUPS|PROBES] [--quick] [--format text|csv|json]\n"
     "       roofkit probe --list [--format text|csv|json]\n\n"
     "Measures the GPU's ceilings and stores them in the database as one capture. With several\n"
     "GPUs (--device all or a list) each GPU is probed in a roofkit of its own, all at once\n"
     "(--serial: one after another), then every ordered pair of GPUs gets its peer ceilings\n"
     "(copy engine and SM-driven bandwidth one way and both ways, latency), one capture per\n"
     "source GPU.\n\n"
     "  --only LIST   comma-separated groups (bandwidth, latency, flops, launch, peer) or\n"
     "                probe-name prefixes (bw_dram, bw_l2, lat_chase, peak_fp64, ...); default:\n"
     "                all\n"
     "  --quick       fewer repetitions and a coarser latency curve (under 10 s on an H100)\n"
     "  --list        list the probes and exit\n"
     "  --format F    text (default): each ceiling as it is measured; csv or json: every\n"
     "                ceiling of the run after it, with its min, median, max, theoretical\n"
     "                value, clock, power, method and parameters\n" COMMON_OPTS},
    {"run", cmd_run, RK_PER_GPU, "run, verify and time kernels of the suite",
     "usage: roofkit run [--suite NAME | --kernel NAME] [--sizes LIST] [--precision fp32,fp64]\n"
     "                   [--param NAME=V1,V2 ...] [--reps N] [--warm]\n"
     "                   [--metrics LIST|default|none] [--format text|csv|json]\n\n"
     "Runs each kernel on random inputs, verifies it against a float64 cuBLAS result, times it\n"
     "with CUDA events (median of --reps repetitions, L2 flushed between them unless --warm)\n"
     "and stores one measurement per kernel, shape and parameter set. Its hardware counters\n"
     "come from more launches, untimed: one per single-pass group of the metrics (3 for the\n"
     "default set on an H100), the L2 flushed before each unless --warm.\n\n"
     "  --suite NAME       seeds, tsm2, ism2 or default (see 'roofkit list suites')\n"
     "  --kernel LIST      kernels by name (see 'roofkit list kernels'), a prefix or glob\n"
     "                     ('tsm2', '*_v3'), or 'regex:EXPR' (one POSIX extended expression,\n"
     "                     matched anywhere in the name, as 'profile --kernel-name')\n"
     "  --sizes LIST       square sizes N, or MxNxK shapes, comma-separated\n"
     "  --precision LIST   fp32, fp64 or both (default: both)\n"
     "  --param N=V,...    kernel parameter values; repeatable, all combinations are run\n"
     "  --reps N           timed repetitions (default 10, at least 3)\n"
     "  --warm             keep the L2 warm between repetitions\n"
     "  --metrics LIST     counters to store: metric aliases or raw CUPTI names, 'default'\n"
     "                     (the default set, see 'roofkit list metrics') or 'none'. Without\n"
     "                     permission to read counters the timings are still stored: with\n"
     "                     the default set after a warning, with a named LIST and exit 6\n"
     "  --format F         text (default), csv or json: each stored measurement (kernel,\n"
     "                     precision, m, n, k, params, median/min/max ns, GFLOP/s, GB/s,\n"
     "                     verified, relative error) as it is stored\n" COMMON_OPTS},
    {"profile", cmd_profile, 0, "record every kernel launch of any CUDA program, with counters",
     "usage: roofkit profile [--metrics LIST] [-k|--kernel-name NAME|regex:EXPR]\n"
     "                       [--kernel-name-base function|demangled|mangled]\n"
     "                       [--kernel-id ::[regex:]NAME:N] [-s|--launch-skip N]\n"
     "                       [-c|--launch-count N] [--replay application|kernel]\n"
     "                       [--format text|csv|json] -- PROGRAM [ARGS...]\n"
     "       roofkit profile --summary [--capture ID] [--format text|csv|json]\n\n"
     "Runs PROGRAM with roofkit's CUPTI injection library and stores each kernel launch as a\n"
     "measurement with its counters. PROGRAM's output and exit status pass through unchanged.\n"
     "Then it prints the capture's kernels as 'nsys stats' does: share of the GPU time of the\n"
     "recorded launches (time_pct), total and median time, launches, and once 'roofkit model'\n"
     "has judged them, the time-weighted % of roof and the bound of most of their time; the\n"
     "top 10 by total time as text, all of them with --format csv|json.\n\n"
     "Kernels are selected as Nsight Compute selects them (ncu's options, same syntax):\n"
     "  -k, --kernel-name NAME    only kernels named NAME exactly; 'regex:EXPR' for a POSIX\n"
     "                            extended expression that may match anywhere in the name\n"
     "  --kernel-name-base BASE   what NAME is compared with: 'function' (default: the name\n"
     "                            without return type, parameters, template arguments and\n"
     "                            namespaces, e.g. gemm), 'demangled' or 'mangled'\n"
     "  --kernel-id ::NAME:N      the N-th launch of kernel NAME (from 1; N may be an\n"
     "                            expression on the whole number, e.g. '.*5|3'); empty fields\n"
     "                            match all; 'regex:EXPR' for NAME. The context and stream\n"
     "                            fields of ncu's context:stream:name:N must stay empty\n"
     "  -s, --launch-skip N       skip the first N launches that pass the filters\n"
     "  -c, --launch-count N      record at most N launches that pass the filters\n"
     "  --kernel NAME             the older name of --kernel-name (a warning says so)\n\n"
     "  --metrics LIST     metric aliases or raw CUPTI names (default set: 'roofkit list "
     "metrics')\n"
     "  --replay MODE      when the metrics need more than one pass: 'application' (default)\n"
     "                     runs PROGRAM once per pass, silently (no input, output discarded)\n"
     "                     before the run you see, and matches launches by order and name;\n"
     "                     'kernel' runs it once and replays each kernel, saving and restoring\n"
     "                     its device memory (slower; for programs that differ run to run)\n"
     "  --format F         the kernel table on standard output: text (default; not with\n"
     "                     --quiet), csv (a header line even when empty) or json (null for\n"
     "                     unknown values)\n"
     "  --summary          print the kernel table of a stored profile capture and run nothing\n"
     "  --capture ID       with --summary: that capture (default: the newest profile one)\n\n"
     "NVTX ranges and the profiler API, as Nsight Compute takes them (docs/metrics.md):\n"
     "  --nvtx                    store the NVTX ranges of each launch\n"
     "  --nvtx-include EXPR       only launches in those ranges (repeatable: any): 'A/' push/pop\n"
     "                            range A, 'A/B' B in A, 'A/*/B', '[A/', 'B]', 'A' start/end,\n"
     "                            'A,B' both, 'DOM@...' a domain's; implies --nvtx\n"
     "  --nvtx-exclude EXPR       leave out launches in those ranges (repeatable)\n"
     "  --profile-from-start off  only between cudaProfilerStart and cudaProfilerStop\n\n"
     "--device D makes PROGRAM see the GPUs D names alone (its CUDA_VISIBLE_DEVICES, by UUID);\n"
     "without it PROGRAM sees every GPU, and each launch stores the GPU it ran on. Under mpirun\n"
     "or srun, run roofkit as the launched program, one database per rank:\n"
     "  mpirun -np 2 roofkit --db 'p-%r.db' profile -- ./app\n" COMMON_OPTS},
    {"model", cmd_model, 0,
     "predict kernel times from the ceilings; 'model explain' for the equations",
     "usage: roofkit model [--capture ID] [--model LIST] [--check] [--format text|csv|json]\n"
     "       roofkit model explain [--json] --peak-flops F --bandwidth B [--sms N] [--clock HZ]\n"
     "              [--regs-per-sm N] [--smem-per-sm BYTES] [--max-threads-per-sm N]\n"
     "              [--mem-latency CYCLES] [--comp-latency CYCLES] [--elem-bytes 4|8]\n"
     "              --m M --n N --k K [--t1 T1] [--t2 T2] [--t3 T3]\n\n"
     "'model' writes one prediction per applicable model for every measurement of the run and\n"
     "profile captures, from the measured ceilings of each one's device (run 'roofkit probe'\n"
     "first), as one capture of kind model; it prints each model's median, mean and 90th\n"
     "percentile absolute error against the measured times, per kernel family too.\n\n"
     "  --capture ID   only the measurements of this run or profile capture (with --check:\n"
     "                 or the predictions of this model capture)\n"
     "  --model LIST   any of roofline, hierarchical, tsm2 (the seeds' models) and\n"
     "                 roofline_counters, occupancy, issue, issue_counters, overlap\n"
     "                 (extensions, docs/model.md); default: all eight\n"
     "  --check        recompute every stored prediction from the current ceilings without\n"
     "                 writing; exit 9 when one differs\n"
     "  --format F     text (default), csv or json: the summary, one row per model and one\n"
     "                 per model and kernel family (n, median, mean and p90 absolute\n"
     "                 percentage error, rows within 10 and 25 %); with --check the counts\n\n"
     "'model explain' evaluates the TSM2 model of 004 section 3.6 with no GPU and no\n"
     "database: it prints every intermediate quantity with its unit (one JSON object with\n"
     "--json), and the t2, t3 that the parameter search (Alg. 5 and an exhaustive search)\n"
     "chooses. Numbers may be written as 1430e9. Defaults describe an H100 SXM where not "
     "given.\n" COMMON_OPTS},
    {"report", cmd_report, 0, "write the roofline report: HTML, Markdown, CSV, gnuplot scripts",
     "usage: roofkit report [--out DIR] [--format html,md,csv] [--capture LIST] [--device LIST]\n"
     "                      [--kernel NAME|regex:RE] [--family LIST]\n\n"
     "Reads the database and writes a report directory (default ./roofkit-report): index.html\n"
     "opens with each device's roofline holding every selected kernel (hover a point for what\n"
     "it is, click it for its row) and the kernels that take the most time; every table\n"
     "follows. A selection the database does not hold is refused before anything is written.\n\n"
     "  --capture LIST    only what these captures stored (a model capture: what it\n"
     "                    predicted; a probe capture: its device)\n"
     "  --device LIST     only these devices: ids as 'roofkit list devices' shows them, or\n"
     "                    UUIDs (a prefix such as GPU-0a1b2c3d will do); 'all': every one\n"
     "  --kernel NAME     only this kernel (stored or function name); regex:RE for a POSIX\n"
     "                    extended expression matched anywhere in the name\n"
     "  --family LIST     only these kernel families; 'none' for the profiled kernels of\n"
     "                    no family\n" COMMON_OPTS},
    {"tune", cmd_tune, RK_PER_GPU, "compare the model's TSM2/ISM2 parameter choice with a sweep",
     "usage: roofkit tune tsm2|ism2 --m M --n N --k K [--precision fp32|fp64] [--kernel NAME]\n"
     "                   [--reps N] [--t1 LIST | --tcf LIST] [--top N] [--json]\n\n"
     "Chooses parameters with the TSM2 model of 004 section 3.6 from this GPU's measured\n"
     "ceilings (Alg. 5's gradient descent and the exhaustive search; for ISM2, tcf from\n"
     "Little's law per wave), sweeps the same space on the GPU (TSM2: t1 x t2 x t3, ISM2:\n"
     "t3 x tcf), verifying every configuration and skipping invalid ones, and stores each as\n"
     "a measurement of one capture of kind tune whose note holds the result. Prints the\n"
     "model's choices with their measured time, the kernel's defaults, the best found, the\n"
     "regret time(choice) / time(best) of each, and the fastest configurations. A choice the\n"
     "kernel does not instantiate (t3 = 10) is mapped onto the neighbour the model predicts\n"
     "fastest (16), or the nearest runnable one, and said.\n"
     "Needs 'roofkit probe' first (exit 12 without its ceilings).\n\n"
     "  --precision P   fp32 (default) or fp64\n"
     "  --kernel NAME   tsm2_v3 (default) or tsm2_v2; ism2_opt1 (default) or ism2_opt2\n"
     "  --reps N        timed repetitions per configuration (default 5, at least 3)\n"
     "  --t1 LIST       TSM2: the t1 values to sweep (default 64,128,256,512)\n"
     "  --tcf LIST      ISM2: the tcf values to sweep (default 1,2,3,4,6,8,12,16,24,32,48,64)\n"
     "  --top N         configurations listed (default 5)\n"
     "  --json          print the result as one JSON object (the capture's note)\n" COMMON_OPTS},
    {"list", cmd_list, 0, "list kernels, suites, metrics, captures, devices or GPUs",
     "usage: roofkit list kernels|suites|captures|devices|gpus [--format text|csv|json]\n"
     "       roofkit list metrics [--metrics LIST] [--chip NAME] [--format text|csv|json]\n\n"
     "  kernels    the kernel registry: family, layout, parameters, cost formula\n"
     "  suites     the kernel suites and their shapes\n"
     "  metrics    the metric aliases: unit, CUPTI metric(s), default set, whether the GPU\n"
     "             has them, and the replay passes of the default set or of --metrics LIST\n"
     "             (CUPTI's host API, no GPU needed: without one the chip is GH100, or\n"
     "             --chip NAME)\n"
     "  captures   the captures stored in the database, with the host and launcher rank each\n"
     "             ran on\n"
     "  devices    the devices stored in the database\n"
     "  gpus       the GPUs of this machine (what --device names): CUDA index, UUID, name,\n"
     "             compute capability, PCI bus id, NUMA node\n\n"
     "--format text (default) prints the tables above; csv and json print one row per item\n"
     "with raw numbers (bytes, not MiB) and 1/0 for yes/no; notes go to standard "
     "error.\n" COMMON_OPTS},
    {"export", cmd_export, 0, "export database tables as CSV or JSON",
     "usage: roofkit export --format csv|json|text [--table NAME]\n\n"
     "Writes a table (device, capture, ceiling, latency_point, measurement, metric,\n"
     "prediction; default: measurement) to standard output: CSV with a header line (also for\n"
     "a table with no rows), JSON as an array of objects with SQL NULL, NaN and infinities as\n"
     "null, or aligned text.\n" COMMON_OPTS},
    {"all", cmd_all, RK_PER_GPU | RK_AFTER_GPUS,
     "the main job: probe, the default suite, model, report",
     "usage: roofkit all [--out DIR]\n\n"
     "Probes the GPU, runs the default suite, writes predictions and the report, all into\n"
     "the database (--db). With several GPUs (--device all or a list), each GPU is probed and\n"
     "runs the suite at once (one after another with --serial), then every pair of GPUs gets\n"
     "its peer ceilings, and the model and the report cover them all. Without a GPU it says so\n"
     "and makes the report from the example\n"
     "database recorded on an H100 (examples/h100.sql, or $ROOFKIT_EXAMPLE), labelled as\n"
     "example data on every page; the database named by --db is not touched.\n\n"
     "  --out DIR   the report's folder (default roofkit-report)\n" COMMON_OPTS},
    {"merge", cmd_merge, 0, "merge the databases of many ranks and nodes into one",
     "usage: roofkit merge OUT.db IN.db...\n\n"
     "Copies every capture of the input databases (one per rank or GPU: --db 'job-%h-%r.db')\n"
     "into OUT.db, created if missing, with its ceilings, latency curve, measurements, metrics\n"
     "and predictions under new ids. Devices are joined by UUID (where two files describe one\n"
     "GPU differently OUT's row stays, with a warning), captures by their uid: a capture OUT\n"
     "already holds is skipped, so merging a file twice adds nothing. The inputs are only\n"
     "read; one of an older schema is merged from an upgraded copy, a newer one is refused.\n"
     "Every input is checked before OUT is written; each is merged in one transaction.\n"
     "OUT is the first argument: --db is refused.\n"
     "\ncommon options: --quiet, --help\nexit codes: see 'roofkit --help'\n"},
    {NULL, NULL, 0, NULL, NULL},
};

const struct rk_cmd *rk_find_command(const char *name)
{
    for (const struct rk_cmd *c = rk_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}
