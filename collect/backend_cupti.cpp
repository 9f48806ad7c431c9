/*
 * backend_cupti.cpp - the CUPTI backend of collect/ (backend.h): launch callbacks, Activity
 * kernel records, the Range Profiler (AutoRange + KernelReplay) and host-side evaluation.
 *
 * It is roofkit's only C++ file because cupti_profiler_host.h includes <string> and does not
 * compile as C; everything it exports is extern "C" and it keeps no C++ types in its
 * interface. It also demangles names with abi::__cxa_demangle.
 *
 * Assumes CUDA 13 / CUPTI 13 (CUPTI_API_VERSION >= 130001): the Event and Metric APIs are gone,
 * the cuptiProfiler* session calls are deprecated, the Range Profiler is current.
 * Needs no libcuda at link time: contexts come from callbacks, devices from cuptiGetDeviceId.
 * Every call is checked; failures return the CUPTI result code for session.c to decide on.
 */
#include "backend.h"

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cxxabi.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace
{

/* A zeroed CUPTI parameter struct with its size set (every *_Params starts this way). */
template <class T> T params(size_t size)
{
    T p;
    memset(&p, 0, sizeof p);
    p.structSize = size;
    return p;
}
#define PARAMS(T) params<T>(T##_STRUCT_SIZE)

/* ---------------------------------------------------------------- host side */

pthread_mutex_t host_mu = PTHREAD_MUTEX_INITIALIZER;
int profiler_initialized; /* cuptiProfilerInitialize done in this process */
CUpti_Profiler_Host_Object *host_cached;
char host_cached_chip[64];

int host_init(const char *chip, const uint8_t *avail, CUpti_Profiler_Host_Object **out)
{
    auto p = PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip;
    p.pCounterAvailabilityImage = avail;
    CUptiResult rc = cuptiProfilerHostInitialize(&p);
    *out = rc == CUPTI_SUCCESS ? p.pHostObject : nullptr;
    return rc;
}

void host_deinit(CUpti_Profiler_Host_Object *h)
{
    if (!h)
        return;
    auto p = PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = h;
    cuptiProfilerHostDeinitialize(&p);
}

/* Builds a config image for raw[0..n) on host object h; *passes gets its pass count. */
int host_config(CUpti_Profiler_Host_Object *h, const char *const *raw, int n, uint8_t **image,
                size_t *size, int *passes)
{
    *image = nullptr;
    *size = 0;
    auto add = PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = h;
    add.ppMetricNames = const_cast<const char **>(raw);
    add.numMetrics = (size_t)n;
    CUptiResult rc = cuptiProfilerHostConfigAddMetrics(&add);
    if (rc != CUPTI_SUCCESS)
        return rc;
    auto gs = PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    gs.pHostObject = h;
    if ((rc = cuptiProfilerHostGetConfigImageSize(&gs)) != CUPTI_SUCCESS)
        return rc;
    uint8_t *img = (uint8_t *)malloc(gs.configImageSize ? gs.configImageSize : 1);
    if (!img)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    auto gi = PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    gi.pHostObject = h;
    gi.configImageSize = gs.configImageSize;
    gi.pConfigImage = img;
    if ((rc = cuptiProfilerHostGetConfigImage(&gi)) != CUPTI_SUCCESS) {
        free(img);
        return rc;
    }
    auto np = PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    np.configImageSize = gs.configImageSize;
    np.pConfigImage = img;
    if ((rc = cuptiProfilerHostGetNumOfPasses(&np)) != CUPTI_SUCCESS) {
        free(img);
        return rc;
    }
    *passes = (int)np.numOfPasses;
    *image = img;
    *size = gs.configImageSize;
    return CUPTI_SUCCESS;
}

const char *cupti_strerror(int code)
{
    const char *s = nullptr;
    if (cuptiGetResultString((CUptiResult)code, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}

int cupti_host_check(const char *chip, const char *raw, char *unit, size_t unit_size)
{
    int rc = CUPTI_SUCCESS;
    pthread_mutex_lock(&host_mu);
    if (!host_cached || strcmp(host_cached_chip, chip) != 0) {
        host_deinit(host_cached);
        host_cached = nullptr;
        if ((rc = host_init(chip, nullptr, &host_cached)) == CUPTI_SUCCESS)
            snprintf(host_cached_chip, sizeof host_cached_chip, "%s", chip);
    }
    if (rc == CUPTI_SUCCESS) {
        auto p = PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
        p.pHostObject = host_cached;
        p.pMetricName = raw;
        rc = cuptiProfilerHostGetMetricProperties(&p);
        if (rc == CUPTI_SUCCESS && unit)
            snprintf(unit, unit_size, "%s", p.pDimUnit ? p.pDimUnit : "");
    }
    pthread_mutex_unlock(&host_mu);
    return rc;
}

int cupti_host_passes(const char *chip, const char *const *raw, int n, int *passes)
{
    CUpti_Profiler_Host_Object *h = nullptr;
    uint8_t *img = nullptr;
    size_t size = 0;
    *passes = 0;
    if (n == 0)
        return CUPTI_SUCCESS;
    int rc = host_init(chip, nullptr, &h);
    if (rc == CUPTI_SUCCESS)
        rc = host_config(h, raw, n, &img, &size, passes);
    free(img);
    host_deinit(h);
    return rc;
}

/*
 * cuptiDeviceGetChipName crashes (SIGSEGV, CUDA 13.0) when no driver is installed, so ask the
 * driver first, through dlopen: roofkit does not link libcuda and must start without it.
 */
int driver_has_device(int device)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!cuda)
        return 0;
    auto cu_init = reinterpret_cast<int (*)(unsigned)>(dlsym(cuda, "cuInit"));
    auto cu_count = reinterpret_cast<int (*)(int *)>(dlsym(cuda, "cuDeviceGetCount"));
    int count = 0;
    int ok = cu_init && cu_count && cu_init(0) == 0 && cu_count(&count) == 0 && device < count;
    /* libcuda stays loaded: unloading a driver library is never safe. */
    return ok;
}

int cupti_chip_name(int device, char *buf, size_t size)
{
    if (device < 0 || !driver_has_device(device))
        return CUPTI_ERROR_INVALID_DEVICE;
    /* Without cuptiProfilerInitialize, cuptiDeviceGetChipName crashes too (seen on the H100). */
    if (!profiler_initialized) {
        auto ip = PARAMS(CUpti_Profiler_Initialize_Params);
        CUptiResult irc = cuptiProfilerInitialize(&ip);
        if (irc != CUPTI_SUCCESS)
            return irc;
        profiler_initialized = 1;
    }
    auto p = PARAMS(CUpti_Device_GetChipName_Params);
    p.deviceIndex = (size_t)device;
    CUptiResult rc = cuptiDeviceGetChipName(&p);
    if (rc == CUPTI_SUCCESS)
        snprintf(buf, size, "%s", p.pChipName ? p.pChipName : "");
    return rc;
}

/* ---------------------------------------------------------------- tracing */

const struct bk_hooks *hooks; /* set while tracing */
CUpti_SubscriberHandle subscriber;
int tracing, activity_on;
thread_local int launch_depth; /* launch API calls open on this thread */

const size_t kActivityBuffer = 8u << 20;

void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = nullptr;
    if (posix_memalign(&p, 8, kActivityBuffer) != 0)
        p = nullptr;
    *buffer = (uint8_t *)p;
    *size = p ? kActivityBuffer : 0;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)size;
    CUpti_Activity *rec = nullptr;
    const struct bk_hooks *h = hooks;
    while (h && valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_KERNEL &&
            rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            continue;
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        struct bk_kernel out;
        memset(&out, 0, sizeof out);
        out.corr = k->correlationId;
        out.name = k->name;
        out.grid[0] = (uint32_t)k->gridX;
        out.grid[1] = (uint32_t)k->gridY;
        out.grid[2] = (uint32_t)k->gridZ;
        out.block[0] = (uint32_t)k->blockX;
        out.block[1] = (uint32_t)k->blockY;
        out.block[2] = (uint32_t)k->blockZ;
        out.cluster[0] = k->clusterX;
        out.cluster[1] = k->clusterY;
        out.cluster[2] = k->clusterZ;
        out.registers = k->registersPerThread;
        out.static_smem = k->staticSharedMemory;
        out.dynamic_smem = k->dynamicSharedMemory;
        out.local_mem = (int)k->localMemoryPerThread;
        out.start = k->start;
        out.end = k->end;
        out.device = k->deviceId;
        out.context = k->contextId;
        out.stream = k->streamId;
        out.graph_node = k->graphNodeId;
        h->kernel(h->arg, &out);
    }
    size_t dropped = 0;
    if (h && cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        h->dropped(h->arg, dropped);
    free(buffer);
}

