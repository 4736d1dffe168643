/* Lane-block kernel: a group of G lanes per block row, each lane a whole
 * block at a time (lane l takes blocks s+l, s+l+G, ...): its bs*bs values
 * are one contiguous run, loaded together with its col_idx entry and its
 * bs values of x, and multiplied in registers into bs partial row sums.
 * The group's partial sums meet in one reduction at the end of the row
 * (lanes_to_rows), not per step.
 *
 * Why: at small bs on matrices of a few blocks a row (1-12 MB, L2-resident
 * in a solver's loop, 5-10 us a call) the value-per-lane kernels spend a
 * call on dependent steps and shuffles, and there cuSPARSE's BSR_ALG1 was
 * level with every other family.  Here a short row is one step: row_ptr,
 * then col_idx with the values, then x, then the FMAs and P - 1 + log2(G/P)
 * shuffles (P: bs rounded up to a power of two; docs/GPU.md, "Kernel
 * families"). */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T, int ORD, int BS, int G, bool VECTOR>
__global__ void __launch_bounds__(256)
k_laneblock(const Args<T> a)
{
    constexpr int BS2 = BS * BS;
    constexpr int P = pow2ceil(BS); /* partial sums, padded for lanes_to_rows */
    constexpr int GPW = 32 / G;     /* groups (block rows) per warp */
    static_assert(P <= G && G <= 32, "lanes_to_rows needs a lane per partial sum");
    const int lane = threadIdx.x & 31, l = lane & (G - 1), gin = lane / G;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t w = warp; w * GPW < a.mb; w += nwarps) { /* uniform per warp */
        const int64_t row = w * GPW + gin;
        int64_t s = 0, e = 0;
        if (row < a.mb) {
            s = ld(a.row_ptr + row);
            e = ld(a.row_ptr + row + 1);
        }
        const bool mine = row < a.mb && !long_row(a, s, e);
        T p[P];
#pragma unroll
        for (int i = 0; i < P; ++i)
            p[i] = T(0);
        for (int64_t k = mine ? s + l : e; k < e; k += G) {
            const T *xc = a.x + (int64_t)ldc(a.col_idx + k) * BS;
            T v[BS2];
            if constexpr (VECTOR)
                ldv_vec<true>(a.val + k * BS2, v);
            else
#pragma unroll
                for (int o = 0; o < BS2; ++o)
                    v[o] = ldv<true>(a.val + k * BS2 + o);
#pragma unroll
            for (int j = 0; j < BS; ++j) {
                const T xj = ld(xc + j);
#pragma unroll
                for (int i = 0; i < BS; ++i)
                    madd(p[i], v[ORD == COL ? j * BS + i : i * BS + j], xj);
            }
        }
        const T sum = lanes_to_rows<T, P, G>(p, l);
        if (mine && l < BS)
            store_y(a, row * BS + l, sum);
    }
}

/* VECTOR: a block's values in 16-byte loads, where every block starts on a
 * 16-byte boundary (ldv_vec's condition). */
template <typename T, int ORD, int BS, int G>
static cudaError_t run(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const unsigned grid = bsrmv_grid((a.mb + 32 / G - 1) / (32 / G) * 32, l.threads);
    if constexpr ((BS * BS * sizeof(T)) % 16 == 0)
        if ((((uintptr_t)a.val) & 15) == 0) {
            k_laneblock<T, ORD, BS, G, true><<<grid, l.threads, 0, s>>>(a);
            return cudaGetLastError();
        }
    k_laneblock<T, ORD, BS, G, false><<<grid, l.threads, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T>
int launch_laneblock(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.rows != 1 || l.param != 0 || l.threads % 32 || l.threads < 32 || l.threads > 256)
        return LAUNCH_NOT_BUILT;
#define X(BS, G) BSRMV_LAUNCH_IF(a.bs == BS && l.group == G, run, BS, G)
    BSRMV_LANEBLOCK_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER(launch_laneblock)

} // namespace bsrmv_cuda
