/* Bulk asynchronous copies into shared memory (sm_90: cp.async.bulk, the
 * copy engine of Hopper's TMA without a tensor map) and the persistent
 * grid of the kernels that use them (k_staged.cu, k_mergestaged.cu).
 * In BSR a run of whole block rows -- or a stretch of blocks -- is one
 * contiguous byte range of val and of col_idx whatever the block order,
 * so a single instruction moves kilobytes and costs no issue slots. */
#ifndef BSRMV_CUDA_BULK_CUH
#define BSRMV_CUDA_BULK_CUH

#include "common.cuh"

namespace bsrmv_cuda {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* [dst, dst+bytes) <- [src, src+bytes), completing `bytes` on bar; all
 * three 16-byte aligned, bytes a multiple of 16; H: the L2 priority of the
 * source lines (common.cuh, "Loads"). */
template <L2h H = L2h::normal>
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
    if constexpr (H == L2h::normal)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar))
                     : "memory");
    else
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
                     " [%0], [%1], %2, [%3], %4;"
                     :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)),
                        "l"(l2_evict_first())
                     : "memory");
}

/* n barriers of one arrival each, visible to the copy engine on return */
__device__ __forceinline__ void bars_init(uint64_t *bar, int n)
{
    for (int b = 0; b < n; ++b)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(bar + b)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* The one arrival of bar's phase, which completes once `bytes` more have
 * landed (0: at once). */
__device__ __forceinline__ void bar_expect(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void bar_wait(uint64_t *bar, uint32_t parity)
{
    /* the hint (ns) bounds how long one try_wait may park the thread before
     * the loop asks again */
    asm volatile("{ .reg .pred p; WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1, 1000000; @!p bra WAIT; }"
                 :: "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
}

/* Shared memory that threads have written is next written by the copy
 * engine (another proxy): each writing thread orders the two before the
 * barrier that precedes the copy. */
__device__ __forceinline__ void fence_to_async()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* The 16-byte aligned byte range [lo, hi) of an array of `total` bytes
 * holding [from, to): rounded out, but never past the array's end -- then
 * the last < 16 bytes, [tail, to), are loaded by the threads. */
struct Span {
    int64_t lo, hi, tail;
};
__device__ __forceinline__ Span span_of(int64_t from, int64_t to, int64_t total)
{
    Span s;
    s.lo = from & ~(int64_t)15;
    s.hi = (to + 15) & ~(int64_t)15;
    s.tail = to;
    if (s.hi > total) {
        s.hi = to & ~(int64_t)15;
        s.tail = s.hi;
    }
    return s;
}

/* The part of span s that the copy left out, [s.tail, to) of the array
 * of E at base, loaded by threads tid = 0..nt-1 into the buffer dst that
 * the copy of s fills; true if there was one (then the caller syncs the
 * threads before they read it). */
template <typename E>
__device__ __forceinline__ bool span_tail(unsigned char *dst, const E *base, const Span &s,
                                          int64_t to, int tid, int nt)
{
    if (s.tail >= to)
        return false;
    E *d = (E *)(dst + (s.tail - s.lo));
    for (int64_t t = tid; t < (to - s.tail) / (int64_t)sizeof(E); t += nt)
        d[t] = base[s.tail / (int64_t)sizeof(E) + t];
    return true;
}

/* Copy span s of the array at base into dst, completing on bar. */
template <L2h H = L2h::normal>
__device__ __forceinline__ void bulk_span(void *dst, const void *base, const Span &s, uint64_t *bar)
{
    if (s.hi > s.lo)
        bulk_copy<H>(dst, (const char *)base + s.lo, (uint32_t)(s.hi - s.lo), bar);
}
#endif

__host__ __device__ __forceinline__ int64_t up16(int64_t bytes)
{
    return (bytes + 15) & ~(int64_t)15;
}

/* Shared-memory bytes of a buffer for `bytes` of an array copied by
 * span_of: a 16-byte multiple, + 16 for the rounding out at both ends. */
__host__ __device__ __forceinline__ int64_t span_cap(int64_t bytes)
{
    return up16(bytes) + 16;
}

/* Thread blocks of `kern` that an SM holds at once with `threads` threads
 * and `smem` bytes of dynamic shared memory (the occupancy query, after
 * opting in to more than 48 KB).  These are driver calls, so the answer
 * is remembered per host thread for the last kernel, device and shape: a
 * solver's SpMV calls skip them.  The opt-in is all that the device's
 * `optin` leaves beside the kernel's static shared memory, the same from
 * every thread: it is the kernel's, shared by all host threads, and one
 * asking for less would lower it under another thread's remembered
 * launches. */
template <typename K>
static cudaError_t blocks_per_sm(K kern, int threads, size_t smem, size_t optin, int *n)
{
    struct Fit {
        const void *kern;
        int dev, threads;
        size_t smem;
        int n;
    };
    static thread_local Fit last = {nullptr, -1, 0, 0, 0};
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    if (last.kern != (const void *)kern || last.dev != dev || last.threads != threads || last.smem != smem) {
        if (smem > 48 * 1024) {
            cudaFuncAttributes fa;
            if ((e = cudaFuncGetAttributes(&fa, kern)) != cudaSuccess)
                return e;
            const size_t most = optin > fa.sharedSizeBytes ? optin - fa.sharedSizeBytes : 0;
            if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)(most > smem ? most : smem))) != cudaSuccess)
                return e;
        }
        int got = 0;
        if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, kern, threads, smem)) != cudaSuccess)
            return e;
        last = Fit{(const void *)kern, dev, threads, smem, got};
    }
    *n = last.n > 0 ? last.n : 1;
    return cudaSuccess;
}

} // namespace bsrmv_cuda

#endif