int is_runtime_launch(CUpti_CallbackId cbid, int *graph)
{
    *graph = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
             cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
    return *graph || cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
           cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000;
}

int is_driver_launch(CUpti_CallbackId cbid, int *graph)
{
    *graph = cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
             cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
    return *graph || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
}

/* cuFuncGetAttribute from the driver the program already loaded (roofkit does not link it). */
typedef int (*func_attr_fn)(int *, int, CUfunction);
func_attr_fn func_attr(void)
{
    static func_attr_fn fn;
    static int looked;
    if (!looked) {
        void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (cuda)
            fn = reinterpret_cast<func_attr_fn>(dlsym(cuda, "cuFuncGetAttribute"));
        looked = 1;
    }
    return fn;
}

/* cuKernelGetFunction, looked up the same way (CUDA 12 and newer drivers). */
typedef int (*kernel_function_fn)(CUfunction *, CUkernel);
kernel_function_fn kernel_function(void)
{
    static kernel_function_fn fn;
    static int looked;
    if (!looked) {
        void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (cuda)
            fn = reinterpret_cast<kernel_function_fn>(dlsym(cuda, "cuKernelGetFunction"));
        looked = 1;
    }
    return fn;
}

/*
 * A driver launch's configuration from its parameters, and ptxas's registers, static shared
 * and local memory from the function. The Activity record reports registers as allocated
 * (rounded up to a multiple of 8: 16 for a 12-register kernel on the H100), so ptxas's count
 * comes from here.
 */
