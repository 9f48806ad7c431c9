/*
 * nvtx_prog.cu - a CUDA program whose kernels run in known NVTX ranges, for nvtx-check.sh: which
 * launches `roofkit profile --nvtx-include/--nvtx-exclude` stores against those Nsight Compute's
 * `--nvtx --nvtx-include/--nvtx-exclude` profiles, expression by expression. Each kernel has
 * its own name and is launched once, in this order (ranges at the launch, default domain
 * unless named; push/pop stacks bottom first):
 *
 *   k_before_start        none (before cudaProfilerStart)
 *   k_outside             none
 *   k_outer               push/pop outer
 *   k_inner               outer/inner
 *   k_leaf                outer/inner/leaf
 *   k_assemble            outer/inner, and Solver domain push/pop assemble
 *   k_outer_again         outer (inner popped)
 *   k_phase               start/end phase
 *   k_phase_outer         start/end phase, push/pop outer
 *   k_load                IO domain start/end load
 *   k_worker              push/pop worker, on a second thread (its own stack)
 *   k_last                none
 *   k_after_stop          none (after cudaProfilerStop)
 *
 * NVTX3 is header-only (CUDA 13's include/nvtx3): the ranges reach whichever tool
 * NVTX_INJECTION64_PATH names (roofkit's injection library, or ncu's).
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <thread>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "nvtx_prog: %s: %s\n", #call, cudaGetErrorString(e_));                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Each kernel adds its own number into x[0], so that no launch can be elided. */
#define KERNEL(name, v)                                                                            \
    __global__ void name(int *x)                                                                   \
    {                                                                                              \
        if (threadIdx.x == 0 && blockIdx.x == 0)                                                   \
            atomicAdd(x, v);                                                                       \
    }
KERNEL(k_before_start, 1)
KERNEL(k_outside, 2)
KERNEL(k_outer, 3)
KERNEL(k_inner, 4)
KERNEL(k_leaf, 5)
KERNEL(k_assemble, 6)
KERNEL(k_outer_again, 7)
KERNEL(k_phase, 8)
KERNEL(k_phase_outer, 9)
KERNEL(k_load, 10)
KERNEL(k_worker, 11)
KERNEL(k_last, 12)
KERNEL(k_after_stop, 13)

static int *dev;

/* One launch of kernel k, waited for. */
static void run(void (*k)(int *))
{
    k<<<1, 32>>>(dev);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

static nvtxEventAttributes_t message(const char *text)
{
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = text;
    return a;
}

int main()
{
    int sum = 0;
    CHECK(cudaMalloc(&dev, sizeof *dev));
    CHECK(cudaMemset(dev, 0, sizeof *dev));
    nvtxDomainHandle_t solver = nvtxDomainCreateA("Solver"), io = nvtxDomainCreateA("IO");
    run(k_before_start);
    CHECK(cudaProfilerStart());
    run(k_outside);
    nvtxRangePushA("outer");
    run(k_outer);
    nvtxRangePushA("inner");
    run(k_inner);
    nvtxRangePushA("leaf");
    run(k_leaf);
    nvtxRangePop();
    nvtxEventAttributes_t a = message("assemble");
    nvtxDomainRangePushEx(solver, &a);
    run(k_assemble);
    nvtxDomainRangePop(solver);
    nvtxRangePop();
    run(k_outer_again);
    nvtxRangePop();
    nvtxRangeId_t phase = nvtxRangeStartA("phase");
    run(k_phase);
    nvtxRangePushA("outer");
    run(k_phase_outer);
    nvtxRangePop();
    nvtxRangeEnd(phase);
    nvtxEventAttributes_t l = message("load");
    nvtxRangeId_t load = nvtxDomainRangeStartEx(io, &l);
    run(k_load);
    nvtxDomainRangeEnd(io, load);
    std::thread worker([] {
        nvtxRangePushA("worker");
        run(k_worker);
        nvtxRangePop();
    });
    worker.join();
    run(k_last);
    CHECK(cudaProfilerStop());
    run(k_after_stop);
    CHECK(cudaMemcpy(&sum, dev, sizeof sum, cudaMemcpyDeviceToHost));
    printf("nvtx_prog: sum %d (91 when every kernel ran)\n", sum);
    return sum == 91 ? 0 : 1;
}
