/* By-block kernel (Eberhardt & Hoemmen, Algorithm 2) and KSPARSE K1.
 *
 * A group of G lanes (a warp, or a truncated sub-warp) covers
 * floor(G/bs^2) whole blocks per step; lane l keeps the same position (r, c)
 * inside a block for the whole block row, so x[col*bs + c] and the value
 * are its only loads per block.  With G = 32 and one row per warp this is
 * the paper's by-block algorithm; K1 (Abdelfattah et al.) adds several
 * consecutive block rows per thread array (`rows`), several thread arrays
 * per thread block, and buffering: the loads of the next steps are issued
 * before the current step's multiply.  The buffer is gather_sum's batch
 * (common.cuh), U steps deep: every col_idx load of the batch, then val
 * and x, then the FMAs.  On an H200 (27-point grids) it lifted
 * the kernel by 10-14% at bs 3 and 4, 5% at double bs 5 and 25% at float
 * bs 5 over the paper's two-step double buffering; 5 steps against 9 were
 * 21-23% ahead at bs 2, within 3% at bs 3 either way, 1-8% behind at
 * bs 5.  Lanes are laid out column-major inside a block for both orders,
 * so the reduction over lanes with the same r is the strided shuffle tree
 * of group_reduce. */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T, int ORD, int BS, int G, typename V>
__global__ void __launch_bounds__(256)
k_byblock(const Args<T, V> a, int rows_per_group, int64_t groups)
{
    constexpr int BS2 = BS * BS;
    constexpr int NBLK = G / BS2;       /* whole blocks per step */
    constexpr int ACTIVE = NBLK * BS2;
    constexpr int U = BS <= 3 ? 5 : 9; /* steps per batch, a value each */
    const int lane = threadIdx.x & (G - 1);
    const int bslot = lane / BS2;
    const int o = lane % BS2;
    const int c = o / BS, r = o % BS;
    const int voff = ORD == COL ? o : r * BS + c;
    const int64_t gpw = 32 / G;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t gin = (threadIdx.x & 31) / G;

    for (int64_t w = warp; w * gpw < groups; w += nwarps) {
        const int64_t grp = w * gpw + gin;
        const int64_t row0 = grp * rows_per_group;
        for (int k = 0; k < rows_per_group; ++k) {
            const int64_t row = row0 + k;
            bool valid = grp < groups && row < a.mb;
            if (valid && a.long_len > 0)
                valid = !long_row(a, a.row_ptr[row], a.row_ptr[row + 1]);
            V acc = V(0);
            if (valid && lane < ACTIVE) {
                const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
                acc = gather_sum<T, U, false>(
                    a, BS, Tap{s + bslot, c}, e, [](Tap &t) { t.blk += NBLK; },
                    [&](const Tap &t) { return t.blk * BS2 + voff; });
            }
            acc = group_reduce<V, G>(acc, lane, BS, ACTIVE / BS);
            if (valid && lane < BS)
                store_y(a, row * BS + lane, acc);
        }
    }
}

template <typename T, int ORD, int BS, int G, typename V>
static cudaError_t run(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    const int64_t groups = (a.mb + l.rows - 1) / l.rows;
    k_byblock<T, ORD, BS, G, V><<<bsrmv_grid(groups * G, l.threads), l.threads, 0, s>>>(a, l.rows, groups);
    return cudaGetLastError();
}

template <typename T, typename V>
int launch_byblock(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.threads % 32 || l.threads > 256 || l.threads < 32 || l.rows < 1)
        return LAUNCH_NOT_BUILT;
#define X(BS, G) BSRMV_LAUNCH_IF(a.bs == BS && l.group == G, run, BS, G)
    if constexpr (is_cplx<T>::value) {
        BSRMV_BYBLOCK_CPLX_LIST(X)
    } else {
        BSRMV_BYBLOCK_LIST(X)
    }
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER_MIXED(launch_byblock)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_byblock)

} // namespace bsrmv_cuda
