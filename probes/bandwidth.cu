/*
 * bandwidth.cu - the bandwidth probes: DRAM read, write, copy and triad
 * (BabelStream's kernels with 16-byte accesses), L2 read by all SMs, L1 and
 * shared-memory read rates summed over the SMs, and pinned host<->device copies.
 *
 * Assumptions and method:
 *   - DRAM buffers are at least 8x the L2 (and at least 1 GiB), so no repetition
 *     finds its data in the L2. Several block sizes and grid shapes are timed; the
 *     configuration with the best median is kept, with its min and max.
 *   - bw_dram_copy also times cudaMemcpy device to device on the same buffers in
 *     the same run and stores it in params (the copy ceiling is judged as a ratio to it).
 *   - Cache probes read with explicit cache operators (ld.global.cg: L2 only;
 *     ld.global.ca: L1) through volatile asm, so the repeat loops are not folded.
 *   - Every kernel is checked before it is timed: read kernels XOR every word they
 *     read (device.cuh), write/copy/triad outputs are compared in float64.
 *   - Dead-code guard: read kernels store their XOR only when it equals `never`, a
 *     value the host picks so that it cannot match; the compiler cannot know that,
 *     so every load stays.
 */
#include "device.cuh"
#include "internal.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define NEVER 0xFFFFFFFFu /* read kernels' XOR can equal it; only verify mode asks */

__global__ void pt_k_fill_pattern(uint32_t *w, size_t n, uint64_t base)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        w[i] = (uint32_t)(base + i) ^ PT_PATTERN_KEY;
}

__global__ void pt_k_fill_uniform(double *x, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = pt_uniform(seed, i);
}

/* ---- DRAM ---- */

/* Grid-stride read with four 16-byte loads in flight per thread (device.cuh). */
__global__ void pt_k_dram_read(const uint4 *__restrict__ a, size_t n, uint32_t *sink, int verify)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t st = (size_t)gridDim.x * blockDim.x;
    uint32_t acc = 0;
    for (; i + 3 * st < n; i += 4 * st) {
        uint4 v0 = a[i], v1 = a[i + st], v2 = a[i + 2 * st], v3 = a[i + 3 * st];
        acc ^= pt_xor4(v0) ^ pt_xor4(v1) ^ pt_xor4(v2) ^ pt_xor4(v3);
    }
    for (; i < n; i += st)
        acc ^= pt_xor4(a[i]);
    if (verify)
        atomicXor(sink, acc);
    else if (acc == NEVER) /* never taken in timed runs: keeps the loads alive */
        sink[1] = acc;
}

__global__ void k_dram_write(double2 *__restrict__ b, size_t n, double s)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t st = (size_t)gridDim.x * blockDim.x;
    const double2 v = make_double2(s, s);
    for (; i + 3 * st < n; i += 4 * st) {
        b[i] = v;
        b[i + st] = v;
        b[i + 2 * st] = v;
        b[i + 3 * st] = v;
    }
    for (; i < n; i += st)
        b[i] = v;
}

__global__ void pt_k_copy(const double2 *__restrict__ a, double2 *__restrict__ b, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t st = (size_t)gridDim.x * blockDim.x;
    for (; i + 3 * st < n; i += 4 * st) {
        double2 v0 = a[i], v1 = a[i + st], v2 = a[i + 2 * st], v3 = a[i + 3 * st];
        b[i] = v0;
        b[i + st] = v1;
        b[i + 2 * st] = v2;
        b[i + 3 * st] = v3;
    }
    for (; i < n; i += st)
        b[i] = a[i];
}

__global__ void k_dram_triad(double2 *__restrict__ a, const double2 *__restrict__ b,
                             const double2 *__restrict__ c, size_t n, double s)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t st = (size_t)gridDim.x * blockDim.x;
    for (; i + 1 * st < n; i += 2 * st) {
        double2 b0 = b[i], b1 = b[i + st], c0 = c[i], c1 = c[i + st];
        a[i] = make_double2(b0.x + s * c0.x, b0.y + s * c0.y);
        a[i + st] = make_double2(b1.x + s * c1.x, b1.y + s * c1.y);
    }
    for (; i < n; i += st) {
        double2 b0 = b[i], c0 = c[i];
        a[i] = make_double2(b0.x + s * c0.x, b0.y + s * c0.y);
    }
}

/* Counts elements of out that differ from the float64 reference of op. */
__global__ void k_dram_check(int op, const double *out, const double *a, const double *b,
                             const double *c, size_t n, double s, unsigned long long *bad)
{
    unsigned long long mine = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double want = op == PT_DRAM_WRITE ? s : op == PT_DRAM_COPY ? a[i] : b[i] + s * c[i];
        double tol = op == PT_DRAM_TRIAD ? 1e-14 * fabs(want) : 0.0;
        if (!(fabs(out[i] - want) <= tol))
            mine++;
    }
    if (mine)
        atomicAdd(bad, mine);
}

struct dram_job {
    int op; /* PT_DRAM_*, or -1 for cudaMemcpyAsync */
    void *a, *b, *c;
    size_t bytes;
    int grid, block;
    uint32_t *sink;
    int verify;
};

