/* Wide kernel: a group of G lanes per block row reads its blocks in
 * 16-byte pieces of their contiguous direction (Evtushenko's "warp per
 * non-block row" for row-major blocks, generalised to both orders, to a
 * group per block row and to small blocks).
 *
 * A block is BS "lines" of BS contiguous values: rows of a row-major
 * block, columns of a column-major one.  Lane = sl * W + cv of the group
 * reads values cv*VEC .. cv*VEC+VEC-1 (one vector load) of line lj + NL*i
 * (i < LPL) of block lb + BPS*step, where lj = sl % BS, lb = sl / BS: a
 * group load covers NL = G / W whole lines, a contiguous stretch of val,
 * which is LPL = BS / NL loads per block (large bs) or BPS = NL / BS
 * blocks per load (small bs).
 *  - row-major: the lane's VEC values of x (one vector load per block)
 *    serve all its LPL rows: acc[i] is row lj + NL*i, summed over the W
 *    lanes of a line and the BPS lanes of the other blocks;
 *  - column-major: the lane loads x at its LPL columns: acc[q] is row
 *    cv*VEC + q, summed over the NL lanes with the same cv.
 * The sums are lanes_to_rows (common.cuh).  The by-column mapping reads a
 * row-major block a value per lane, bs values apart, and loads x once per
 * value: 36-47% of the read bandwidth at bs 16-32 (docs/GPU.md).  A batch
 * of U steps issues its col_idx and val loads, then x, then the FMAs (as
 * in gather_sum). */
#include "common.cuh"

