/* By-column kernel (Eberhardt & Hoemmen, Algorithm 3), generalised to
 * sub-warp groups: a group of G lanes works on one block row at a time and
 * covers floor(G/bs) whole block columns per step, so lane l keeps the same
 * row r = l % bs for the whole block row.  In column-major blocks the active
 * lanes of a group read consecutive values of val (coalesced); x and col_idx
 * go through the read-only cache.  Each group takes `rows` consecutive block
 * rows; the inner loop is column_sum (common.cuh).  G = 1 is the scalar
 * CSR kernel (thread per row) at bs 1, G = 4..32 the vector kernel.
 * Partial sums are reduced with shuffles (group_reduce).  At column-major
 * bs 6 (and complex float bs 8) a lane takes a 16-byte piece of the values
 * (run, below). */
#include "common.cuh"

namespace bsrmv_cuda {

/* VPL > 1 (column-major, compile-time bs): a lane reads VPL consecutive
 * values of a block, a piece that may reach into the next column.  The
 * pieces' pattern repeats every unit of UC = lcm(bs, VPL) / bs columns,
 * LPU = UC * bs / VPL lanes; lane r of a unit keeps the same positions
 * r*VPL .. r*VPL + VPL-1 of every unit, so fixed rows.  SPLIT: the values
 * of a piece that meets two columns that lie in the first (the same for
 * every such lane where bs % UC == 0). */
constexpr int pieces_gcd(int x, int y) { return y ? pieces_gcd(y, x % y) : x; }
constexpr int pieces_split(int bs, int vpl, int lpu)
{
    for (int r = 0; r < lpu; ++r)
        if ((r * vpl) % bs + vpl > bs)
            return bs - (r * vpl) % bs;
    return vpl;
}
template <int BS, int VPL> struct Pieces {
    static constexpr int UC = BS ? VPL / pieces_gcd(BS, VPL) : 1;
    static constexpr int LPU = BS ? UC * BS / VPL : 1;
    static constexpr int SPLIT = BS ? pieces_split(BS, VPL, LPU) : VPL;
};

/* Thread blocks of 256 an SM that the registers must allow (0: ptxas
 * picks, which caps a lane at 64 registers).  A bound of 1 lets complex
 * double blocks of bs 5-8 and column-major complex float blocks of bs 5
 * and 8 keep more loads in flight (about 96 registers, 2 thread blocks an SM);
 * measured in docs/COMPLEX.md ("The by-column kernel's registers"). */
template <typename T, int ORD, int BS> constexpr int bycolumn_min_blocks()
{
    if constexpr (is_cplx<T>::value)
        return (sizeof(T) == 16 && BS >= 5 && BS <= 8) || (sizeof(T) == 8 && ORD == COL && (BS == 5 || BS == 8)) ? 1 : 0;
    return 0;
}

template <typename T, int ORD, int BS, int G, typename V, int VPL>
__global__ void __launch_bounds__(256, bycolumn_min_blocks<T, ORD, BS>())
k_bycolumn(const Args<T, V> a, int rows_per_group, int64_t groups)
{
    using Pc = Pieces<BS, VPL>;
    static_assert(VPL == 1 || (ORD == COL && BS > 0 && BS % Pc::UC == 0 && Pc::LPU <= G),
                  "pieces of compile-time column-major blocks, units inside a block");
    const int bs = BS ? BS : a.bs;
    const int lane = threadIdx.x & (G - 1);
    const int lpc = VPL > 1 ? Pc::LPU : bs; /* lanes per unit (scalar column) */
    const int ncol = G / lpc;          /* units per step             */
    const int active = ncol * lpc;     /* lanes doing work           */
    const int r = lane % lpc;          /* VPL > 1: values r*VPL..    */
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
    /* VPL > 1: 64 bytes of val in flight per lane (128: level for double,
     * 1.02-1.03x slower for float); float values with double vectors 6
     * steps of 8 bytes (H100, bs-6 grids of 383 and 564 MB double, 32
     * lanes: 67.7 and 97.4 us; 8 steps 78.8 and 113.8, 4 steps 75.0 and
     * 107.3, 16 steps 1.2-1.5x slower) */
    constexpr int UV = std::is_same<T, V>::value ? 64 / (VPL * (int)sizeof(T)) : 6;

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
            if constexpr (VPL > 1) { /* the unit's first column, then pieces */
                constexpr int64_t bs2 = BS * BS;
                const int c0 = cslot * Pc::UC, step = ncol * Pc::UC;
                if (mine && lane < active)
                    gather_sums<T, UV, (G < 16), VPL, Pc::SPLIT>(
                        a, bs, Tap{s + c0 / BS, c0 % BS}, e, ColumnStep{step / BS, step % BS, BS},
                        [&](const Tap &t) { return t.blk * bs2 + (int64_t)t.c * BS + r * VPL; }, acc,
                        r * VPL / BS, (r * VPL + VPL - 1) / BS);
            } else if (mine && lane < active) {
                acc[0] = column_sum<T, ORD, U, (G < 16), BATCHED>(a, bs, r, cslot, ncol, s, e);
            }
            if constexpr (Pc::UC == 1) { /* lane r < lpc: rows r*VPL.. */
#pragma unroll
                for (int i = 0; i < VPL; ++i) {
                    acc[i] = group_reduce<V, G>(acc[i], lane, lpc, ncol);
                    if (mine && lane < lpc)
                        store_y(a, row * bs + lane * VPL + i, acc[i]);
                }
            } else { /* value i of unit lane k lies at row (k*VPL + i) % bs:
                      * lane t < bs gathers its row's sums from the unit's
                      * lanes (this end for two rows a lane too cost double
                      * 3% at bs 6: rows of 27 blocks are short) */
                V sum = V(0);
#pragma unroll
                for (int i = 0; i < VPL; ++i) {
                    const V tot = group_reduce<V, G>(acc[i], lane, lpc, ncol);
                    int k = -1;
#pragma unroll
                    for (int q = 0; q < Pc::LPU; ++q)
                        if ((q * VPL + i) % BS == lane)
                            k = q;
                    const V o = __shfl_sync(BSRMV_FULL_MASK, tot, k < 0 ? 0 : k, G);
                    if (k >= 0)
                        sum += o;
                }
                if (mine && lane < BS)
                    store_y(a, row * BS + lane, sum);
            }
        }
    }
}