static int enqueue_dram(void *arg, cudaStream_t st)
{
    struct dram_job *j = (struct dram_job *)arg;
    size_t n = j->bytes / 16;
    switch (j->op) {
    case PT_DRAM_READ:
        pt_k_dram_read<<<j->grid, j->block, 0, st>>>((const uint4 *)j->a, n, j->sink, j->verify);
        break;
    case PT_DRAM_WRITE:
        k_dram_write<<<j->grid, j->block, 0, st>>>((double2 *)j->b, n, 1.5);
        break;
    case PT_DRAM_COPY:
        pt_k_copy<<<j->grid, j->block, 0, st>>>((const double2 *)j->a, (double2 *)j->b, n);
        break;
    case PT_DRAM_TRIAD:
        k_dram_triad<<<j->grid, j->block, 0, st>>>((double2 *)j->a, (const double2 *)j->b,
                                                   (const double2 *)j->c, n, 0.4);
        break;
    default:
        RK_CUDA(cudaMemcpyAsync(j->b, j->a, j->bytes, cudaMemcpyDeviceToDevice, st));
        return RK_OK;
    }
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

static int grid_for(const struct probes *s, int block)
{
    return s->dev.sm_count * (s->dev.max_threads_per_sm / block);
}

int pt_alloc_dram(struct probes *s)
{
    if (s->dram[0])
        return RK_OK;
    /* At least 8x the L2 and 1 GiB, a whole number of MiB. */
    size_t bytes = (size_t)s->dev.l2_bytes * 8;
    if (bytes < ((size_t)1 << 30))
        bytes = (size_t)1 << 30;
    bytes = (bytes + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    if ((size_t)s->dev.memory_bytes < 4 * bytes)
        return rk_error(RK_ENOMEM,
                        "the DRAM probes need 3 buffers of %zu MiB; the GPU has %lld MiB",
                        bytes >> 20, (long long)(s->dev.memory_bytes >> 20));
    for (int i = 0; i < 3; i++)
        RK_CUDA(cudaMalloc(&s->dram[i], bytes));
    s->dram_bytes = bytes;
    return RK_OK;
}

/* Checks one run of job j (with the grid and block it will be timed with). */
static int check_dram(struct probes *s, struct dram_job *j, uint32_t *d_word,
                      unsigned long long *d_bad)
{
    size_t n = j->bytes / 8;
    unsigned long long bad = 0;
    if (j->op == PT_DRAM_READ) {
        uint32_t got, want = pt_xor_range(0, j->bytes / 4);
        struct dram_job v = *j;
        v.verify = 1;
        v.sink = d_word;
        RK_CUDA(cudaMemsetAsync(d_word, 0, 2 * sizeof *d_word, s->stream));
        int rc = enqueue_dram(&v, s->stream);
        if (rc != RK_OK)
            return rc;
        RK_CUDA(cudaMemcpyAsync(&got, d_word, sizeof got, cudaMemcpyDeviceToHost, s->stream));
        RK_CUDA(cudaStreamSynchronize(s->stream));
        if (got != want)
            return rk_error(RK_EVERIFY,
                            "the DRAM read kernel read wrong data (checksum %08x, "
                            "expected %08x); please report this",
                            got, want);
        return RK_OK;
    }
    /* Poison the output (NaN), run once, compare every element in float64. */
    void *out = j->op == PT_DRAM_TRIAD ? j->a : j->b;
    RK_CUDA(cudaMemsetAsync(out, 0xFF, j->bytes, s->stream));
    int rc = enqueue_dram(j, s->stream);
    if (rc != RK_OK)
        return rc;
    RK_CUDA(cudaMemsetAsync(d_bad, 0, sizeof *d_bad, s->stream));
    k_dram_check<<<grid_for(s, 256), 256, 0, s->stream>>>(
        j->op < 0 ? PT_DRAM_COPY : j->op, (const double *)out, (const double *)j->a,
        (const double *)j->b, (const double *)j->c, n, j->op == PT_DRAM_WRITE ? 1.5 : 0.4, d_bad);
    RK_CUDA(cudaGetLastError());
    RK_CUDA(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s->stream));
    RK_CUDA(cudaStreamSynchronize(s->stream));
    if (bad)
        return rk_error(RK_EVERIFY,
                        "DRAM probe kernel %d wrote %llu wrong elements of %zu; "
                        "please report this",
                        j->op, bad, n);
    return RK_OK;
}

int pt_bw_dram(struct probes *s, int op, struct probes_output *out)
{
    static const char *names[] = {"bw_dram_read", "bw_dram_write", "bw_dram_copy", "bw_dram_triad"};
    static const int full_blocks[] = {256, 512, 1024}, quick_blocks[] = {256, 1024};
    static const int full_waves[] = {1, 2, 4, 0}, quick_waves[] = {1, 0}; /* 0: cover once */
    const int *blocks = s->quick ? quick_blocks : full_blocks;
    const int *waves = s->quick ? quick_waves : full_waves;
    int nb = s->quick ? 2 : 3, nw = s->quick ? 2 : 4;
    int reps = s->quick ? 5 : 12, rc = RK_OK;
    double ms[PT_MAX_REPS], best_ms[PT_MAX_REPS], best_med = INFINITY, ref_ms[PT_MAX_REPS];
    int best_block = 0, best_grid = 0;
    double traffic;        /* bytes moved per repetition */
    double ref_gbps = NAN; /* the same copy through cudaMemcpy (PT_DRAM_COPY) */
    uint32_t *d_word = NULL;
    unsigned long long *d_bad = NULL;
    struct dram_job j;
    struct probes_result *r;

    if ((rc = pt_alloc_dram(s)) != RK_OK)
        return rc;
    memset(&j, 0, sizeof j);
    j.op = op;
    j.a = s->dram[0];
    j.b = s->dram[1];
    j.c = s->dram[2];
    j.bytes = s->dram_bytes;
    traffic = (double)j.bytes * (op == PT_DRAM_COPY ? 2 : op == PT_DRAM_TRIAD ? 3 : 1);
    if (cudaMalloc(&d_word, 2 * sizeof *d_word) != cudaSuccess ||
        cudaMalloc(&d_bad, sizeof *d_bad) != cudaSuccess) {
        rc = rk_error(RK_ECUDA, "cannot allocate the DRAM probe's checksum");
        goto out;
    }
    /* Inputs: the XOR pattern to read; random doubles for copy and triad. */
    if (op == PT_DRAM_READ)
        pt_k_fill_pattern<<<grid_for(s, 256), 256, 0, s->stream>>>((uint32_t *)j.a, j.bytes / 4, 0);
    else {
        pt_k_fill_uniform<<<grid_for(s, 256), 256, 0, s->stream>>>((double *)j.a, j.bytes / 8, 1);
        pt_k_fill_uniform<<<grid_for(s, 256), 256, 0, s->stream>>>((double *)j.b, j.bytes / 8, 2);
        pt_k_fill_uniform<<<grid_for(s, 256), 256, 0, s->stream>>>((double *)j.c, j.bytes / 8, 3);
    }
    if (cudaGetLastError() != cudaSuccess) {
        rc = rk_error(RK_ECUDA, "cannot fill the DRAM probe's buffers");
        goto out;
    }

    for (int bi = 0; bi < nb; bi++) {
        for (int wi = 0; wi < nw; wi++) {
            int per_thread = op == PT_DRAM_TRIAD ? 2 : 4;
            j.block = blocks[bi];
            j.grid = waves[wi] ? grid_for(s, j.block) * waves[wi]
                               : (int)((j.bytes / 16 + (size_t)j.block * per_thread - 1) /
                                       ((size_t)j.block * per_thread));
            if ((rc = check_dram(s, &j, d_word, d_bad)) != RK_OK)
                goto out;
            if ((rc = pt_time(s, enqueue_dram, &j, 2, reps, ms)) != RK_OK)
                goto out;
            double med = pt_median(ms, reps);
            if (med < best_med) {
                best_med = med;
                best_block = j.block;
                best_grid = j.grid;
                memcpy(best_ms, ms, sizeof ms);
            }
            if (rk_interrupted)
                goto out;
        }
    }
    r = pt_add_result(out, names[op]);
    if (!r) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    r->kind = "bandwidth";
    r->level = "dram";
    r->unit = "GB/s";
    pt_fill_rate(r, best_ms, reps, traffic / 1e6); /* bytes / ms / 1e6 = GB/s */
    r->theoretical = s->dev.bus_width_bits / 8.0 * 2.0 * pt_mem_clock_seen(s) * 1e6 / 1e9;
    snprintf(r->method, sizeof r->method,
             "%s over %zu MiB buffers, 16-byte accesses, grid-stride; best median of %d block "
             "sizes x %d grid shapes; bytes %s",
             op == PT_DRAM_READ    ? "read (XOR of every word)"
             : op == PT_DRAM_WRITE ? "write"
             : op == PT_DRAM_COPY  ? "copy b = a"
                                   : "triad a = b + s*c (fp64)",
             j.bytes >> 20, nb, nw,
             op == PT_DRAM_COPY    ? "read + written"
             : op == PT_DRAM_TRIAD ? "of 2 reads + 1 write"
                                   : "moved once");
    if (op == PT_DRAM_COPY) {
        /* The same copy through cudaMemcpy, same buffers, same run: the target's reference. */
        struct dram_job m = j;
        double lo, med, hi;
        m.op = -1;
        if ((rc = check_dram(s, &m, d_word, d_bad)) != RK_OK)
            goto out;
        if ((rc = pt_time(s, enqueue_dram, &m, 2, reps, ref_ms)) != RK_OK)
            goto out;
        pt_stats(ref_ms, reps, &lo, &med, &hi);
        ref_gbps = traffic / med / 1e6;
    }
    {
        struct rk_buf p = RK_BUF_INIT;
        rk_buf_printf(&p, "{\"buffer_bytes\":%zu,\"block\":%d,\"grid\":%d,\"elem_bytes\":16",
                      j.bytes, best_block, best_grid);
        if (op == PT_DRAM_COPY) {
            pt_json_fixed(&p, "cudamemcpy_d2d_gbps", ref_gbps, 1);
            pt_json_fixed(&p, "ratio_to_cudamemcpy", r->value / ref_gbps, 4);
        }
        rk_buf_puts(&p, "}");
        rc = pt_set_params(r, &p);
    }
out:
    cudaFree(d_word);
    cudaFree(d_bad);
    return rc;
}

/* ---- caches: L2, L1, shared memory ---- */

/*
 * L2: each block re-reads chunk (blockIdx % nchunks) `passes` times with loads that
 * skip L1: ld.global.cg (NC = 0) or ld.global.nc.L1::no_allocate (NC = 1). A block
 * streams 256-512 KB and an SM 8 blocks, far more than its L1, so even a load that
 * did allocate would find nothing there on the next pass. With stagger, the blocks
 * that share a chunk start at different places in it (and wrap), so that at any
 * moment they read different lines rather than all the same few.
 *
 * The loop is one 16-byte load per iteration, unrolled 4. An earlier version issued 8 loads
 * per thread before using any: on the H100 it reached 8.2 TB/s where this form reaches 12.0
 * at 16 MB when the blocks start together; the staggered starts give 8.5. Blocks that read the
 * same lines at about the same time are what the unstaggered figure includes: requests to one
 * line from several SMs in flight together.
 */
template <int NC>
__global__ void k_l2_read(const uint4 *buf, uint32_t chunk_vecs, uint32_t nchunks, int passes,
                          int stagger, uint32_t zmask, uint32_t *sink, int verify)
{
    const uint4 *base = buf + (size_t)(blockIdx.x % nchunks) * chunk_vecs;
    const uint32_t start = stagger ? (blockIdx.x / nchunks) * (chunk_vecs / 8) % chunk_vecs : 0;
    uint32_t acc = 0;
    for (int pass = 0; pass < passes; pass++) {
        const uint4 *p = base + (pass & zmask); /* see k_l1_read */
#pragma unroll 4
        for (uint32_t i = threadIdx.x; i < chunk_vecs; i += blockDim.x) {
            const uint32_t j = i + start < chunk_vecs ? i + start : i + start - chunk_vecs;
            acc ^= pt_xor4(NC ? pt_ld_nc_na(p + j) : pt_ld_cg(p + j));
        }
    }
    if (verify)
        atomicXor(sink, acc);
    else if (acc == NEVER) /* never taken in timed runs: keeps the loads alive */
        sink[1] = acc;
}

/*
 * L1: every block reads the same K*BLOCK 16-byte words `passes` times with
 * ld.global.ca; the offsets are compile-time constants, so the loop body is K
 * loads with immediate offsets and 2K LOP3s. zmask is 0 at run time, but the
 * compiler cannot know it: each pass's addresses differ as far as ptxas sees, so it
 * cannot merge the loads of unrolled passes into one (volatile asm stops only
 * NVVM; without this ptxas kept one load in four and the "L1" ran at 4x its peak).
 */
template <int BLOCK, int K>
__global__ void __launch_bounds__(BLOCK)
    k_l1_read(const uint4 *buf, int passes, uint32_t zmask, uint32_t *sink, int verify)
{
    uint32_t acc = 0;
    for (int pass = 0; pass < passes; pass++) {
        const uint4 *p = buf + threadIdx.x + (pass & zmask);
        uint4 v[K];
#pragma unroll
        for (int u = 0; u < K; u++)
            v[u] = pt_ld_ca(p + u * BLOCK);
#pragma unroll
        for (int u = 0; u < K; u++)
            acc ^= pt_xor4(v[u]);
    }
    if (verify)
        atomicXor(sink, acc);
    else if (acc == NEVER) /* never taken in timed runs: keeps the loads alive */
        sink[1] = acc;
}

/* A WORD-byte shared-memory load (16: LDS.128, 4: LDS.32) and its fold to 32 bits, so that
 * k_shared_read has one loop for both widths. */
template <int WORD> struct shared_word;
template <> struct shared_word<16> {
    typedef uint4 type;
    static __device__ __forceinline__ uint4 load(uint32_t addr)
    {
        return pt_ld_shared(addr);
    }
    static __device__ __forceinline__ uint32_t fold(uint4 v)
    {
        return pt_xor4(v);
    }
};
template <> struct shared_word<4> {
    typedef uint32_t type;
    static __device__ __forceinline__ uint32_t load(uint32_t addr)
    {
        return pt_ld_shared32(addr);
    }
    static __device__ __forceinline__ uint32_t fold(uint32_t v)
    {
        return v;
    }
};

/*
 * Shared memory: each block fills K*BLOCK 16-byte words, then reads them `passes` times with
 * WORD-byte loads: 16 (LDS.128, bw_shared_read) or 4 (LDS.32, bw_shared_read_32: 4K loads a
 * pass, the same bytes). A warp's 4-byte load is one 128-byte wavefront, as its 16-byte load is
 * four, so both can reach the banks' 128 B/clk/SM (the H100: 127.4 and 127.2); a kernel that
 * reads shared memory one float at a time takes the 4-byte ceiling.
 */
template <int BLOCK, int K, int WORD>
__global__ void __launch_bounds__(BLOCK)
    k_shared_read(int passes, uint32_t zmask, uint32_t *sink, int verify)
{
    static_assert(WORD == 16 || WORD == 4, "16- or 4-byte loads");
    constexpr int N = K * 16 / WORD; /* loads a pass */
    __shared__ uint4 sm[K * BLOCK];
    const uint32_t words = K * BLOCK * 4;
    uint32_t *w = (uint32_t *)sm;
    for (uint32_t i = threadIdx.x; i < words; i += BLOCK)
        w[i] = (uint32_t)(blockIdx.x * words + i) ^ PT_PATTERN_KEY;
    __syncthreads();
    const uint32_t base =
        (uint32_t)__cvta_generic_to_shared((const unsigned char *)sm + threadIdx.x * WORD);
    uint32_t acc = 0;
    for (int pass = 0; pass < passes; pass++) {
        const uint32_t addr = base + ((pass & zmask) << (WORD == 16 ? 4 : 2)); /* see k_l1_read */
        typename shared_word<WORD>::type v[N];
#pragma unroll
        for (int u = 0; u < N; u++)
            v[u] = shared_word<WORD>::load(addr + u * BLOCK * WORD);
#pragma unroll
        for (int u = 0; u < N; u++)
            acc ^= shared_word<WORD>::fold(v[u]);
    }
    if (verify)
        atomicXor(sink, acc);
    else if (acc == NEVER) /* never taken in timed runs: keeps the loads alive */
        sink[1] = acc;
}

struct cache_job {
    int level, variant; /* PT_CACHE_*, index into the variant table (L2: 1 = nc) */
    int stagger;        /* L2: blocks sharing a chunk start at different offsets */
    const uint4 *buf;
    uint32_t chunk_vecs, nchunks;
    int grid, block, passes;
    uint32_t *sink;
    int verify;
};

typedef void (*l1_kernel)(const uint4 *, int, uint32_t, uint32_t *, int);
typedef void (*sh_kernel)(int, uint32_t, uint32_t *, int);
/* Block size, loads per pass (L1 kernel, shared kernel), and the kernels (shared memory with
 * 16-byte and with 4-byte loads). */
static const struct {
    int block, k, sk;
    l1_kernel l1;
    sh_kernel sh, sh32;
} variants[] = {
    {1024, 4, 2, k_l1_read<1024, 4>, k_shared_read<1024, 2, 16>, k_shared_read<1024, 2, 4>},
    {512, 8, 4, k_l1_read<512, 8>, k_shared_read<512, 4, 16>, k_shared_read<512, 4, 4>},
    {256, 16, 8, k_l1_read<256, 16>, k_shared_read<256, 8, 16>, k_shared_read<256, 8, 4>},
    {1024, 2, 1, k_l1_read<1024, 2>, k_shared_read<1024, 1, 16>, k_shared_read<1024, 1, 4>},
};
#define N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

static int enqueue_cache(void *arg, cudaStream_t st)
{
    struct cache_job *j = (struct cache_job *)arg;
    if (j->level == PT_CACHE_L2)
        (j->variant ? k_l2_read<1> : k_l2_read<0>)<<<j->grid, j->block, 0, st>>>(
            j->buf, j->chunk_vecs, j->nchunks, j->passes, j->stagger, 0, j->sink, j->verify);
    else if (j->level == PT_CACHE_L1)
        variants[j->variant].l1<<<j->grid, j->block, 0, st>>>(j->buf, j->passes, 0, j->sink,
                                                              j->verify);
    else
        (j->level == PT_CACHE_SHARED32 ? variants[j->variant].sh32
                                       : variants[j->variant].sh)<<<j->grid, j->block, 0, st>>>(
            j->passes, 0, j->sink, j->verify);
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

/* One wave of the kernel: the blocks that fit on all SMs at once (registers decide). */
static int resident_grid(const struct probes *s, const void *fn, int block, int *grid)
{
    int per_sm = 0;
    RK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, block, 0));
    if (per_sm < 1)
        return rk_error(RK_ECUDA, "a cache probe kernel cannot run %d threads per block", block);
    *grid = per_sm * s->dev.sm_count;
    return RK_OK;
}

