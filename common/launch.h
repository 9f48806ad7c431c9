/*
 * launch.h - where this process sits in a job started by a launcher (Open MPI's mpirun,
 * MPICH/Intel MPI's Hydra, Slurm's srun), read from the variables each launcher sets for the
 * processes it starts, and the placeholders of file names that make one file per rank
 * (`--db 'job-%h-%r.db'`), written the way Nsight Systems' `--output` writes them.
 *
 * roofkit has no launcher of its own and does not link MPI for this: every launcher people use
 * tells each process its rank through its environment, which is all roofkit needs to choose
 * its GPU and name its files. Both functions take the environment as a lookup function so
 * that tests can give them any launcher's variables (pass rk_getenv for the real one).
 */
#ifndef RK_COMMON_LAUNCH_H
#define RK_COMMON_LAUNCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* A lookup of the environment: the value of `name`, or NULL when it is not set. */
typedef const char *(*rk_env_fn)(const char *name, void *arg);
/* The process's own environment (getenv). */
const char *rk_getenv(const char *name, void *arg);

struct rk_launch {
    const char *launcher; /* "open-mpi", "hydra" (MPICH, Intel MPI), "slurm", or NULL: none */
    int rank;             /* in the job; -1 without a launcher */
    int local_rank;       /* on this host; -1 when the launcher does not say */
    int world_size;       /* processes in the job; -1 when unknown */
    int local_size;       /* processes on this host; -1 when unknown */
};

/*
 * Reads the launcher's variables, the first launcher found in this order (an mpirun started
 * inside a Slurm allocation sets its own variables beside Slurm's):
 *   Open MPI  OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE, _LOCAL_SIZE
 *   Hydra     PMI_RANK, MPI_LOCALRANKID, PMI_SIZE, MPI_LOCALNRANKS
 *   Slurm     SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS (local size: none)
 * A launcher counts as found when its rank variable holds a whole number >= 0; a variable that
 * does not (garbled, negative) reads as unknown (-1). Never fails.
 */
void rk_launch_detect(rk_env_fn env, void *arg, struct rk_launch *out /* OUT */);

/*
 * Expands the placeholders of a file name, as Nsight Systems does for its output file:
 *   %h        the host name (host)
 *   %p        the process id (pid)
 *   %r        the launcher's rank (l->rank; 0 without a launcher)
 *   %q{VAR}   the value of environment variable VAR (through env), which must be set
 *   %%        a percent sign
 * Returns RK_OK with *out malloc'd (the caller frees it), or RK_EUSAGE after printing what is
 * wrong (an unknown placeholder, an unclosed %q{, an unset variable), or RK_ENOMEM.
 */
int rk_expand_name(const char *pattern, const struct rk_launch *l, const char *host, long pid,
                   rk_env_fn env, void *arg, char **out /* OUT */);

/*
 * Resolves a --device list against the `count` GPUs present, whose UUIDs ("GPU-8932f937-...")
 * are uuids[0..count-1]: "all" (every GPU), or comma-separated CUDA indices and UUIDs (a UUID may
 * be shortened to any prefix that names one GPU, as CUDA_VISIBLE_DEVICES allows). Returns RK_OK
 * with *out (malloc'd, free it) holding *n >= 1 distinct indices in the order given, or
 * RK_EUSAGE after printing what is wrong (an index out of range, a UUID that names no GPU or
 * several, a GPU named twice, an empty name), RK_ENOGPU when count is 0, or RK_ENOMEM.
 */
int rk_device_list_resolve(const char *spec, const char *const *uuids, int count,
                           int **out /* OUT */, int *n /* OUT */);

#ifdef __cplusplus
}
#endif
#endif /* RK_COMMON_LAUNCH_H */