void fill_config(CUpti_CallbackId cbid, const void *params, struct bk_launch *l, CUstream *stream)
{
    CUfunction f = nullptr;
    *stream = nullptr;
    l->has_config = 0;
    l->registers = l->static_smem = l->local_mem = -1;
    if (!params)
        return;
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
        cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz) {
        const cuLaunchKernel_params *p = (const cuLaunchKernel_params *)params;
        f = p->f;
        *stream = p->hStream;
        l->grid[0] = p->gridDimX, l->grid[1] = p->gridDimY, l->grid[2] = p->gridDimZ;
        l->block[0] = p->blockDimX, l->block[1] = p->blockDimY, l->block[2] = p->blockDimZ;
        l->dynamic_smem = (int)p->sharedMemBytes;
    } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
               cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz) {
        const cuLaunchCooperativeKernel_params *p =
            (const cuLaunchCooperativeKernel_params *)params;
        f = p->f;
        *stream = p->hStream;
        l->grid[0] = p->gridDimX, l->grid[1] = p->gridDimY, l->grid[2] = p->gridDimZ;
        l->block[0] = p->blockDimX, l->block[1] = p->blockDimY, l->block[2] = p->blockDimZ;
        l->dynamic_smem = (int)p->sharedMemBytes;
    } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
               cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
        const cuLaunchKernelEx_params *p = (const cuLaunchKernelEx_params *)params;
        if (!p->config)
            return;
        f = p->f;
        *stream = p->config->hStream;
        l->grid[0] = p->config->gridDimX, l->grid[1] = p->config->gridDimY;
        l->grid[2] = p->config->gridDimZ;
        l->block[0] = p->config->blockDimX, l->block[1] = p->config->blockDimY;
        l->block[2] = p->config->blockDimZ;
        l->dynamic_smem = (int)p->config->sharedMemBytes;
    } else {
        return;
    }
    l->has_config = 1;
    func_attr_fn attr = func_attr();
    int v = 0;
    /* Since CUDA 12 the runtime launches a library kernel: p->f is a CUkernel, which
     * cuFuncGetAttribute refuses (CUDA_ERROR_INVALID_HANDLE, seen on the H100 with CUDA 13).
     * cuKernelGetFunction gives the context's CUfunction for it. */
    if (attr && f && attr(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) != 0) {
        kernel_function_fn kf = kernel_function();
        CUfunction g = nullptr;
        if (kf && kf(&g, reinterpret_cast<CUkernel>(f)) == 0 && g)
            f = g;
    }
    if (attr && f && attr(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == 0)
        l->registers = v;
    if (attr && f && attr(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == 0)
        l->static_smem = v;
    if (attr && f && attr(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) == 0)
        l->local_mem = v;
}

/* The synchronizing calls whose end lets session.c decode its open batches (backend.h). */
const CUpti_CallbackId sync_runtime_ids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
};
const CUpti_CallbackId sync_driver_ids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,         CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,          CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
};
static_assert(sizeof sync_runtime_ids == sizeof sync_driver_ids, "one table length for both");