/* Verify mode: one pass, each chunk (or each block's shared array) read by one block. */
static int check_cache(struct probes *s, const struct cache_job *j)
{
    struct cache_job v = *j;
    uint32_t got, want;
    int rc;
    v.verify = 1;
    v.passes = 1;
    if (j->level == PT_CACHE_L2) {
        v.grid = 3 * (int)j->nchunks; /* each chunk by 3 blocks (odd: XOR survives) */
        want = pt_xor_range(0, (uint64_t)j->nchunks * j->chunk_vecs * 4);
    } else if (j->level == PT_CACHE_L1) {
        v.grid = 1;
        want = pt_xor_range(0, (uint64_t)variants[j->variant].k * j->block * 4);
    } else {
        want = pt_xor_range(0, (uint64_t)j->grid * variants[j->variant].sk * j->block * 4);
    }
    RK_CUDA(cudaMemsetAsync(j->sink, 0, 2 * sizeof(uint32_t), s->stream));
    if ((rc = enqueue_cache(&v, s->stream)) != RK_OK)
        return rc;
    RK_CUDA(cudaMemcpyAsync(&got, j->sink, sizeof got, cudaMemcpyDeviceToHost, s->stream));
    RK_CUDA(cudaStreamSynchronize(s->stream));
    if (got != want)
        return rk_error(RK_EVERIFY,
                        "the %s read kernel read wrong data (checksum %08x, expected "
                        "%08x); please report this",
                        j->level == PT_CACHE_L2   ? "L2"
                        : j->level == PT_CACHE_L1 ? "L1"
                                                  : "shared",
                        got, want);
    return RK_OK;
}

