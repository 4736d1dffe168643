/* Flat-stream kernel for small column-major blocks (a mode of by_column:
 * kernel BSRMV_GPU_BY_COLUMN with param = U > 0, see candidates.cu).
 *
 * A warp owns `rows` consecutive block rows.  Their values
 * val[rp[row0]*bs2 .. rp[row0+rows]*bs2) are one contiguous run, streamed by
 * G = 32 - 32 % bs lanes: lane l reads flat indices l, l+G, l+2G, ... of the
 * run (fully coalesced).  Because G is a multiple of bs and the run starts
 * on a block boundary, the row inside the block r = l % bs is the same at
 * every step, so each lane accumulates one scalar row; the block index k and
 * the column c inside the block advance incrementally (no division).  The
 * block row of k is tracked against the warp's row_ptr slice in shared
 * memory; when a lane crosses into the next block row it adds its partial
 * sum to the per-warp y slice in shared memory (shared atomicAdd), which is
 * written to y (alpha, beta) once the warp has streamed the whole run.
 * U steps are unrolled: U loads of val and col_idx (then x) in flight per
 * lane.  No per-row dependent chain row_ptr -> col_idx -> x -> reduce: only
 * one per `rows` block rows. */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T, int BS, int U>
__global__ void __launch_bounds__(256)
k_flat(const Args<T> a, int rows, int64_t chunks)
{
    constexpr int BS2 = BS * BS;
    constexpr int G = 32 - 32 % BS; /* lanes streaming; a multiple of bs */
    constexpr int DK = G / BS2, DP = G % BS2;
    extern __shared__ int64_t smem[];
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;
    int64_t *rp = smem + (int64_t)wib * (rows + 1);
    T *ys = (T *)(smem + (int64_t)(blockDim.x >> 5) * (rows + 1)) + (int64_t)wib * rows * BS;
    const int r = lane % BS;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;

    for (int64_t w = warp; w < chunks; w += nwarps) {
        const int64_t row0 = w * rows;
        const int nr = (int)(a.mb - row0 < rows ? a.mb - row0 : rows);
        for (int i = lane; i <= nr; i += 32)
            rp[i] = a.row_ptr[row0 + i];
        for (int i = lane; i < nr * BS; i += 32)
            ys[i] = T(0);
        __syncwarp();
        if (lane < G) {
            const int64_t kend = rp[nr];
            int64_t k = rp[0] + lane / BS2;
            int p = lane % BS2;
            int cur = 0;
            int64_t nxt = rp[1];
            T acc = T(0);
            while (k < kend) {
                int64_t kk[U];
                int pp[U];
                T v[U], xv[U];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    kk[u] = k;
                    pp[u] = p;
                    k += DK;
                    p += DP;
                    if (p >= BS2) {
                        p -= BS2;
                        ++k;
                    }
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (kk[u] < kend) {
                        v[u] = ldv(a.val + kk[u] * BS2 + pp[u]);
                        xv[u] = ld(a.x + (int64_t)ldc(a.col_idx + kk[u]) * BS + pp[u] / BS);
                    } else {
                        v[u] = T(0);
                        xv[u] = T(0);
                    }
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (kk[u] < kend) {
                        while (kk[u] >= nxt) { /* next block row (skips empty rows) */
                            atomicAdd(ys + cur * BS + r, acc);
                            acc = T(0);
                            ++cur;
                            nxt = rp[cur + 1];
                        }
                        acc += v[u] * xv[u];
                    }
                }
            }
            if (cur < nr)
                atomicAdd(ys + cur * BS + r, acc);
        }
        __syncwarp();
        for (int i = lane; i < nr * BS; i += 32)
            store_y(a, row0 * BS + i, ys[i]);
        __syncwarp(); /* rp/ys are reused by the next chunk */
    }
}

template <typename T, int BS, int U>
static cudaError_t run(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const int64_t chunks = (a.mb + l.rows - 1) / l.rows;
    const int wpb = l.threads / 32;
    const size_t shm = (size_t)wpb * ((l.rows + 1) * sizeof(int64_t) + (size_t)l.rows * BS * sizeof(T));
    k_flat<T, BS, U><<<bsrmv_grid(chunks, wpb), l.threads, shm, s>>>(a, l.rows, chunks);
    return cudaGetLastError();
}

/* Column-major only, bs 2..8, U = param (4), rows 1..64. */
template <typename T>
int launch_flat(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (order != COL || l.group != 32 || l.threads % 32 || l.threads > 256 || l.threads < 32 ||
        l.rows < 1 || l.rows > 64)
        return LAUNCH_NOT_BUILT;
#define X(BS, U)                                                               \
    if (a.bs == BS && l.param == U) \
        return launch_matched(l, err, [&] { return run<T, BS, U>(a, l, s); });
    BSRMV_FLAT_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER(launch_flat)

} // namespace bsrmv_cuda