/* cu(da)ProfilerStart: 1, cu(da)ProfilerStop: 0, anything else: -1. */
int profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000  ? 1
               : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 ? 0
                                                                         : -1;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        return cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart  ? 1
               : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop ? 0
                                                                : -1;
    return -1;
}

int is_sync(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    const CUpti_CallbackId *ids = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? sync_runtime_ids
                                  : domain == CUPTI_CB_DOMAIN_DRIVER_API ? sync_driver_ids
                                                                         : nullptr;
    for (size_t i = 0; ids && i < sizeof sync_runtime_ids / sizeof *ids; i++)
        if (ids[i] == cbid)
            return 1;
    return 0;
}

int is_ptsz(CUpti_CallbackId cbid)
{
    return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
}

/* The device, context and stream ids the launch's Activity record will carry; the context's two
 * are looked up once per context (each a CUPTI call). */
void fill_ids(CUcontext ctx, CUstream stream, int per_thread, struct bk_launch *l)
{
    static thread_local CUcontext last;
    static thread_local uint32_t last_device, last_context;
    if (!ctx)
        return;
    if (ctx != last) {
        if (cuptiGetDeviceId(ctx, &last_device) != CUPTI_SUCCESS ||
            cuptiGetContextId(ctx, &last_context) != CUPTI_SUCCESS) {
            last = nullptr;
            return;
        }
        last = ctx;
    }
    uint32_t sid = 0;
    if (cuptiGetStreamIdEx(ctx, stream, (uint8_t)per_thread, &sid) != CUPTI_SUCCESS)
        return;
    l->device = last_device;
    l->context = last_context;
    l->stream = sid;
    l->has_ids = 1;
}

void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void *data)
{
    (void)user;
    const struct bk_hooks *h = hooks;
    if (!h)
        return;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
            h->context_destroy(h->arg, rd->context);
        } else if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED && rd->resourceDescriptor) {
            const CUpti_ModuleResourceData *md =
                (const CUpti_ModuleResourceData *)rd->resourceDescriptor;
            h->module(h->arg, md->pCubin, md->cubinSize);
        }
        return;
    }
    int graph = 0, runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
    if (is_sync(domain, cbid)) {
        if (cb->callbackSite == CUPTI_API_EXIT && h->sync)
            h->sync(h->arg, cb->context);
        return;
    }
    int on = profiler_call(domain, cbid);
    if (on >= 0) {
        /* a start counts from its end, a stop from its beginning (the runtime's call and the
         * driver's inside it both report: the session takes the first) */
        if (h->profiler && (cb->callbackSite == CUPTI_API_EXIT) == (on == 1))
            h->profiler(h->arg, on);
        return;
    }
    if (runtime ? !is_runtime_launch(cbid, &graph) : !is_driver_launch(cbid, &graph))
        return;
    struct bk_launch l;
    CUstream stream = nullptr;
    memset(&l, 0, sizeof l);
    if (!runtime && cb->callbackSite == CUPTI_API_ENTER) {
        fill_config(cbid, cb->functionParams, &l, &stream);
        if (l.has_config)
            fill_ids(cb->context, stream, is_ptsz(cbid), &l);
    } else {
        l.registers = l.static_smem = l.local_mem = -1;
    }
    l.ctx = cb->context;
    l.corr = cb->correlationId;
    l.symbol = cb->symbolName;
    l.graph = graph;
    /* A launch API called inside another (cudaLaunchKernel -> cuLaunchKernel, or one runtime
     * entry point calling another) is the same launch: only the outermost one is reported as a
     * launch, the inner ones as nested. */
    if (cb->callbackSite == CUPTI_API_ENTER) {
        h->launch_enter(h->arg, &l, launch_depth > 0);
        launch_depth++;
    } else {
        if (launch_depth > 0)
            launch_depth--;
        h->launch_exit(h->arg, &l, launch_depth > 0);
    }
}