int pt_bw_cache(struct probes *s, int level, struct probes_output *out)
{
    static const char *names[] = {"bw_l2_read", "bw_l1_read", "bw_shared_read",
                                  "bw_shared_read_32"};
    int reps = s->quick ? 5 : 10, rc = RK_OK, n_cfg = 0, best_cfg = -1;
    double ms[PT_MAX_REPS], best_ms[PT_MAX_REPS], best_med = INFINITY, best_bytes = 0;
    struct cache_job cfg[24], *b;
    uint32_t *d_sink = NULL;
    size_t footprint = 0;
    double clk, per_sm;
    struct rk_buf p = RK_BUF_INIT; /* the params, built last */
    struct probes_result *r;

    if ((rc = pt_alloc_dram(s)) != RK_OK)
        return rc;
    if (cudaMalloc(&d_sink, 2 * sizeof *d_sink) != cudaSuccess)
        return rk_error(RK_ECUDA, "cannot allocate the cache probe's checksum");
    pt_k_fill_pattern<<<grid_for(s, 256), 256, 0, s->stream>>>((uint32_t *)s->dram[0],
                                                               (64u << 20) / 4, 0);
    if (cudaGetLastError() != cudaSuccess) {
        rc = rk_error(RK_ECUDA, "cannot fill the cache probe's buffer");
        goto out;
    }
    memset(cfg, 0, sizeof cfg);
    if (level == PT_CACHE_L2) {
        /* Footprint: the largest power of two <= L2/3 (16 MB on a 50 MB H100). */
        static const uint32_t chunks_kb[] = {512, 256};
        static const int blocks[] = {256, 512, 1024};
        footprint = 1u << 20;
        while (footprint * 2 <= (size_t)s->dev.l2_bytes / 3)
            footprint *= 2;
        for (int c = 0; c < 2 * 2 * 2; c++)
            for (int bi = 0; bi < 3; bi++) {
                if (s->quick && (c / 4 > 0 || bi != 0))
                    continue;
                struct cache_job *j = &cfg[n_cfg++];
                j->level = level;
                j->variant = c % 2;
                j->stagger = (c / 2) % 2;
                j->buf = (const uint4 *)s->dram[0];
                j->chunk_vecs = chunks_kb[c / 4] * 1024 / 16;
                j->nchunks = (uint32_t)(footprint / (chunks_kb[c / 4] * 1024));
                j->block = blocks[bi];
                rc = resident_grid(
                    s, j->variant ? (const void *)k_l2_read<1> : (const void *)k_l2_read<0>,
                    j->block, &j->grid);
                if (rc != RK_OK)
                    goto out;
                j->passes = 8;
            }
    } else {
        for (int v = 0; v < N_VARIANTS; v++) {
            if (s->quick && v > 1)
                continue;
            struct cache_job *j = &cfg[n_cfg++];
            j->level = level;
            j->variant = v;
            j->buf = (const uint4 *)s->dram[0];
            j->block = variants[v].block;
            j->passes = 4096;
            if (level == PT_CACHE_L1)
                PT_CUDA(cudaFuncSetAttribute((const void *)variants[v].l1,
                                             cudaFuncAttributePreferredSharedMemoryCarveout, 0));
            rc = resident_grid(s,
                               level == PT_CACHE_L1         ? (const void *)variants[v].l1
                               : level == PT_CACHE_SHARED32 ? (const void *)variants[v].sh32
                                                            : (const void *)variants[v].sh,
                               j->block, &j->grid);
            if (rc != RK_OK)
                goto out;
        }
    }
    for (int c = 0; c < n_cfg; c++) {
        struct cache_job *j = &cfg[c];
        double bytes;
        j->sink = d_sink;
        if ((rc = check_cache(s, j)) != RK_OK)
            goto out;
        if (j->level == PT_CACHE_L2)
            bytes = (double)j->grid * j->chunk_vecs * 16.0 * j->passes;
        else if (j->level == PT_CACHE_L1)
            bytes = (double)j->grid * variants[j->variant].k * j->block * 16.0 * j->passes;
        else
            bytes = (double)j->grid * variants[j->variant].sk * j->block * 16.0 * j->passes;
        if ((rc = pt_time(s, enqueue_cache, j, 2, reps, ms)) != RK_OK)
            goto out;
        double med = pt_median(ms, reps);
        if (bytes / med > best_bytes / best_med || best_cfg < 0) {
            best_med = med;
            best_bytes = bytes;
            best_cfg = c;
            memcpy(best_ms, ms, sizeof ms);
        }
        if (rk_interrupted)
            goto out;
    }
    b = &cfg[best_cfg];
    r = pt_add_result(out, names[level]);
    if (!r) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    r->kind = "bandwidth";
    r->level = level == PT_CACHE_L2 ? "l2" : level == PT_CACHE_L1 ? "l1" : "shared";
    r->unit = "GB/s";
    pt_fill_rate(r, best_ms, reps, best_bytes / 1e6);
    clk = pt_clock_seen(s);
    per_sm = r->value * 1e9 / (s->dev.sm_count * clk * 1e6);
    if (level == PT_CACHE_L2) {
        snprintf(r->method, sizeof r->method,
                 "%zu MiB data set read by all SMs; each block re-reads a %u KiB chunk %d times "
                 "with 16-byte %s (no L1); best median of %d configurations",
                 footprint >> 20, b->chunk_vecs * 16 / 1024, b->passes,
                 b->variant ? "ld.global.nc.L1::no_allocate" : "ld.global.cg", n_cfg);
        rk_buf_printf(&p,
                      "{\"footprint_bytes\":%zu,\"chunk_bytes\":%u,\"block\":%d,\"grid\":%d,"
                      "\"passes\":%d,",
                      footprint, b->chunk_vecs * 16, b->block, b->grid, b->passes);
        rk_json_key_str(&p, "load", b->variant ? "nc.L1::no_allocate" : "cg");
        rk_buf_printf(&p, ",\"stagger\":%s", b->stagger ? "true" : "false");
        pt_json_fixed(&p, "clock_mhz", clk, 0);
    } else {
        int k = level == PT_CACHE_L1 ? variants[b->variant].k : variants[b->variant].sk;
        const int word = level == PT_CACHE_SHARED32 ? 4 : 16; /* bytes a thread loads at once */
        size_t fp = (size_t)k * b->block * 16;
        /* Both paths move 128 bytes per clock per SM on sm_70 and later (32 banks x 4 B). */
        r->theoretical = 128.0 * s->dev.sm_count * clk * 1e6 / 1e9;
        snprintf(r->method, sizeof r->method,
                 "%s: every block reads %zu KiB %d times with %d-byte %s at constant offsets; "
                 "rate summed over %d SMs; best median of %d configurations",
                 level == PT_CACHE_L1 ? "L1" : "shared memory", fp / 1024, b->passes, word,
                 level == PT_CACHE_L1         ? "ld.global.ca (L1 carve-out maximal)"
                 : level == PT_CACHE_SHARED32 ? "ld.shared.u32 (LDS.32)"
                                              : "ld.shared (LDS.128)",
                 s->dev.sm_count, n_cfg);
        rk_buf_printf(&p,
                      "{\"footprint_bytes\":%zu,\"block\":%d,\"grid\":%d,\"passes\":%d,"
                      "\"loads_per_pass\":%d,\"load_bytes\":%d",
                      fp, b->block, b->grid, b->passes, k * 16 / word, word);
        pt_json_fixed(&p, "clock_mhz", clk, 0);
        pt_json_fixed(&p, "bytes_per_clk_per_sm", per_sm, 1);
    }
    rk_buf_puts(&p, "}");
    rc = pt_set_params(r, &p);
out:
    cudaFree(d_sink);
    return rc;
}

