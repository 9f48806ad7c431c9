/*
 * gpu_prog100.cu - a CUDA program that launches a known number of kernels (default 100: triad,
 * FMA loop, scale and increment in turn, on buffers 5x the L2), then prints a checksum of its
 * results. device-check.sh profiles it with roofkit and with ncu: the launch count, the
 * counters side by side, the wall time, and the checksum with and without roofkit.
 * Usage: gpu_prog100 [LAUNCHES [MIB]] [--kill-after N [--kill-delay S]]. Started by mpirun or srun
 * it takes the GPU of its local rank (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID), as MPI programs
 * do, for the many-GPU tests. --kill-after N: after the N-th launch, wait for the GPU
 * (cudaDeviceSynchronize), then S seconds (default 0), then SIGKILL itself, as the OOM killer or
 * a batch system's time limit would (kill-check.sh: what roofkit profile keeps of it).
 */
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <unistd.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "gpu_prog100: %s: %s\n", #call, cudaGetErrorString(e_));               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void triad(double *a, const double *b, const double *c, double s, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        a[i] = b[i] + s * c[i];
}

__global__ void fma_loop(float *x, float b, float c, int iters)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float a = x[i];
    for (int k = 0; k < iters; k++)
        a = fmaf(a, b, c);
    x[i] = a;
}

__global__ void scale(float *y, const float *x, float s, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = s * x[i];
}

__global__ void inc(float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] += 1.0f;
}

int main(int argc, char **argv)
{
    int kill_after = 0;
    double kill_delay = 0;
    for (int i = 1; i + 1 < argc; i++) /* the options come last; argc shrinks to the rest */
        if (strcmp(argv[i], "--kill-after") == 0 || strcmp(argv[i], "--kill-delay") == 0) {
            for (int j = i; j + 1 < argc; j += 2) {
                if (strcmp(argv[j], "--kill-after") == 0)
                    kill_after = atoi(argv[j + 1]);
                else if (strcmp(argv[j], "--kill-delay") == 0)
                    kill_delay = atof(argv[j + 1]);
            }
            argc = i;
            break;
        }
    int launches = argc > 1 ? atoi(argv[1]) : 100;
    /* argv[2]: MiB per array (default 256; a diagnostic of what profiling costs per byte) */
    long mib = argc > 2 ? atol(argv[2]) : 256;
    if (mib < 1)
        mib = 256;
    const size_t nd = (size_t)mib << 17; /* mib MiB per double array */
    const size_t nf = (size_t)mib << 18; /* mib MiB per float array */
    const int fma_blocks = 1024, fma_threads = 256;
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    int ngpu = 0;
    if (!local)
        local = getenv("SLURM_LOCALID");
    CHECK(cudaGetDeviceCount(&ngpu));
    if (local && ngpu > 0)
        CHECK(cudaSetDevice(atoi(local) % ngpu));
    double *a, *b, *c;
    float *x, *y, *f;
    CHECK(cudaMalloc(&a, nd * 8));
    CHECK(cudaMalloc(&b, nd * 8));
    CHECK(cudaMalloc(&c, nd * 8));
    CHECK(cudaMalloc(&x, nf * 4));
    CHECK(cudaMalloc(&y, nf * 4));
    CHECK(cudaMalloc(&f, (size_t)fma_blocks * fma_threads * 4));
    CHECK(cudaMemset(a, 0, nd * 8));
    CHECK(cudaMemset(b, 0, nd * 8));
    CHECK(cudaMemset(c, 0, nd * 8));
    CHECK(cudaMemset(x, 0, nf * 4));
    CHECK(cudaMemset(y, 0, nf * 4));
    CHECK(cudaMemset(f, 0, (size_t)fma_blocks * fma_threads * 4));
    for (int i = 0; i < launches; i++) {
        switch (i % 4) {
        case 0:
            triad<<<132 * 8, 256>>>(a, b, c, 3.0, nd);
            break;
        case 1:
            fma_loop<<<fma_blocks, fma_threads>>>(f, 1.0f, 0.5f, 2048);
            break;
        case 2:
            scale<<<132 * 8, 256>>>(y, x, 2.0f, nf);
            break;
        default:
            inc<<<132 * 8, 256>>>(x, nf);
            break;
        }
        CHECK(cudaGetLastError());
        if (i + 1 == kill_after) {
            CHECK(cudaDeviceSynchronize()); /* launch N has completed */
            printf("killing myself after launch %d\n", kill_after);
            fflush(stdout);
            if (kill_delay > 0)
                usleep((useconds_t)(kill_delay * 1e6));
            raise(SIGKILL); /* no exit handler runs, as under the OOM killer */
        }
    }
    CHECK(cudaDeviceSynchronize());
    float hx, hy, hf;
    CHECK(cudaMemcpy(&hx, x + nf - 1, 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&hy, y + 12345, 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&hf, f + 777, 4, cudaMemcpyDeviceToHost));
    printf("checksum x=%.1f y=%.1f f=%.1f launches=%d\n", hx, hy, hf, launches);
    return 0;
}
