/*
 * cp_async.cuh - the cp.async copies (sm_80+) that the TSM2 kernels stage through shared
 * memory with: one element or vector of up to 16 bytes per copy, zero-filled when the source
 * is outside the matrix, committed in groups and waited for by count. Device code only;
 * included by tsm2.cu and tsm2_stream.cu.
 */
#ifndef RK_KERNELS_CP_ASYNC_CUH
#define RK_KERNELS_CP_ASYNC_CUH

/* Copies BYTES (4, 8 or 16) from gmem to smem; valid = false fills them with zeros and reads
 * nothing (gmem must still be a valid address). */
template <int BYTES>
static __device__ __forceinline__ void cp_async_elem(void *smem, const void *gmem, bool valid)
{
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    const int src_size = valid ? BYTES : 0; /* 0: fill with zeros, read nothing */
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(gmem),
                 "n"(BYTES), "r"(src_size)
                 : "memory");
}

static __device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's committed groups are still in flight. */
template <int N> static __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#endif
