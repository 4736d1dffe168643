/* Wide kernel: a group of G lanes per block row, the wide inner loop of
 * wide.cuh (16-byte pieces of each block's contiguous direction). */
#include "wide.cuh"

namespace bsrmv_cuda {

/* Thread blocks of 256 an SM that the registers must allow, per value
 * type, order (-1: both), bs and group (0: any); elsewhere 0, ptxas
 * picks with only the 256 threads to go by.  Measured on an H200:
 *  - complex double bs 2 takes 54 registers unbounded (4 blocks); bounded
 *    to 48 (5 blocks) it spills nothing and its 583 MB grid ran 0.1470 ms
 *    against 0.1580 (86% of the read bandwidth against 80%);
 *  - complex float: unbounded, ptxas gives bs 2 44-53 registers and
 *    row-major bs 6 48 with spills; bs 2 bounded to 4 blocks (64
 *    registers) ran its 608 MB grid in 0.1496 ms against 0.1722
 *    row-major (1 or 2 blocks: 0.1541-0.1544) and 0.1491 against 0.1556
 *    column-major, row-major bs 6 bounded to 2 (124 registers) its 564 MB
 *    grid in 0.1349 against 0.1488 (4: 0.1357-0.1359, 1: 0.1417-0.1419),
 *    column-major bs 6 bounded to 2 (126 registers) in 0.1343 against
 *    by-column's 0.1424 (4: 0.1338 with 64 registers, and the
 *    value-per-load variant spilling 224 bytes); two rounds alternating
 *    the builds (at bs 7 a bound of 2 lost: 0.1472 against 0.1362);
 *  - the real rows take a bound of 1, which lets ptxas give a lane more
 *    registers (72-93 against 40-48) and so more loads in flight:
 *    solver-like, the two builds interleaved, on 12 shared matrices
 *    promoted (where the configuration was within 10% of the plan's pick)
 *    and 27-point grids of 280-560 MB, these gained 2-10% on the matrices
 *    (geometric mean, lowest 0.95-1.06) and -5% to +12% on the grids,
 *    3-12% at 128 threads (docs/GPU.md has the table); the keys measured
 *    and left out lost on a grid (row-major bs 4 with 32 lanes: 0.88x,
 *    float 0.66x) or on luxembourg_osm (column-major bs 8 and 16:
 *    0.78-0.81x), or were level (float bs 2, double bs 16).
 * Values and vectors of the same type only. */
struct WideBound {
    bool cplx;
    int vbytes, ord, bs, g, blocks;
};
constexpr WideBound wide_bounds[] = {
    {true, 16, -1, 2, 0, 5},      {true, 8, -1, 2, 0, 4},       {true, 8, -1, 6, 0, 2},
    {false, 8, COL, 2, 8, 1},     {false, 8, ROW, 2, 8, 1},     {false, 8, COL, 4, 16, 1},
    {false, 8, COL, 4, 32, 1},    {false, 4, COL, 4, 16, 1},    {false, 4, ROW, 4, 16, 1},
    {false, 4, COL, 8, 32, 1},
};
template <typename T, int ORD, int BS, int G, typename V> constexpr int wide_min_blocks()
{
    if constexpr (std::is_same<T, V>::value) {
        for (const WideBound &b : wide_bounds)
            if (b.cplx == is_cplx<T>::value && b.vbytes == (int)sizeof(T) && (b.ord < 0 || b.ord == ORD) &&
                b.bs == BS && (b.g == 0 || b.g == G))
                return b.blocks;
    }
    return 0;
}

template <typename T, int ORD, int BS, int G, bool VECTOR, typename V>
__global__ void __launch_bounds__(256, wide_min_blocks<T, ORD, BS, G, V>()) k_wide(const Args<T, V> a)
{
    using Lane = WideLane<T, ORD, BS, G, VECTOR, VECTOR ? 64 : 32, false, V>;
    const Lane wl(threadIdx.x & (G - 1));
    constexpr int GPW = 32 / G; /* groups per warp */
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
        V acc[Lane::NACC];
#pragma unroll
        for (int i = 0; i < Lane::NACC; ++i)
            acc[i] = V(0);
        if (mine && wl.on)
            wl.sum(a, s, e, acc);
        const V sum = wl.reduce(acc);
        if (mine && wl.stores())
            store_y(a, row * BS + wl.out_row(), sum);
    }
}

template <typename T, int ORD, int BS, int G, bool VECTOR, typename V>
static cudaError_t run(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    k_wide<T, ORD, BS, G, VECTOR, V><<<bsrmv_grid((a.mb * G + 31) / 32 * 32, l.threads), l.threads, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T, typename V>
int launch_wide(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.rows != 1 || l.threads % 32 || l.threads < 32 || l.threads > 256)
        return LAUNCH_NOT_BUILT;
    /* a misaligned x or val takes the one-value-per-load variant, unless a
     * load is one value (complex double; complex float at odd bs), which
     * every array of T is aligned for */
    const bool vec = wide_aligned(a);
#define X(BS, G)                                                               \
    if (a.bs == BS && l.group == G)                                            \
        return launch_matched(l, err, [&] {                                    \
            if constexpr (WideGeom<T, BS, G, true>::VEC * sizeof(T) <= alignof(T))  \
                return order == ROW ? run<T, ROW, BS, G, true>(a, l, s) : run<T, COL, BS, G, true>(a, l, s); \
            else if (order == ROW)                                             \
                return vec ? run<T, ROW, BS, G, true>(a, l, s) : run<T, ROW, BS, G, false>(a, l, s); \
            else                                                               \
                return vec ? run<T, COL, BS, G, true>(a, l, s) : run<T, COL, BS, G, false>(a, l, s); \
        });
    if constexpr (std::is_same<T, cplx<double>>::value) {
        BSRMV_WIDE_Z_LIST(X)
    } else if constexpr (std::is_same<T, cplx<float>>::value) {
        BSRMV_WIDE_C_LIST(X)
    } else {
        BSRMV_WIDE_LIST(X)
    }
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER_MIXED(launch_wide)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_wide)

} // namespace bsrmv_cuda