namespace bsrmv_cuda {

/* Lane geometry for (T, BS, G), VEC values per load (1: unaligned arrays). */
template <typename T, int BS, int G, bool VECTOR> struct WideGeom {
    static constexpr int widest()
    {
        int v = 16 / (int)sizeof(T);
        while (v > 1 && BS % v)
            v /= 2;
        return v;
    }
    static constexpr int VEC = VECTOR ? widest() : 1;
    static constexpr int W = pow2ceil(BS / VEC);         /* lanes per line (pow2) */
    static constexpr int NL = G / W;                     /* lines per group load  */
    static constexpr int LPL = NL >= BS ? 1 : (BS + NL - 1) / NL; /* lines per lane */
    static constexpr int LP2 = pow2ceil(LPL);            /* padded for the reduction */
    static constexpr int BPS = NL >= BS ? NL / BS : 1;   /* blocks per group load */
    /* steps per batch: about 64 values of val in flight per lane, at most
     * 8 steps (H200: 32 values cost 37% at column-major bs 32 and 8% at
     * row-major bs 32, one block per batch; other sizes within 1-4%); 32
     * in the one-value-per-load variant, whose column-major x takes as
     * many registers as val */
    static constexpr int VALS = VECTOR ? 64 : 32;
    static constexpr int U = VALS / (LPL * VEC) < 1   ? 1
                             : VALS / (LPL * VEC) > 8 ? 8
                                                      : VALS / (LPL * VEC);
    static_assert(W <= G && LP2 <= W && VEC <= NL, "bs up to 32, G >= W");
    /* several blocks per load: the block's lanes must tile the group */
    static_assert(NL <= BS || (NL % BS == 0 && (BS & (BS - 1)) == 0), "BS a power of two");
};

template <typename T, int ORD, int BS, int G, bool VECTOR>
__global__ void __launch_bounds__(256) k_wide(const Args<T> a)
{
    using Geo = WideGeom<T, BS, G, VECTOR>;
    constexpr int VEC = Geo::VEC, W = Geo::W, NL = Geo::NL, LPL = Geo::LPL, U = Geo::U,
                  BPS = Geo::BPS;
    constexpr int NACC = ORD == ROW ? Geo::LP2 : VEC;
    constexpr int64_t BS2 = (int64_t)BS * BS;
    const int lane = threadIdx.x & (G - 1);
    const int cv = lane % W, sl = lane / W;
    const int lj = sl % BS, lb = sl / BS;
    const bool on = cv * VEC < BS; /* W is padded to a power of two */
    constexpr int GPW = 32 / G;    /* groups per warp */
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int gin = (threadIdx.x & 31) / G;

    for (int64_t w = warp; w * GPW < a.mb; w += nwarps) { /* uniform per warp */
        const int64_t row = w * GPW + gin;
        int64_t s = 0, e = 0;
        if (row < a.mb) {
            s = a.row_ptr[row];
            e = a.row_ptr[row + 1];
        }
        const bool mine = row < a.mb && !long_row(a, s, e);
        T acc[NACC];
#pragma unroll
        for (int i = 0; i < NACC; ++i)
            acc[i] = T(0);
        if (mine && on) {
            for (int64_t b = s + lb; b - lb < e; b += U * BPS) {
                int32_t col[U];
                T v[U][LPL][VEC], xv[U][ORD == ROW ? VEC : LPL];
                int n = 0; /* steps of this batch inside the row */
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const bool in = b + u * BPS < e;
                    n += in;
                    col[u] = in ? ldc(a.col_idx + b + u * BPS) : 0;
                }
                /* val, then x: predicated loads (ldv_vec) */
#pragma unroll
                for (int u = 0; u < U; ++u)
#pragma unroll
                    for (int i = 0; i < LPL; ++i) {
                        const int line = lj + NL * i;
                        ldv_vec(a.val + (b + u * BPS) * BS2 + line * BS + cv * VEC, v[u][i],
                                u < n && line < BS);
                    }
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const T *xb = a.x + (int64_t)col[u] * BS;
                    if constexpr (ORD == ROW) {
                        ldv_vec<true>(xb + cv * VEC, xv[u], u < n);
                    } else {
#pragma unroll
                        for (int i = 0; i < LPL; ++i) {
                            T x1[1];
                            ldv_vec<true>(xb + lj + NL * i, x1, u < n && lj + NL * i < BS);
                            xv[u][i] = x1[0];
                        }
                    }
                }
#pragma unroll
                for (int u = 0; u < U; ++u)
#pragma unroll
                    for (int i = 0; i < LPL; ++i)
#pragma unroll
                        for (int q = 0; q < VEC; ++q) {
                            if constexpr (ORD == ROW)
                                acc[i] += v[u][i][q] * xv[u][q];
                            else
                                acc[q] += v[u][i][q] * xv[u][i];
                        }
            }
        }
        if constexpr (ORD == ROW) {
            T sum = lanes_to_rows<T, NACC, W>(acc, cv); /* row lj + NL*(cv % LP2) */
#pragma unroll
            for (int k = 1; k < BPS; k *= 2) /* the same row of the other blocks */
                sum += __shfl_xor_sync(BSRMV_FULL_MASK, sum, k * BS * W);
            const int r = lj + NL * cv;
            if (mine && lb == 0 && cv < LPL && r < BS)
                store_y(a, row * BS + r, sum);
        } else {
            const T sum = lanes_to_rows<T, NACC, NL, W>(acc, sl); /* row cv*VEC + sl % VEC */
            if (mine && on && sl < VEC)
                store_y(a, row * BS + cv * VEC + sl, sum);
        }
    }
}

template <typename T, int ORD, int BS, int G, bool VECTOR>
static cudaError_t run(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    k_wide<T, ORD, BS, G, VECTOR><<<bsrmv_grid((a.mb * G + 31) / 32 * 32, l.threads), l.threads, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T>
int launch_wide(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.rows != 1 || l.threads % 32 || l.threads < 32 || l.threads > 256)
        return LAUNCH_NOT_BUILT;
    /* x comes with each call: a misaligned x (or wrapped val) takes the
     * one-value-per-load variant */
    const bool vec = (((uintptr_t)a.val | (uintptr_t)a.x) & 15) == 0;
#define X(BS, G)                                                               \
    if (a.bs == BS && l.group == G)                                            \
        return launch_matched(l, err, [&] {                                    \
            if (order == ROW)                                                  \
                return vec ? run<T, ROW, BS, G, true>(a, l, s) : run<T, ROW, BS, G, false>(a, l, s); \
            return vec ? run<T, COL, BS, G, true>(a, l, s) : run<T, COL, BS, G, false>(a, l, s);     \
        });
    BSRMV_WIDE_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER(launch_wide)

} // namespace bsrmv_cuda