/* ---- issue cost of a shared-memory load ---- */

/*
 * Every thread: ISSUE_LOADS 4-byte shared loads (LDS.32) a pass, each followed by ISSUE_FMAS
 * independent FFMAs on its own accumulators that take the loaded value (its bits as a float:
 * FFMA's rate does not depend on them). With all warps resident the sub-partitions' issue
 * binds (the loads use a fifth of the banks' rate), so issue cycles per load = 4
 * sub-partitions / (loads per clock per SM) - ISSUE_FMAS; the loop's counter and branch (a few
 * instructions a pass of 32 loads, ~0.1 a load) are in it. The cycles a shared load takes
 * beyond one are what the seeds' fp32 kernels, one LDS per element, lose to it. VERIFY: one
 * pass that XORs the loaded words instead, to check them.
 */
#define ISSUE_LOADS 32
#define ISSUE_FMAS  8
template <int BLOCK, bool VERIFY>
__global__ void __launch_bounds__(BLOCK) k_issue_lds(int passes, uint32_t zmask, uint32_t *sink)
{
    __shared__ uint32_t w[ISSUE_LOADS * BLOCK];
    for (uint32_t i = threadIdx.x; i < ISSUE_LOADS * BLOCK; i += BLOCK)
        w[i] = (uint32_t)(blockIdx.x * ISSUE_LOADS * BLOCK + i) ^ PT_PATTERN_KEY;
    __syncthreads();
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(w + threadIdx.x);
    float x[ISSUE_FMAS];
#pragma unroll
    for (int i = 0; i < ISSUE_FMAS; i++)
        x[i] = (float)i;
    uint32_t acc = 0;
    for (int pass = 0; pass < passes; pass++) {
        const uint32_t addr = base + ((pass & zmask) << 2); /* see k_l1_read */
#pragma unroll
        for (int u = 0; u < ISSUE_LOADS; u++) {
            const uint32_t v = pt_ld_shared32(addr + u * BLOCK * 4);
            if (VERIFY) {
                acc ^= v;
            } else {
#pragma unroll
                for (int i = 0; i < ISSUE_FMAS; i++)
                    asm volatile("fma.rn.f32 %0, %0, %1, %2;"
                                 : "+f"(x[i])
                                 : "f"(1.0f), "f"(__uint_as_float(v))); /* any bits */
            }
        }
    }
    float keep = 0.0f;
#pragma unroll
    for (int i = 0; i < ISSUE_FMAS; i++)
        keep += x[i];
    if (VERIFY)
        atomicXor(sink, acc);
    else if (keep == 0.5f) /* never taken in timed runs: keeps the FFMAs alive */
        sink[1] = (uint32_t)passes;
}

