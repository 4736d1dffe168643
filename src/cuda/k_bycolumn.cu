/* By-column kernel (Eberhardt & Hoemmen, Algorithm 3), generalised to
 * sub-warp groups: a group of G lanes works on one block row at a time and
 * covers floor(G/bs) whole block columns per step, so lane l keeps the same
 * row r = l % bs for the whole block row.  In column-major blocks the active
 * lanes of a group read consecutive values of val (coalesced); x and col_idx
 * go through the read-only cache.  Each group takes `rows` consecutive block
 * rows; the inner loop is column_sum (common.cuh).  G = 1 is the scalar
 * CSR kernel (thread per row) at bs 1, G = 4..32 the vector kernel.
 * Partial sums are reduced with shuffles (group_reduce).  At column-major
 * bs 6 a lane takes two rows of the column (run, below). */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T, int ORD, int BS, int G, typename V, int VPL>
__global__ void __launch_bounds__(256)
k_bycolumn(const Args<T, V> a, int rows_per_group, int64_t groups)
{
    const int bs = BS ? BS : a.bs;
    const int lane = threadIdx.x & (G - 1);
    const int lpc = bs / VPL;          /* lanes per scalar column    */
    const int ncol = G / lpc;          /* scalar columns per step    */
    const int active = ncol * lpc;     /* lanes doing work           */
    const int r = lane % lpc;          /* rows r*VPL .. r*VPL+VPL-1  */
    const int cslot = lane / lpc;
    const int64_t gpw = 32 / G; /* groups per warp */
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t gin = (threadIdx.x & 31) / G;
    /* double: batches of 8 steps (4 was 1-4% slower at bs 1-5 and 7 and
     * 10-47% at bs 8, 24, 32, 7% faster at bs 16 on an H100; 16 lost
     * occupancy, 30-40% slower), but 4 at bs 6 (H200, 1.03-1.06x,
     * both orders).  float keeps the streamed
     * loop (8 steps at bs 1-7, 4 above): batched it lost 10-40% at bs 2, 4,
     * 8, 16, 30% at row-major bs 3-4 and 11% at
     * column-major bs 6; but it gained 10%, 2% and 35% at row-major bs 5,
     * 6, 7 (H200), where a step's lanes read a strided piece
     * of each block.  Float values with double x follow double: the
     * schedule is set by the latency of the x gather; so do the complex
     * types (8 and 16 bytes a value). */
    constexpr bool WIDE = sizeof(V) >= 8;
    constexpr int U = WIDE && BS == 6 ? 4 : WIDE || (BS >= 1 && BS <= 7) ? 8 : 4;
    constexpr bool BATCHED = WIDE || (ORD == ROW && BS >= 5 && BS <= 7);
    /* VPL > 1: 64 bytes of val in flight per lane (128: 1.2-1.5x slower
     * for the mixed pair, level for double) */
    constexpr int UV = 64 / (VPL * (int)sizeof(T));

    for (int64_t w = warp; w * gpw < groups; w += nwarps) {
        const int64_t grp = w * gpw + gin;
        const int64_t row0 = grp * rows_per_group;
        for (int k = 0; k < rows_per_group; ++k) { /* uniform trip count */
            const int64_t row = row0 + k;
            const bool valid = grp < groups && row < a.mb;
            V acc[VPL] = {};
            int64_t s = 0, e = 0;
            if (valid) {
                s = a.row_ptr[row];
                e = a.row_ptr[row + 1];
            }
            const bool mine = valid && !long_row(a, s, e);
            if constexpr (VPL > 1) { /* column-major: rows r*VPL.. of each column */
                const int64_t bs2 = (int64_t)bs * bs;
                if (mine && lane < active)
                    gather_sums<T, UV, (G < 16), VPL>(
                        a, bs, Tap{s + cslot / bs, cslot % bs}, e, ColumnStep{ncol / bs, ncol % bs, bs},
                        [&](const Tap &t) { return t.blk * bs2 + (int64_t)t.c * bs + r * VPL; }, acc);
            } else if (mine && lane < active) {
                acc[0] = column_sum<T, ORD, U, (G < 16), BATCHED>(a, bs, r, cslot, ncol, s, e);
            }
#pragma unroll
            for (int i = 0; i < VPL; ++i) {
                acc[i] = group_reduce<V, G>(acc[i], lane, lpc, ncol);
                if (mine && lane < lpc)
                    store_y(a, row * bs + lane * VPL + i, acc[i]);
            }
        }
    }
}

/* Column-major bs 6, real values: two rows of a column per lane (one 8-
 * or 16-byte load; 3 lanes a column, 10 columns a warp step), where a
 * value per lane ran out of issue slots for float values.  H100, 27-point
 * grid of 564 MB (double), by-column with 32 lanes: double 3016 GB/s
 * (a value per lane: 2933), float values with double vectors 2689 (1933),
 * float 2565 (2103); bs-6 promotions of bcsstk16, bcsstk25 and crack,
 * double: 1.09-1.15x.  Where val is not aligned to the load (a wrapped
 * array): a value per lane. */
template <typename T, int ORD, int BS, int G, typename V>
static cudaError_t run(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    const int64_t groups = (a.mb + l.rows - 1) / l.rows;
    const int threads = l.threads;
    const dim3 grid = bsrmv_grid(groups * G, threads);
    if constexpr (ORD == COL && BS == 6 && !is_cplx<T>::value)
        if (((uintptr_t)a.val & (2 * sizeof(T) - 1)) == 0) {
            k_bycolumn<T, ORD, BS, G, V, 2><<<grid, threads, 0, s>>>(a, l.rows, groups);
            return cudaGetLastError();
        }
    k_bycolumn<T, ORD, BS, G, V, 1><<<grid, threads, 0, s>>>(a, l.rows, groups);
    return cudaGetLastError();
}

template <typename T, typename V>
int launch_bycolumn(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.param > 0) { /* flat-stream mode (k_flat.cu): not built for the mixed pair or complex */
        if constexpr (std::is_same<T, V>::value && !is_cplx<T>::value)
            return launch_flat<T>(a, order, l, s, err);
        return LAUNCH_NOT_BUILT;
    }
    if (l.threads % 32 || l.threads > 256 || l.threads < 32 || l.rows < 1)
        return LAUNCH_NOT_BUILT;
#define X(BS, G) BSRMV_LAUNCH_IF(bsk == BS && l.group == G, run, BS, G)
    if constexpr (is_cplx<T>::value) {
        const int bsk = BSRMV_COMPILED_BS(BSRMV_BYCOLUMN_CPLX_LIST, a.bs);
        if (bsk == 0 && a.bs > 32)
            return LAUNCH_NOT_BUILT;
        BSRMV_BYCOLUMN_CPLX_LIST(X)
    } else {
        const int bsk = BSRMV_COMPILED_BS(BSRMV_BYCOLUMN_LIST, a.bs);
        if (bsk == 0 && a.bs > 32)
            return LAUNCH_NOT_BUILT;
        BSRMV_BYCOLUMN_LIST(X)
    }
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER_MIXED(launch_bycolumn)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_bycolumn)

} // namespace bsrmv_cuda
