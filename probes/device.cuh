/*
 * device.cuh - device helpers shared by the probes' .cu files (internal to
 * probes/): data patterns whose checksums the host knows in closed form, random
 * values from a counter-based hash, and the loads whose cache operator matters.
 *
 * Verification scheme: buffers hold 32-bit words w[j] = j ^ PT_PATTERN_KEY; a read
 * kernel in verify mode XORs every word it read into one counter, and the host
 * compares with pt_xor_range(), the XOR of the word indices (an even number of
 * words cancels the key). A word read twice or never changes the answer.
 */
#ifndef RK_PROBES_DEVICE_CUH
#define RK_PROBES_DEVICE_CUH

#include <cstdint>
#include <cuda_runtime.h>

#define PT_PATTERN_KEY 0x9E3779B9u

/* XOR of 0..n (inclusive), the usual period-4 closed form. */
static inline __host__ __device__ uint32_t pt_xor_upto(uint64_t n)
{
    switch (n & 3) {
    case 0:
        return (uint32_t)n;
    case 1:
        return 1u;
    case 2:
        return (uint32_t)(n + 1);
    default:
        return 0u;
    }
}

/* XOR of the pattern words lo..hi-1 (indices, key applied when their count is odd). */
static inline __host__ __device__ uint32_t pt_xor_range(uint64_t lo, uint64_t hi)
{
    uint32_t x = (hi ? pt_xor_upto(hi - 1) : 0u) ^ (lo ? pt_xor_upto(lo - 1) : 0u);
    return ((hi - lo) & 1) ? x ^ PT_PATTERN_KEY : x;
}

/* splitmix64: a counter-based hash, so host and device draw the same values. */
static inline __host__ __device__ uint64_t pt_hash(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline __host__ __device__ double pt_uniform(uint64_t seed, uint64_t i)
{
    return (double)(pt_hash(seed ^ pt_hash(i)) >> 11) * (1.0 / 9007199254740992.0);
}

__global__ void pt_k_fill_pattern(uint32_t *w, size_t n, uint64_t base);
__global__ void pt_k_fill_uniform(double *x, size_t n, uint64_t seed);
/* b = a over n 16-byte elements, grid-stride, four loads in flight a thread (bandwidth.cu):
 * the DRAM copy, and the peer probes' SM copies, where a or b lies on the other GPU. */
__global__ void pt_k_copy(const double2 *__restrict__ a, double2 *__restrict__ b, size_t n);
/* Reads n 16-byte elements of a, grid-stride, four loads in flight a thread (bandwidth.cu): the
 * DRAM read, and the GPU's busy time ahead of launch_event's timed launch. verify: XORs the data
 * into sink[0]; else sink[1] is written only if the XOR is 0xFFFFFFFF, so the loads stay. */
__global__ void pt_k_dram_read(const uint4 *__restrict__ a, size_t n, uint32_t *sink, int verify);

/* 16-byte loads with an explicit cache operator; volatile so that loads of the
 * same address in a repeat loop are not merged (the point of a cache probe). */
static __device__ __forceinline__ uint4 pt_ld_ca(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.ca.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

static __device__ __forceinline__ uint4 pt_ld_cg(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

/* Weak (non-coherent) load that does not allocate in L1: served by the L2, near
 * partition copies included (ld.global.cg is .STRONG.GPU on sm_90: it goes to the
 * line's home partition). */
static __device__ __forceinline__ uint4 pt_ld_nc_na(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

static __device__ __forceinline__ uint4 pt_ld_shared(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr));
    return v;
}

/* One 4-byte shared-memory load (LDS.32): the width of the seeds' fp32 kernels' loads. */
static __device__ __forceinline__ uint32_t pt_ld_shared32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
    return v;
}

static __device__ __forceinline__ uint32_t pt_xor4(uint4 v)
{
    return v.x ^ v.y ^ v.z ^ v.w;
}

#endif /* RK_PROBES_DEVICE_CUH */