struct issue_job {
    void (*fn)(int, uint32_t, uint32_t *); /* k_issue_lds<BLOCK, VERIFY> */
    int grid, block, passes;
    uint32_t *sink;
};

static int enqueue_issue(void *arg, cudaStream_t st)
{
    struct issue_job *j = (struct issue_job *)arg;
    j->fn<<<j->grid, j->block, 0, st>>>(j->passes, 0, j->sink);
    RK_CUDA(cudaGetLastError());
    return RK_OK;
}

int pt_issue_shared(struct probes *s, int arg, struct probes_output *out)
{
    static void (*const fns[])(int, uint32_t, uint32_t *) = {k_issue_lds<256, false>,
                                                             k_issue_lds<128, false>};
    static void (*const checks[])(int, uint32_t, uint32_t *) = {k_issue_lds<256, true>,
                                                                k_issue_lds<128, true>};
    static const int blocks[] = {256, 128};
    const int reps = s->quick ? 5 : 10;
    double ms[PT_MAX_REPS], best_ms[PT_MAX_REPS], best_rate = 0, best_loads = 0, clk;
    struct issue_job j, best;
    uint32_t *d_sink = NULL, got = 0;
    struct probes_result *r;
    int rc = RK_OK;
    (void)arg;
    memset(&best, 0, sizeof best);
    PT_CUDA(cudaMalloc(&d_sink, 2 * sizeof *d_sink));
    for (int b = 0; b < 2; b++) {
        memset(&j, 0, sizeof j);
        j.fn = fns[b];
        j.block = blocks[b];
        j.sink = d_sink;
        if ((rc = resident_grid(s, (const void *)j.fn, j.block, &j.grid)) != RK_OK)
            goto out;
        /* check: one pass, every word of each block's array read once (its XOR) */
        j.fn = checks[b];
        j.passes = 1;
        PT_CUDA(cudaMemsetAsync(d_sink, 0, 2 * sizeof *d_sink, s->stream));
        if ((rc = enqueue_issue(&j, s->stream)) != RK_OK)
            goto out;
        PT_CUDA(cudaMemcpyAsync(&got, d_sink, sizeof got, cudaMemcpyDeviceToHost, s->stream));
        PT_CUDA(cudaStreamSynchronize(s->stream));
        if (got != pt_xor_range(0, (uint64_t)j.grid * ISSUE_LOADS * j.block)) {
            rc = rk_error(RK_EVERIFY, "the shared-load issue kernel read wrong data; please "
                                      "report this");
            goto out;
        }
        j.fn = fns[b];
        j.passes = s->quick ? 256 : 1024;
        if ((rc = pt_time(s, enqueue_issue, &j, 2, reps, ms)) != RK_OK)
            goto out;
        double loads = (double)j.grid * j.block / 32.0 * ISSUE_LOADS * j.passes;
        double rate = loads / pt_median(ms, reps); /* warp loads per ms */
        if (rate > best_rate) {
            best_rate = rate;
            best_loads = loads;
            best = j;
            memcpy(best_ms, ms, sizeof ms);
        }
    }
    clk = pt_clock_seen(s);
    r = pt_add_result(out, "lat_issue_shared");
    if (!r) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    {
        /* cycles per load at each repetition's time: 4 x SMs x clock x t / loads - FMAs */
        double v[PT_MAX_REPS];
        for (int i = 0; i < reps; i++)
            v[i] = 4.0 * s->dev.sm_count * clk * 1e3 * best_ms[i] / best_loads - ISSUE_FMAS;
        pt_fill_stats(r, v, reps, "latency", "shared", "cycles");
        snprintf(r->method, sizeof r->method,
                 "issue cycles a 4-byte shared load (LDS.32) takes on its sub-partition: %d loads "
                 "a pass, each with %d independent FFMAs, all warps resident (issue-bound); "
                 "4 x SMs x clock / loads per second - %d (the loop's share included)",
                 ISSUE_LOADS, ISSUE_FMAS, ISSUE_FMAS);
        struct rk_buf p = RK_BUF_INIT;
        rk_buf_printf(&p,
                      "{\"loads_per_pass\":%d,\"fmas_per_load\":%d,\"block\":%d,\"grid\":%d,"
                      "\"passes\":%d",
                      ISSUE_LOADS, ISSUE_FMAS, best.block, best.grid, best.passes);
        pt_json_fixed(&p, "loads_per_clk_per_sm", best_rate * 1e3 / (s->dev.sm_count * clk * 1e6),
                      3);
        pt_json_fixed(&p, "clock_mhz", clk, 0);
        rk_buf_puts(&p, "}");
        rc = pt_set_params(r, &p);
    }
out:
    cudaFree(d_sink);
    return rc;
}