int enable_callbacks(CUpti_CallbackDomain domain, int driver)
{
    static const CUpti_CallbackId runtime_ids[] = {
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
        CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
        CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
        CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
        CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    };
    static const CUpti_CallbackId driver_ids[] = {
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
        CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    };
    const CUpti_CallbackId *ids = driver ? driver_ids : runtime_ids;
    size_t n = driver ? sizeof driver_ids / sizeof *ids : sizeof runtime_ids / sizeof *ids;
    for (size_t i = 0; i < n; i++) {
        CUptiResult rc = cuptiEnableCallback(1, subscriber, domain, ids[i]);
        if (rc != CUPTI_SUCCESS)
            return rc;
    }
    return CUPTI_SUCCESS;
}

void cupti_trace_stop(void);

int cupti_trace_start(const struct bk_hooks *h, int timing_only)
{
    CUptiResult rc;
    if (tracing)
        return CUPTI_ERROR_INVALID_OPERATION;
    hooks = h;
    if ((rc = cuptiSubscribe(&subscriber, on_callback, nullptr)) != CUPTI_SUCCESS) {
        subscriber = nullptr;
        hooks = nullptr;
        return rc;
    }
    tracing = 1;
    int brc = enable_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, 0);
    if (brc == CUPTI_SUCCESS)
        brc = enable_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, 1);
    if (h->profiler && brc == CUPTI_SUCCESS)
        brc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    if (h->profiler && brc == CUPTI_SUCCESS)
        brc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    if (h->profiler && brc == CUPTI_SUCCESS)
        brc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                  CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    if (h->profiler && brc == CUPTI_SUCCESS)
        brc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                  CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    for (size_t i = 0;
         h->sync && brc == CUPTI_SUCCESS && i < sizeof sync_runtime_ids / sizeof *sync_runtime_ids;
         i++) {
        brc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, sync_runtime_ids[i]);
        if (brc == CUPTI_SUCCESS)
            brc =
                cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, sync_driver_ids[i]);
    }
    if (brc == CUPTI_SUCCESS)
        brc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (brc == CUPTI_SUCCESS)
        brc = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                  CUPTI_CBID_RESOURCE_MODULE_LOADED);
    if (brc == CUPTI_SUCCESS)
        brc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    /* ROOFKIT_NO_ACTIVITY=1 (a diagnostic for overhead studies, and what `roofkit profile` sets
     * for the runs of application replay before the last): in counter mode, take the
     * launch configuration from the launch calls only, without Activity records. */
    const char *no_activity = getenv("ROOFKIT_NO_ACTIVITY");
    int want_activity = timing_only || !no_activity || strcmp(no_activity, "1") != 0;
    if (brc == CUPTI_SUCCESS && want_activity &&
        (brc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) == CUPTI_SUCCESS)
        activity_on = 1;
    if (brc != CUPTI_SUCCESS) {
        cupti_trace_stop();
        return brc;
    }
    return CUPTI_SUCCESS;
}