/* Column-major bs 6, real and complex float values, and complex float bs
 * 8: several values per lane, one 16-byte load, where a value per lane ran
 * out of issue slots for float values.  Complex float (two values a lane,
 * H200, 27-point grids, 32 lanes): bs 6, 564 MB, 3983-3986 GB/s back to
 * back (85% of the read bandwidth; a value per lane: 3432, 75%); bs 8,
 * 512 MB, 0.1243 ms against 0.1332 (91% against 84%).  H100,
 * 27-point grid of 564 MB, by-column with 32 lanes:
 *  - double, two rows of a column (3 lanes a column): 3024 GB/s (a value
 *    per lane: 2933); bs-6 promotions of bcsstk16, bcsstk25 and crack
 *    1.09-1.15x;
 *  - float, four values over two columns (3 lanes two columns): 3041 GB/s
 *    (two rows a lane: 2549, a value: 2103);
 *  - float values with double vectors, two rows a lane (8-byte loads):
 *    2966-2976 (a value: 1933); four values a lane ran 1.01-1.03x slower.
 * Where val or x is not aligned to the loads (wrapped arrays): a value per
 * lane. */
template <typename T, int ORD, int BS, int G, typename V>
static cudaError_t run(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    const int64_t groups = (a.mb + l.rows - 1) / l.rows;
    const int threads = l.threads;
    const dim3 grid = bsrmv_grid(groups * G, threads);
    if constexpr (ORD == COL && sizeof(T) <= 8 && (BS == 6 || (BS == 8 && is_cplx<T>::value))) {
        constexpr int VPL = std::is_same<T, V>::value ? 16 / sizeof(T) : 2;
        const bool xpair = Pieces<BS, VPL>::UC == 1 || ((uintptr_t)a.x & (2 * sizeof(V) - 1)) == 0;
        if (((uintptr_t)a.val & (VPL * sizeof(T) - 1)) == 0 && xpair) {
            k_bycolumn<T, ORD, BS, G, V, VPL><<<grid, threads, 0, s>>>(a, l.rows, groups);
            return cudaGetLastError();
        }
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