/* ---- host <-> device, pinned ---- */

struct host_job {
    int dir;
    void *host, *dev;
    size_t bytes;
};

static int enqueue_host(void *arg, cudaStream_t st)
{
    struct host_job *j = (struct host_job *)arg;
    if (j->dir == PT_HOST_H2D)
        RK_CUDA(cudaMemcpyAsync(j->dev, j->host, j->bytes, cudaMemcpyHostToDevice, st));
    else
        RK_CUDA(cudaMemcpyAsync(j->host, j->dev, j->bytes, cudaMemcpyDeviceToHost, st));
    return RK_OK;
}

int pt_bw_host(struct probes *s, int dir, struct probes_output *out)
{
    int reps = s->quick ? 5 : 10, rc = RK_OK;
    size_t bytes = (size_t)(s->quick ? 64 : 256) << 20;
    double ms[PT_MAX_REPS];
    struct host_job j = {dir, NULL, NULL, bytes};
    uint32_t *d_sink = NULL, got = 0, want = pt_xor_range(0, bytes / 4);
    struct probes_result *r;

    if ((rc = pt_alloc_dram(s)) != RK_OK)
        return rc;
    j.dev = s->dram[1];
    if (cudaMallocHost(&j.host, bytes) != cudaSuccess)
        return rk_error(RK_ENOMEM, "cannot pin %zu MiB of host memory for the host copy probe",
                        bytes >> 20);
    PT_CUDA(cudaMalloc(&d_sink, 2 * sizeof *d_sink));
    /* Check: the pattern crosses the bus intact (XOR of every word on the far side). */
    if (dir == PT_HOST_H2D) {
        uint32_t *h = (uint32_t *)j.host;
        for (size_t i = 0; i < bytes / 4; i++)
            h[i] = (uint32_t)i ^ PT_PATTERN_KEY;
        PT_CUDA(cudaMemsetAsync(j.dev, 0, bytes, s->stream));
        if ((rc = enqueue_host(&j, s->stream)) != RK_OK)
            goto out;
        PT_CUDA(cudaMemsetAsync(d_sink, 0, 2 * sizeof *d_sink, s->stream));
        pt_k_dram_read<<<grid_for(s, 256), 256, 0, s->stream>>>((const uint4 *)j.dev, bytes / 16,
                                                                d_sink, 1);
        PT_CUDA(cudaGetLastError());
        PT_CUDA(cudaMemcpyAsync(&got, d_sink, sizeof got, cudaMemcpyDeviceToHost, s->stream));
        PT_CUDA(cudaStreamSynchronize(s->stream));
    } else {
        const uint32_t *h = (const uint32_t *)j.host;
        pt_k_fill_pattern<<<grid_for(s, 256), 256, 0, s->stream>>>((uint32_t *)j.dev, bytes / 4, 0);
        PT_CUDA(cudaGetLastError());
        memset(j.host, 0, bytes);
        if ((rc = enqueue_host(&j, s->stream)) != RK_OK)
            goto out;
        PT_CUDA(cudaStreamSynchronize(s->stream));
        for (size_t i = 0; i < bytes / 4; i++)
            got ^= h[i];
    }
    if (got != want) {
        rc = rk_error(RK_EVERIFY,
                      "the %s copy delivered wrong data (checksum %08x, expected "
                      "%08x); check the PCIe link",
                      dir == PT_HOST_H2D ? "host-to-device" : "device-to-host", got, want);
        goto out;
    }
    if ((rc = pt_time(s, enqueue_host, &j, 2, reps, ms)) != RK_OK)
        goto out;
    r = pt_add_result(out, dir == PT_HOST_H2D ? "bw_h2d" : "bw_d2h");
    if (!r) {
        rc = rk_error(RK_ENOMEM, "out of host memory");
        goto out;
    }
    r->kind = "bandwidth";
    r->level = "host";
    r->unit = "GB/s";
    pt_fill_rate(r, ms, reps, (double)bytes / 1e6);
    snprintf(r->method, sizeof r->method, "cudaMemcpyAsync %s of %zu MiB, pinned host memory",
             dir == PT_HOST_H2D ? "host to device" : "device to host", bytes >> 20);
    snprintf(r->params, sizeof r->params, "{\"bytes\":%zu,\"pinned\":true,\"direction\":\"%s\"}",
             bytes, dir == PT_HOST_H2D ? "h2d" : "d2h");
out:
    cudaFree(d_sink);
    cudaFreeHost(j.host);
    return rc;
}