int cupti_trace_flush(void)
{
    return cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* Only the buffers whose records are all complete: "can be done at a regular interval in a
 * separate thread" (cupti_activity.h, cuptiActivityFlushAll). */
int cupti_trace_poll(void)
{
    return activity_on ? cuptiActivityFlushAll(0) : CUPTI_SUCCESS;
}

/* CUPTI's clock, the Activity records' (0 when CUPTI cannot read it). */
uint64_t cupti_timestamp(void)
{
    uint64_t t = 0;
    return cuptiGetTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
}

void cupti_trace_stop(void)
{
    if (activity_on) {
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        activity_on = 0;
    }
    if (subscriber)
        cuptiUnsubscribe(subscriber);
    subscriber = nullptr;
    if (profiler_initialized) {
        auto p = PARAMS(CUpti_Profiler_DeInitialize_Params);
        cuptiProfilerDeInitialize(&p);
        profiler_initialized = 0;
    }
    hooks = nullptr;
    tracing = 0;
}

/* ---------------------------------------------------------------- range profiler */

struct prof {
    CUpti_RangeProfiler_Object *obj;
    CUpti_Profiler_Host_Object *host;
    uint8_t *config;
    size_t config_size;
    uint8_t *image;
    size_t image_size;
    int max_ranges;
    int n;
    const char **raw; /* copies */
    int user_replay;  /* CUPTI_UserReplay instead of CUPTI_KernelReplay (see cupti_prof_enable) */
};

int set_config(struct prof *p)
{
    auto sc = PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    sc.pRangeProfilerObject = p->obj;
    sc.configSize = p->config_size;
    sc.pConfig = p->config;
    sc.counterDataImageSize = p->image_size;
    sc.pCounterDataImage = p->image;
    sc.range = CUPTI_AutoRange;
    sc.replayMode = p->user_replay ? CUPTI_UserReplay : CUPTI_KernelReplay;
    sc.maxRangesPerPass = (size_t)p->max_ranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    return cuptiRangeProfilerSetConfig(&sc);
}

int init_image(struct prof *p)
{
    auto ci = PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    ci.pRangeProfilerObject = p->obj;
    ci.counterDataSize = p->image_size;
    ci.pCounterData = p->image;
    return cuptiRangeProfilerCounterDataImageInitialize(&ci);
}

void prof_free(struct prof *p)
{
    if (!p)
        return;
    if (p->obj) {
        auto d = PARAMS(CUpti_RangeProfiler_Disable_Params);
        d.pRangeProfilerObject = p->obj;
        cuptiRangeProfilerDisable(&d);
    }
    host_deinit(p->host);
    for (int i = 0; p->raw && i < p->n; i++)
        free((void *)p->raw[i]);
    free(p->raw);
    free(p->config);
    free(p->image);
    free(p);
}

/* Maps cuptiProfilerDeviceSupported's answer to the error code that names the cause. */
int support_code(const CUpti_Profiler_DeviceSupported_Params &s)
{
    if (s.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return CUPTI_SUCCESS;
    if (s.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
        return CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES;
    if (s.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED;
    if (s.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED;
    if (s.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED;
    if (s.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED;
    if (s.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
        return CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED;
    return CUPTI_ERROR_NOT_SUPPORTED;
}

int cupti_prof_enable(void *ctx_, const char *const *raw, int n, int max_ranges, int user_replay_ok,
                      void **out, int *passes, char *chip, size_t chip_size)
{
    CUcontext ctx = (CUcontext)ctx_;
    struct prof *p = nullptr;
    uint8_t *avail = nullptr;
    uint32_t dev = 0;
    int rc;
    *out = nullptr;
    if (!profiler_initialized) {
        auto ip = PARAMS(CUpti_Profiler_Initialize_Params);
        if ((rc = cuptiProfilerInitialize(&ip)) != CUPTI_SUCCESS)
            return rc;
        profiler_initialized = 1;
    }
    if ((rc = cuptiGetDeviceId(ctx, &dev)) != CUPTI_SUCCESS)
        return rc;
    {
        auto ds = PARAMS(CUpti_Profiler_DeviceSupported_Params);
        ds.cuDevice = (CUdevice)dev;
        ds.api = CUPTI_PROFILER_RANGE_PROFILING;
        if ((rc = cuptiProfilerDeviceSupported(&ds)) != CUPTI_SUCCESS)
            return rc;
        if ((rc = support_code(ds)) != CUPTI_SUCCESS)
            return rc;
    }
    if ((rc = cupti_chip_name((int)dev, chip, chip_size)) != CUPTI_SUCCESS)
        return rc;
    if (!(p = (struct prof *)calloc(1, sizeof *p)))
        return CUPTI_ERROR_OUT_OF_MEMORY;
    p->max_ranges = max_ranges;
    if (!(p->raw = (const char **)calloc((size_t)n + 1, sizeof *p->raw))) {
        rc = CUPTI_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    for (int i = 0; i < n; i++, p->n++)
        if (!(p->raw[i] = strdup(raw[i]))) {
            rc = CUPTI_ERROR_OUT_OF_MEMORY;
            goto out;
        }
    {
        /* The availability query must come before the profiler is enabled. */
        auto ca = PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
        ca.ctx = ctx;
        if ((rc = cuptiProfilerGetCounterAvailability(&ca)) != CUPTI_SUCCESS)
            goto out;
        if (!(avail = (uint8_t *)malloc(ca.counterAvailabilityImageSize + 1))) {
            rc = CUPTI_ERROR_OUT_OF_MEMORY;
            goto out;
        }
        ca.pCounterAvailabilityImage = avail;
        if ((rc = cuptiProfilerGetCounterAvailability(&ca)) != CUPTI_SUCCESS)
            goto out;
    }
    if ((rc = host_init(chip, avail, &p->host)) != CUPTI_SUCCESS)
        goto out;
    if ((rc = host_config(p->host, p->raw, n, &p->config, &p->config_size, passes)) !=
        CUPTI_SUCCESS)
        goto out;
    p->user_replay = user_replay_ok && *passes == 1; /* session.c's decision (backend.h) */
    {
        auto en = PARAMS(CUpti_RangeProfiler_Enable_Params);
        en.ctx = ctx;
        if ((rc = cuptiRangeProfilerEnable(&en)) != CUPTI_SUCCESS)
            goto out;
        p->obj = en.pRangeProfilerObject;
    }
    {
        auto sz = PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
        sz.pRangeProfilerObject = p->obj;
        sz.pMetricNames = p->raw;
        sz.numMetrics = (size_t)n;
        sz.maxNumOfRanges = (size_t)max_ranges;
        sz.maxNumRangeTreeNodes = (uint32_t)max_ranges;
        if ((rc = cuptiRangeProfilerGetCounterDataSize(&sz)) != CUPTI_SUCCESS)
            goto out;
        p->image_size = sz.counterDataSize;
        if (!(p->image = (uint8_t *)malloc(p->image_size))) {
            rc = CUPTI_ERROR_OUT_OF_MEMORY;
            goto out;
        }
    }
    if ((rc = init_image(p)) != CUPTI_SUCCESS)
        goto out;
    rc = set_config(p);
out:
    free(avail);
    if (rc != CUPTI_SUCCESS) {
        prof_free(p);
        return rc;
    }
    *out = p;
    return CUPTI_SUCCESS;
}

int cupti_prof_start(void *p_)
{
    auto s = PARAMS(CUpti_RangeProfiler_Start_Params);
    s.pRangeProfilerObject = ((struct prof *)p_)->obj;
    return cuptiRangeProfilerStart(&s);
}

int cupti_prof_stop(void *p_)
{
    auto s = PARAMS(CUpti_RangeProfiler_Stop_Params);
    s.pRangeProfilerObject = ((struct prof *)p_)->obj;
    CUptiResult rc = cuptiRangeProfilerStop(&s);
    /* Kernel replay submits every pass inside the launch, and user replay is only used for
     * one-pass sets; anything else is a bug. */
    if (rc == CUPTI_SUCCESS && !s.isAllPassSubmitted)
        return CUPTI_ERROR_INVALID_OPERATION;
    return rc;
}

int cupti_prof_decode(void *p_, int *nranges, int *ndropped)
{
    struct prof *p = (struct prof *)p_;
    auto d = PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    d.pRangeProfilerObject = p->obj;
    CUptiResult rc = cuptiRangeProfilerDecodeData(&d);
    if (rc != CUPTI_SUCCESS)
        return rc;
    *ndropped = (int)d.numOfRangeDropped;
    auto info = PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    info.pCounterDataImage = p->image;
    info.counterDataImageSize = p->image_size;
    if ((rc = cuptiRangeProfilerGetCounterDataInfo(&info)) != CUPTI_SUCCESS)
        return rc;
    *nranges = (int)info.numTotalRanges;
    return CUPTI_SUCCESS;
}

int evaluate(CUpti_Profiler_Host_Object *h, const uint8_t *image, size_t size, int range,
             const char **raw, int n, double *values)
{
    auto e = PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    e.pHostObject = h;
    e.pCounterDataImage = image;
    e.counterDataImageSize = size;
    e.rangeIndex = (size_t)range;
    e.ppMetricNames = raw;
    e.numMetrics = (size_t)n;
    e.pMetricValues = values;
    return cuptiProfilerHostEvaluateToGpuValues(&e);
}

int cupti_prof_eval(void *p_, int range, double *values)
{
    struct prof *p = (struct prof *)p_;
    return evaluate(p->host, p->image, p->image_size, range, p->raw, p->n, values);
}

int cupti_prof_reset(void *p_)
{
    struct prof *p = (struct prof *)p_;
    int rc = init_image(p);
    if (rc != CUPTI_SUCCESS)
        return rc;
    /* ROOFKIT_CUPTI_RESET=image skips the second SetConfig (a diagnostic switch). */
    const char *how = getenv("ROOFKIT_CUPTI_RESET");
    if (how && strcmp(how, "image") == 0)
        return CUPTI_SUCCESS;
    return set_config(p);
}

int cupti_prof_dump(void *p_, const char *path)
{
    struct prof *p = (struct prof *)p_;
    FILE *f = fopen(path, "wb");
    if (!f)
        return CUPTI_ERROR_UNKNOWN;
    size_t w = fwrite(p->image, 1, p->image_size, f);
    int bad = fclose(f) != 0 || w != p->image_size;
    return bad ? CUPTI_ERROR_UNKNOWN : CUPTI_SUCCESS;
}

void cupti_prof_disable(void *p_)
{
    prof_free((struct prof *)p_);
}

} // namespace

extern "C" {

const struct bk_ops bk_cupti = {
    "cupti",           cupti_strerror,    cupti_host_check,  cupti_host_passes,
    cupti_chip_name,   cupti_trace_start, cupti_trace_flush, cupti_trace_stop,
    cupti_prof_enable, cupti_prof_start,  cupti_prof_stop,   cupti_prof_decode,
    cupti_prof_eval,   cupti_prof_reset,  cupti_prof_dump,   cupti_prof_disable,
    cupti_trace_poll,  cupti_timestamp,
};

char *bk_demangle(const char *name)
{
    int status = 0;
    char *d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (d && status == 0)
        return d; /* malloc'd by the ABI */
    free(d);
    return strdup(name);
}

int bk_eval_image(const char *chip, const uint8_t *image, size_t size, int range,
                  const char *const *raw, int n, double *values, int *nranges)
{
    CUpti_Profiler_Host_Object *h = nullptr;
    uint8_t *config = nullptr;
    size_t config_size = 0;
    int passes = 0;
    auto info = PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    info.pCounterDataImage = image;
    info.counterDataImageSize = size;
    int rc = cuptiRangeProfilerGetCounterDataInfo(&info);
    if (rc != CUPTI_SUCCESS)
        return rc;
    *nranges = (int)info.numTotalRanges;
    if ((rc = host_init(chip, nullptr, &h)) == CUPTI_SUCCESS &&
        (rc = host_config(h, raw, n, &config, &config_size, &passes)) == CUPTI_SUCCESS)
        rc = evaluate(h, image, size, range, const_cast<const char **>(raw), n, values);
    free(config);
    host_deinit(h);
    return rc;
}

} // extern "C"
