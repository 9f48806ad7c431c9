// Which CUPTI callbacks fire for a <<<>>> launch on CUDA 13, and what cuFuncGetAttribute says.
#include <cuda.h>
#include <cupti.h>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>

__global__ void copy_k(float *o, const float *i, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        o[t] = i[t];
}

static void CUPTIAPI cb(void *, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data)
{
    if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
        if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
            const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
            const CUpti_ModuleResourceData *md =
                (const CUpti_ModuleResourceData *)rd->resourceDescriptor;
            printf("MODULE_LOADED cubin %zu bytes\n", md ? md->cubinSize : 0);
        }
        return;
    }
    const CUpti_CallbackData *d = (const CUpti_CallbackData *)data;
    const char *name = "";
    cuptiGetCallbackName(dom, id, &name);
    printf("%s %s %s site=%d sym=%s\n", dom == CUPTI_CB_DOMAIN_DRIVER_API ? "DRV" : "RT", name,
           d->functionName ? d->functionName : "-", d->callbackSite,
           d->symbolName ? d->symbolName : "-");
    if (dom == CUPTI_CB_DOMAIN_DRIVER_API && d->callbackSite == CUPTI_API_ENTER &&
        (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
         id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx)) {
        CUfunction f = id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel
                           ? ((const cuLaunchKernel_params *)d->functionParams)->f
                           : ((const cuLaunchKernelEx_params *)d->functionParams)->f;
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        typedef int (*fa)(int *, int, CUfunction);
        fa fn = h ? (fa)dlsym(h, "cuFuncGetAttribute") : nullptr;
        int v = -1;
        int rc = fn ? fn(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) : -99;
        printf("   dlopen %p fn %p rc %d NUM_REGS %d\n", h, (void *)fn, rc, v);
    }
}

int main()
{
    float *x;
    cudaMalloc(&x, 1 << 20);
    CUpti_SubscriberHandle s;
    printf("subscribe %d\n", (int)cuptiSubscribe(&s, (CUpti_CallbackFunc)cb, nullptr));
    printf("rt %d\n", (int)cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_RUNTIME_API));
    printf("drv %d\n", (int)cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_DRIVER_API));
    printf("res %d\n", (int)cuptiEnableDomain(1, s, CUPTI_CB_DOMAIN_RESOURCE));
    cudaFuncAttributes fa;
    cudaFuncGetAttributes(&fa, copy_k);
    printf("cudaFuncGetAttributes numRegs %d\n", fa.numRegs);
    copy_k<<<4, 128>>>(x + 1024, x, 1024);
    cudaDeviceSynchronize();
    cuptiUnsubscribe(s);
    return 0;
}
