/*
 * profile_energy.h - `roofkit profile --energy` (profile_energy.c): NVML's energy counter read
 * around the program (program scope) and, by the injection library, apportioned to its kernels
 * and NVTX ranges (collect.h "energy"); the figures stored as energy spans (db.h).
 */
#ifndef RK_CLI_PROFILE_ENERGY_H
#define RK_CLI_PROFILE_ENERGY_H

#include "cli.h"
#include "collect.h"

#include <limits.h>
#include <stdint.h>

struct profile_energy {
    int on;                             /* --energy given and the counter reads */
    struct collect_energy_meter *meter; /* this process's: the program's span */
    char dir[64];                       /* the processes' files (ROOFKIT_ENERGY) */
    uint64_t t0, t1;                    /* the stored run's start and end (meter's clock) */
    int per_kernel;                     /* no counters: the processes read each kernel */
};

/*
 * Opens the meter and the folder. Without a counter (no NVML, not supported, no permission)
 * says so once and leaves pe->on 0: nothing is stored. RK_OK, or RK_EIO printed (no folder).
 */
int profile_energy_begin(struct profile_energy *pe, int wanted, int counters);
/* ROOFKIT_ENERGY for the program's environment: the folder where its processes leave each
 * kernel's energy, or "" (off: not wanted, no counter, or counters collected, whose replay
 * passes would be in the readings). */
const char *profile_energy_env(const struct profile_energy *pe);
/* Marks the start (end = 0) or the end (1) of the run whose launches are stored. */
void profile_energy_mark(struct profile_energy *pe, int end);
/*
 * After the launches are stored and their GPUs named (capture_device): one 'program' span per
 * GPU the launches ran on, the 'kernel' and 'nvtx' spans the processes left, summed over
 * processes, in one transaction; one line says what was stored and what was too short for a
 * reading. Failures warn: the launches stay stored either way.
 */
void profile_energy_store(struct rk_ctx *ctx, struct profile_energy *pe, int64_t capture,
                          char *const *prog);
/* Stops the meter, removes the folder. */
void profile_energy_end(struct profile_energy *pe);

#endif /* RK_CLI_PROFILE_ENERGY_H */
