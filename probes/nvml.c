/*
 * nvml.c - reads the SM clock, memory clock, power draw, temperature (and, for meter.c, the
 * energy counter) through NVML while probes run (CUDA 13 removed the clock fields from
 * cudaDeviceProp, and the clock seen under load is what the theoretical ceilings need), and for the
 * peer probes how many active NVLinks join two GPUs (the NVLink queries are
 * optional: a driver without them leaves the link count unknown).
 *
 * NVML ships with the driver, not the toolkit: the build machines have neither
 * nvml.h nor libnvidia-ml, so the library is opened with dlopen() at run time and
 * the few functions used are declared here with the types of NVML's public ABI
 * (nvmlReturn_t and the enums are ints, nvmlDevice_t is a pointer). Without NVML
 * every sampled value stays NaN and the caller says so once.
 *
 * The device is found by PCI bus id, which survives CUDA_VISIBLE_DEVICES
 * renumbering (NVML and CUDA index devices differently).
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* NVML's ABI, as published in nvml.h (not available at build time). */
#define NVML_SUCCESS 0
typedef int (*nvml_init_fn)(void);                                /* nvmlInit_v2 */
typedef int (*nvml_by_pci_fn)(const char *bus_id, void **device); /* ..ByPciBusId_v2 */

#define SYM(fp, name)                                                                              \
    do {                                                                                           \
        void *sym_ = dlsym(n->lib, name);                                                          \
        memcpy(&(fp), &sym_, sizeof sym_);                                                         \
    } while (0)

