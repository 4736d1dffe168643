/* By-block kernel (Eberhardt & Hoemmen, Algorithm 2) and KSPARSE K1.
 *
 * A group of G lanes (a warp, or a truncated sub-warp) covers
 * floor(G/bs^2) whole blocks per step; lane l keeps the same position (r, c)
 * inside a block for the whole block row, so x[col*bs + c] and the value
 * are its only loads per block.  With G = 32 and one row per warp this is
 * the paper's by-block algorithm; K1 (Abdelfattah et al.) adds several
 * consecutive block rows per thread array (`rows`), several thread arrays
 * per thread block, and double buffering: the next step's loads are issued
 * before the current step's multiply (unrolled by two).  Lanes are laid out
 * column-major inside a block for both orders, so the reduction over lanes
 * with the same r is the strided shuffle tree of group_reduce. */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T, int ORD, int BS, int G>
__global__ void __launch_bounds__(256)
k_byblock(const Args<T> a, int rows_per_group, int64_t groups)
{
    constexpr int BS2 = BS * BS;
    constexpr int NBLK = G / BS2;       /* whole blocks per step */
    constexpr int ACTIVE = NBLK * BS2;
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
            T acc = T(0);
            if (valid && lane < ACTIVE) {
                const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
                int64_t b = s + bslot;
                /* double buffering, two steps deep: the loads of steps
                 * i+2, i+3 are issued before the FMAs of steps i, i+1 */
                auto load = [&](int64_t bb, T &v, T &xv) {
                    if (bb < e) {
                        v = ldv(a.val + bb * BS2 + voff);
                        xv = ld(a.x + (int64_t)ldc(a.col_idx + bb) * BS + c);
                    } else {
                        v = T(0);
                        xv = T(0);
                    }
                };
                T v0, x0, v1, x1;
                load(b, v0, x0);
                load(b + NBLK, v1, x1);
                for (; b < e; b += 2 * NBLK) {
                    T v2, x2, v3, x3;
                    load(b + 2 * NBLK, v2, x2);
                    load(b + 3 * NBLK, v3, x3);
                    acc += v0 * x0 + v1 * x1;
                    v0 = v2;
                    x0 = x2;
                    v1 = v3;
                    x1 = x3;
                }
            }
            acc = group_reduce<T, G>(acc, lane, BS, ACTIVE / BS);
            if (valid && lane < BS)
                store_y(a, row * BS + lane, acc);
        }
    }
}

template <typename T, int ORD, int BS, int G>
static cudaError_t run(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const int64_t groups = (a.mb + l.rows - 1) / l.rows;
    k_byblock<T, ORD, BS, G><<<bsrmv_grid(groups * G, l.threads), l.threads, 0, s>>>(a, l.rows, groups);
    return cudaGetLastError();
}

template <typename T>
int launch_byblock(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.threads % 32 || l.threads > 256 || l.threads < 32 || l.rows < 1)
        return LAUNCH_NOT_BUILT;
#define X(BS, G) BSRMV_LAUNCH_IF(a.bs == BS && l.group == G, run, BS, G)
    BSRMV_BYBLOCK_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER(launch_byblock)

} // namespace bsrmv_cuda