int pt_nvml_open(struct pt_nvml *n, const char *pci_bus_id)
{
    nvml_init_fn init;
    nvml_by_pci_fn by_pci;
    void *dev = NULL;

    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return -1;
    /* dlsym returns void *; ISO C has no cast to a function pointer, POSIX a copy. */
    SYM(init, "nvmlInit_v2");
    SYM(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    SYM(n->get_clock, "nvmlDeviceGetClockInfo");
    SYM(n->get_power, "nvmlDeviceGetPowerUsage");
    SYM(n->get_temp, "nvmlDeviceGetTemperature");
    SYM(n->shutdown, "nvmlShutdown");
    SYM(n->nvlink_state, "nvmlDeviceGetNvLinkState");
    SYM(n->nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    SYM(n->nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    SYM(n->get_energy, "nvmlDeviceGetTotalEnergyConsumption");
    SYM(n->get_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    if (!init || !by_pci || !n->get_clock || !n->get_power || !n->get_temp || !n->shutdown)
        goto fail;
    if (init() != NVML_SUCCESS)
        goto fail;
    if (by_pci(pci_bus_id, &dev) != NVML_SUCCESS) {
        n->shutdown();
        goto fail;
    }
    n->device = dev;
    return 0;
fail:
    dlclose(n->lib);
    memset(n, 0, sizeof *n);
    return -1;
}

void pt_nvml_close(struct pt_nvml *n)
{
    if (n->lib) {
        n->shutdown();
        dlclose(n->lib);
    }
    memset(n, 0, sizeof *n);
}

void pt_sample(struct probes *s)
{
    enum { CLOCK_SM = 1, CLOCK_MEM = 2, TEMPERATURE_GPU = 0 }; /* nvmlClockType_t, ... */
    struct pt_samples *t = s->samples;
    unsigned v;
    int i;

    if (!s->nvml.lib || !t || t->n >= PT_MAX_SAMPLES)
        return;
    i = t->n++;
    t->clock_mhz[i] = s->nvml.get_clock(s->nvml.device, CLOCK_SM, &v) == NVML_SUCCESS ? v : NAN;
    t->mem_clock_mhz[i] =
        s->nvml.get_clock(s->nvml.device, CLOCK_MEM, &v) == NVML_SUCCESS ? v : NAN;
    t->power_w[i] = s->nvml.get_power(s->nvml.device, &v) == NVML_SUCCESS ? v / 1000.0 : NAN;
    t->temp_c[i] = s->nvml.get_temp(s->nvml.device, TEMPERATURE_GPU, &v) == NVML_SUCCESS ? v : NAN;
}

/* nvmlPciInfo_t, as published in nvml.h. */
struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

int pt_nvml_nvlinks(const struct pt_nvml *n, const char *peer, int *switched)
{
    /* links past the GPU's last answer an error; a GPU without NVLink answers "not supported" */
    enum { MAX_LINKS = 64, REMOTE_SWITCH = 2, NOT_SUPPORTED = 3 };
    unsigned domain, bus, device;
    int links = 0, answered = 0, unsupported = 0;

    *switched = 0;
    if (!n->lib || !n->nvlink_state || !n->nvlink_remote_pci)
        return -1;
    if (sscanf(peer, "%x:%x:%x", &domain, &bus, &device) != 3)
        return -1;
    for (unsigned l = 0; l < MAX_LINKS; l++) {
        struct nvml_pci_info pci;
        int active = 0, type = -1, e = n->nvlink_state(n->device, l, &active);
        if (e != NVML_SUCCESS) {
            unsupported |= l == 0 && e == NOT_SUPPORTED;
            continue;
        }
        answered++;
        if (!active)
            continue;
        if (n->nvlink_remote_type && n->nvlink_remote_type(n->device, l, &type) == NVML_SUCCESS &&
            type == REMOTE_SWITCH) {
            links++;
            *switched = 1;
            continue;
        }
        memset(&pci, 0, sizeof pci);
        if (n->nvlink_remote_pci(n->device, l, &pci) == NVML_SUCCESS && pci.domain == domain &&
            pci.bus == bus && pci.device == device)
            links++;
    }
    return answered ? links : unsupported ? 0 : -1;
}

int probes_gpus_busy(const char *self_pci_bus_id)
{
    /* nvmlUtilization_t: percent of the last sample period with a kernel running, and with
     * device memory being read or written */
    struct nvml_utilization {
        unsigned gpu, memory;
    };
    typedef int (*count_fn)(unsigned *count);                         /* nvmlDeviceGetCount_v2 */
    typedef int (*by_index_fn)(unsigned index, void **device);        /* ..ByIndex_v2 */
    typedef int (*util_fn)(void *device, struct nvml_utilization *u); /* ..UtilizationRates */
    typedef int (*pci_fn)(void *device, struct nvml_pci_info *pci);   /* ..GetPciInfo_v3 */
    struct pt_nvml nv = {0}, *n = &nv;
    nvml_init_fn init;
    count_fn count;
    by_index_fn by_index;
    util_fn util;
    pci_fn pci;
    unsigned ngpu = 0, domain, bus, device;
    int busy = 0;

    if (sscanf(self_pci_bus_id, "%x:%x:%x", &domain, &bus, &device) != 3)
        return -1;
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return -1;
    SYM(init, "nvmlInit_v2");
    SYM(n->shutdown, "nvmlShutdown");
    SYM(count, "nvmlDeviceGetCount_v2");
    SYM(by_index, "nvmlDeviceGetHandleByIndex_v2");
    SYM(util, "nvmlDeviceGetUtilizationRates");
    SYM(pci, "nvmlDeviceGetPciInfo_v3");
    if (!init || !n->shutdown || !count || !by_index || !util || !pci || init() != NVML_SUCCESS) {
        dlclose(n->lib);
        return -1;
    }
    if (count(&ngpu) != NVML_SUCCESS)
        busy = -1;
    for (unsigned i = 0; busy >= 0 && i < ngpu; i++) {
        struct nvml_pci_info p;
        struct nvml_utilization u;
        void *dev = NULL;
        memset(&p, 0, sizeof p);
        if (by_index(i, &dev) != NVML_SUCCESS || pci(dev, &p) != NVML_SUCCESS)
            continue;
        if (p.domain == domain && p.bus == bus && p.device == device)
            continue; /* this GPU */
        if (util(dev, &u) == NVML_SUCCESS && (u.gpu > 0 || u.memory > 0))
            busy++;
    }
    n->shutdown();
    dlclose(n->lib);
    return busy;
}
