/* Load-balanced kernels for irregular matrices: one kernel, three
 * schedules (schedule.cu builds the work units when the plan is made).
 *
 *  - segmented (KSPARSE balanced, Abdelfattah et al. 5.5): a unit per block
 *    row, rows longer than lambda split into lambda-block segments;
 *  - merge path (Merrill & Garland): units of equal rows + blocks, so that
 *    neither long rows nor runs of empty rows unbalance the grid;
 *  - fragments (Yin et al.): units of equal blocks, a "Bound" row per unit.
 *
 * Segmented and fragment units: a group of G lanes takes one unit at a time
 * and walks the block rows it touches with the by-column inner loop
 * (column_sum; at bs 16, 24 and 32 the wide one of wide.cuh), one row after the
 * other; at 6 <= bs < 16 a warp streams the unit's blocks instead, across
 * row ends (k_fragstream).  Merge-path
 * units: a warp streams the unit's values as one contiguous run (the
 * flat-stream scheme of k_flat.cu: lane l reads flat indices l, l+G, ...
 * with G a multiple of bs, so its row inside the block is fixed); a
 * segmented shuffle sum per step adds each block row's values into a
 * per-warp y slice in shared memory.
 * The merge path bounds the rows of a unit, hence the slice.  No dependent
 * row_ptr -> reduce chain per row, which is what short rows cost the row
 * walk, and no atomics.
 * A row that lies wholly inside the unit is finished and stored with
 * alpha/beta.  A row cut
 * by a unit boundary leaves its partial sum in the unit's next `pieces`
 * slot; the fix-up kernel then adds a cut row's slots in slot order and
 * applies alpha/beta once, so results do not depend on the launch order
 * (no floating-point atomics). */
#include "merge.cuh"
#include "wide.cuh"

#include <type_traits>

namespace bsrmv_cuda {

/* WIDE (bs 16, 24 and 32, G 32, aligned val and x): a row's blocks through
 * the wide inner loop (wide.cuh), 16-byte loads along the blocks' lines,
 * rather than column_sum's value per lane and step; 16 values of val in
 * flight per lane (H200, power-law bs 16 against column_sum: row-major
 * double 2.2-2.3x, float col 1.2-1.26x, double col 1.03-1.06x; 32 values
 * ran at 0.95-1.04x 16, 64 at 0.99-1.0x).  At bs 24 and 32 the group
 * reads a whole block per step (H100, orani678, rajat01 and sts4098
 * promoted, double, column-major fragments: 1.30-1.53x the best cuSPARSE
 * path, where the runtime-bs column_sum walk had run at 0.47-0.76x). */
template <typename T, int ORD, int BS, int G, bool WIDE>
__global__ void __launch_bounds__(256, 1)
k_balanced(const Args<T> a, const Schedule sc)
{
    allow_fixup_launch();
    /* bs 16's geometry stands in where !WIDE (unused there) */
    using Wide = WideLane<T, ORD, WIDE ? BS : 16, 32, true, 16>;
    const Wide wl(threadIdx.x & 31);
    const int bs = BS ? BS : a.bs;
    const int lane = threadIdx.x & (G - 1);
    const int ncol = G / bs;
    const int active = ncol * bs;
    const int r = lane % bs;
    const int cslot = lane / bs;
    const int64_t gpw = 32 / G;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t gin = (threadIdx.x & 31) / G;
    T *pieces = (T *)sc.pieces;

    for (int64_t w = warp; w * gpw < sc.nunits; w += nwarps) {
        const int64_t u = w * gpw + gin;
        const bool valid = u < sc.nunits;
        /* every lane of the warp runs the same number of row steps, so the
         * full-mask shuffles of group_reduce stay legal */
        const UnitRows ur = valid ? UnitRows(a, sc, u) : UnitRows();
        int64_t row = ur.row0, sl = ur.slot, most = ur.steps;
        for (int o = 16; o >= 1; o >>= 1)
            most = max(most, __shfl_xor_sync(BSRMV_FULL_MASK, most, o));
        for (int64_t k = 0; k < most; ++k, ++row) {
            const bool live = k < ur.steps;
            int64_t lo = 0, hi = 0;
            const bool whole = live && ur.part(a, row, lo, hi);
            T acc = T(0);
            int out = lane; /* the row of the block row this lane's sum is */
            if constexpr (WIDE) {
                T p[Wide::NACC];
#pragma unroll
                for (int i = 0; i < Wide::NACC; ++i)
                    p[i] = T(0);
                if (live && wl.on && lo < hi)
                    wl.sum(a, lo, hi, p);
                acc = wl.reduce(p);
                out = wl.held_row(bs);
            } else {
                if (live && lane < active && lo < hi)
                    acc = column_sum<T, ORD, 4, (G < 16), false>(a, bs, r, cslot, ncol, lo, hi);
                acc = group_reduce<T, G>(acc, lane, bs, ncol);
            }
            if (!live)
                continue;
            if (whole) {
                if (out < bs)
                    store_y(a, row * bs + out, acc);
            } else { /* cut: the head of a row begun earlier, or a carry */
                if (out < bs)
                    pieces[sl * bs + out] = acc;
                ++sl;
            }
        }
    }
}

/* Fragment and long-row units streamed, 6 <= bs < 16 (a warp per unit):
 * the row walk's lane layout (lane = row r of a block, column slot cslot;
 * ncol columns per step, spb steps per block), but the warp walks the
 * unit's blocks as one stream of steps, U loads of val and x in flight per
 * lane, and ends a row (group_reduce + store) between two steps where the
 * stream crosses its end.  So rows no longer stall the loads: the walk
 * began each row with its row_ptr load and ended it with a partly filled
 * batch (H200, power-law bs 8: 1.14-1.17x the walk at its best unit size,
 * bs 12: 1.6x; at bs 16, 8 steps per block, the walk stays ahead: 0.95x).
 * The unit's row ends and col_idx come in 32-entry slices, an entry per
 * lane, read by shuffle; the next col_idx slice is loaded 32 blocks ahead.
 * __launch_bounds__(256, 1) would let ptxas take 88 registers at bs 8,
 * two thread blocks per SM: 0.68x (H200).
 * WIDE (stream_wide below): the wide kernel's lane layout instead, a
 * 16-byte piece of a line (column or row of the block) per lane and step,
 * whole lines per step; its reduction is WideLane::reduce. */
template <typename T, int ORD, int BS, bool WIDE>
__global__ void __launch_bounds__(256)
k_fragstream(const Args<T> a, const Schedule sc)
{
    allow_fixup_launch();
    /* bs 16's geometry stands in where !WIDE (unused there) */
    using Wide = WideLane<T, ORD, WIDE ? BS : 16, 32, true, 64, true>;
    static_assert(!WIDE || Wide::NL * Wide::LPL == BS, "whole lines per step, no two blocks");
    constexpr int VEC = WIDE ? Wide::VEC : 1;
    constexpr int NACC = WIDE ? Wide::NACC : 1;
    constexpr int XV = WIDE && ORD == ROW ? VEC : 1; /* x values per step */
    /* 64 bytes of loads per lane in flight (H200, power-law bs 8: double
     * with U = 4 ran at 0.87x U = 8; float with U = 8 at 1878 GB/s, with
     * U = 16 at 2255-2423 in later runs) */
    constexpr int U0 = 64 / (VEC * sizeof(T));
    constexpr int U = !WIDE ? U0 : U0 < Wide::LPL ? Wide::LPL : U0 / Wide::LPL * Wide::LPL;
    static_assert(!WIDE || U % Wide::LPL == 0, "a batch starts a block");
    const int bs = BS ? BS : a.bs;
    const int bs2 = bs * bs;
    const int lane = threadIdx.x & 31;
    const Wide wl(lane);
    const int ncol = WIDE ? 0 : 32 / bs, spb = WIDE ? Wide::LPL : (bs + ncol - 1) / ncol;
    const int r = lane % bs, cslot = WIDE ? 0 : lane / bs;
    const bool act = WIDE ? wl.on : lane < ncol * bs;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    T *pieces = (T *)sc.pieces;

    for (int64_t u = warp; u < sc.nunits; u += nwarps) {
        const int64_t r0 = sc.unit_row[u], j = sc.unit_blk[u];
        const int64_t re = sc.end_row[u], je = sc.end_blk[u];
        const int64_t slot = sc.slot[u];
        const int nb = (int)(je - j);
        /* unit row i (block row r0 + i) ends at block offset end(i); the
         * carry, row re, at nb */
        auto ends_from = [&](int i0) -> int {
            const int64_t row = r0 + i0 + lane;
            return row < re ? (int)(ld(a.row_ptr + row + 1) - j) : nb;
        };
        auto cols_from = [&](int k0) -> int32_t {
            return k0 + lane < nb ? ldc(a.col_idx + j + k0 + lane) : 0;
        };
        const bool head = r0 < re && ld(a.row_ptr + r0) < j;
        const int64_t tail = re < a.mb ? ld(a.row_ptr + re) : 0;
        const bool carry = carries(re, a.mb, tail, j, je);
        int ends = ends_from(0), ibase = 0, i = 0;
        int32_t cols = cols_from(0), next = cols_from(32);
        int kbase = 0;
        int end = __shfl_sync(BSRMV_FULL_MASK, ends, 0);
        T acc[NACC];
#pragma unroll
        for (int c = 0; c < NACC; ++c)
            acc[c] = T(0);
        /* the warp's sums of the rows of one block row, out = the row this
         * lane holds (bs: none) */
        auto reduce = [&](int &out) -> T {
            if constexpr (WIDE) {
                out = wl.held_row(bs);
                return wl.reduce(acc);
            } else {
                out = lane;
                return group_reduce<T, 32>(acc[0], lane, bs, ncol);
            }
        };
        /* unit row i is complete: to y, or to the head slot */
        auto finish = [&]() {
            int out;
            const T sum = reduce(out);
            if (out < bs) {
                if (i == 0 && head)
                    pieces[slot * bs + out] = sum;
                else
                    store_y(a, (r0 + i) * bs + out, sum);
            }
#pragma unroll
            for (int c = 0; c < NACC; ++c)
                acc[c] = T(0);
            if (++i - ibase == 32) {
                ibase += 32;
                ends = ends_from(ibase);
            }
            end = __shfl_sync(BSRMV_FULL_MASK, ends, i - ibase);
        };
        const int nsteps = nb * spb;
        /* the lane's first value: WIDE, VEC values of line lj at cv*VEC;
         * else row r of column cslot */
        const T *val = a.val + j * (int64_t)bs2 +
                       (WIDE ? wl.lj * bs + wl.cv * VEC : ORD == COL ? cslot * bs + r : r * bs + cslot);
        for (int s0 = 0; s0 < nsteps; s0 += U) {
            if (s0 / spb - kbase >= 32) { /* a batch spans fewer than 32 blocks */
                kbase += 32;
                cols = next;
                next = cols_from(kbase + 32);
            }
            T v[U][VEC], xv[U][XV];
#pragma unroll
            for (int q = 0; q < U; ++q) {
                const int st = s0 + q;
                /* WIDE: spb is a compile-time constant and divides U */
                const int k = WIDE ? s0 / spb + q / spb : st / spb;
                const int ch = WIDE ? q % spb : st - k * spb;
                const int32_t col = k - kbase < 32 ? __shfl_sync(BSRMV_FULL_MASK, cols, k - kbase)
                                                   : __shfl_sync(BSRMV_FULL_MASK, next, k - kbase - 32);
                if constexpr (WIDE) {
                    const bool ok = st < nsteps && act;
                    const int line = wl.lj + Wide::NL * ch;
                    ldv_vec(val + (k * bs2 + Wide::NL * ch * bs), v[q], ok);
                    ldv_vec<true>(a.x + (int64_t)col * bs + (ORD == COL ? line : wl.cv * VEC), xv[q], ok);
                } else {
                    const int c = ch * ncol + cslot;
                    const bool ok = st < nsteps && act && c < bs;
                    v[q][0] = ok ? ldv(val + (k * bs2 + ch * ncol * (ORD == COL ? bs : 1))) : T(0);
                    xv[q][0] = ok ? ld(a.x + (int64_t)col * bs + c) : T(0);
                }
            }
#pragma unroll
            for (int q = 0; q < U; ++q) {
                const int st = s0 + q, k = st / spb;
                if (st < nsteps && st == k * spb) /* the stream enters block k */
                    while (k >= end)
                        finish();
                if constexpr (WIDE && ORD == ROW) { /* line ch of the block: its own sum */
#pragma unroll
                    for (int c = 0; c < VEC; ++c)
                        acc[q % spb] += v[q][c] * xv[q][c];
                } else {
#pragma unroll
                    for (int c = 0; c < VEC; ++c)
                        acc[c] += v[q][c] * xv[q][0];
                }
            }
        }
        while (r0 + i < re)
            finish();
        if (carry) {
            int out;
            const T sum = reduce(out);
            if (out < bs)
                pieces[(slot + head) * bs + out] = sum;
        }
    }
}

/* The end of a merge-path unit u (rows r0.. of rp[], sums of its nr rows
 * in ys): finished rows that began here go to y; a head (the first row,
 * begun in an earlier unit) and a carry (row end_row, unfinished) go to
 * their slots. */
template <typename T>
__device__ __forceinline__ void unit_store(const Args<T> &a, const Schedule &sc, int64_t u,
                                           int nr, const int64_t *rp, const T *ys, int lane)
{
    const int bs = a.bs;
    const int64_t r0 = sc.unit_row[u], j = sc.unit_blk[u];
    const int64_t re = sc.end_row[u], je = sc.end_blk[u];
    T *pieces = (T *)sc.pieces;
    const bool head = r0 < re && rp[0] < j;
    const bool carry = carries(re, a.mb, rp[nr - 1], j, je);
    for (int i = lane; i < nr * bs; i += 32) {
        const int row = i / bs;
        const int64_t grow = r0 + row;
        if (grow < re && !(row == 0 && head))
            store_y(a, grow * bs + i % bs, ys[i]);
        else if (row == 0 && head)
            pieces[sc.slot[u] * bs + i % bs] = ys[i];
        else if (carry)
            pieces[(sc.slot[u] + head) * bs + i % bs] = ys[i];
    }
}

template <typename T, int ORD, int BS>
__global__ void __launch_bounds__(256)
k_mergeflat(const Args<T> a, const Schedule sc)
{
    allow_fixup_launch();
    const int bs = BS ? BS : a.bs;
    const int bs2 = bs * bs;
    const int G = 32 - 32 % bs; /* lanes streaming; a multiple of bs */
    const int DK = G / bs2, DP = G % bs2;
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;
    const int cap = sc.max_rows; /* rows of the largest unit */
    extern __shared__ int64_t smem[];
    int64_t *rp = smem + (int64_t)wib * (cap + 1);
    T *ys = (T *)(smem + (int64_t)(blockDim.x >> 5) * (cap + 1)) + (int64_t)wib * cap * bs;
    const int r = lane % bs;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;

    for (int64_t u = warp; u < sc.nunits; u += nwarps) {
        const int64_t r0 = sc.unit_row[u], j = sc.unit_blk[u];
        const int64_t re = sc.end_row[u], je = sc.end_blk[u];
        const int nr = (int)((re < a.mb ? re : a.mb - 1) - r0 + 1); /* rows r0..re */
        for (int i = lane; i <= nr; i += 32)
            rp[i] = a.row_ptr[r0 + i];
        for (int i = lane; i < nr * bs; i += 32)
            ys[i] = T(0);
        __syncwarp();
        /* U steps of G values: loads of all U first, then per step a
         * segmented sum over the lanes of the same row r inside the block
         * (stride bs; their block rows are non-decreasing), and the last
         * lane of each block-row segment adds it to the y slice.  Each
         * (row, r) has one such lane per step, so no atomics are needed. */
        constexpr int U = 4;
        /* L2 priority (common.cuh): at bs 1 the matrix streams evict-first
         * (1.046x on power-law, H100) */
        constexpr L2h HM = BS == 1 ? L2h::first : L2h::normal;
        const int64_t nval = (je - j) * bs2;
        int64_t k = j + lane / bs2;
        int p = lane % bs2, cur = 0;
        int64_t nxt = nr > 1 ? rp[1] : INT64_MAX;
        for (int64_t t0 = 0; t0 < nval; t0 += (int64_t)U * G) {
            int64_t kk[U];
            T v[U];
#pragma unroll
            for (int q = 0; q < U; ++q) {
                kk[q] = k;
                v[q] = T(0);
                if (lane < G && t0 + q * G + lane < nval) {
                    const int c = p / bs;
                    const int off = ORD == COL ? p : r * bs + c;
                    v[q] = ldv<false, HM>(a.val + k * bs2 + off) *
                           ld(a.x + (int64_t)ldc<HM>(a.col_idx + k) * bs + c);
                } else {
                    kk[q] = -1; /* no value */
                }
                k += DK;
                p += DP;
                if (p >= bs2) {
                    p -= bs2;
                    ++k;
                }
            }
#pragma unroll
            for (int q = 0; q < U; ++q) {
                const bool has = kk[q] >= 0;
                if (has)
                    while (kk[q] >= nxt) { /* next block row (skips empty rows) */
                        ++cur;
                        nxt = cur + 1 < nr ? rp[cur + 1] : INT64_MAX;
                    }
                const int key = has ? cur : -1 - lane; /* lanes without a value match nobody */
                T sum = v[q];
                for (int d = bs; d < G; d <<= 1) {
                    const T o = __shfl_up_sync(BSRMV_FULL_MASK, sum, d);
                    const int ok = __shfl_up_sync(BSRMV_FULL_MASK, key, d);
                    if (lane >= d && ok == key)
                        sum += o;
                }
                const int next = __shfl_down_sync(BSRMV_FULL_MASK, key, bs);
                if (has && (lane + bs >= G || next != key))
                    ys[cur * bs + r] += sum;
                __syncwarp();
            }
        }
        __syncwarp();
        unit_store(a, sc, u, nr, rp, ys, lane);
        __syncwarp(); /* rp/ys are reused by the next unit */
    }
}

/* Bytes of shared memory per warp of k_mergeseq: the block products, the
 * unit's row_ptr (as int offsets) and, with pieces, the unit's col_idx.
 * Finished rows go straight to y, so no y slice: the smaller the warp's
 * share, the more warps hide the gather's latency (occupancy was bound by
 * shared memory). */
__host__ __device__ __forceinline__ size_t mergeseq_warp_bytes(int rows, int blocks, int bs,
                                                               size_t ts, bool pieces)
{
    const size_t b = ts * bs * (size_t)blocks + (size_t)(rows + 1) * 4 +
                     (pieces ? (size_t)blocks * 4 : 0);
    return (b + 7) / 8 * 8;
}

/* Merge-path units, lane-sequential: CUB's merge-based CSR SpMV (Merrill &
 * Garland) at the scale of a warp, with a bs x bs block as the item.
 *  1. Gather: the unit's block products go to shared memory
 *     (unit_products), so the warp reads contiguous stretches of val.
 *  2. Merge: each lane takes an equal stretch (rows + blocks) of the unit's
 *     merge path, found by binary search in the unit's row_ptr, and walks it
 *     adding products in registers: a few instructions per block instead of
 *     the flat stream's segmented shuffle sum per value.  A row that begins
 *     and ends in the lane's stretch is stored at once.
 *  3. Rows cut between lanes: each lane ends with the partial sum of its
 *     last, unfinished row (its tail); a segmented scan over the lanes
 *     (shuffles, a fixed tree, so results stay bit-for-bit repeatable)
 *     adds each row's tails, and the lane that finishes the row takes the
 *     sum up to the lane before it.  Before, that lane read the tails from
 *     shared memory one lane after another; the scan was 1.09x at double
 *     bs 4 and 1.18x at float bs 4 (H200, power-law, default units).  The
 *     unit's own cut rows (a head begun in an earlier unit, a carry into
 *     the next) go to their `pieces` slots for k_fixup. */
template <typename T, int ORD, int BS, typename V>
/* minBlocks 1 written out: ptxas then allots more registers (53 rather
 * than 48 at bs 2), and that is the build measured in docs/GPU.md */
__global__ void __launch_bounds__(256, 1)
k_mergeseq(const Args<T, V> a, const Schedule sc)
{
    allow_fixup_launch();
    constexpr int BS2 = BS * BS;
    const int lane = threadIdx.x & 31;
    const int cap = sc.max_rows, capb = sc.max_blocks;
    extern __shared__ int64_t smem[];
    constexpr bool PIECES = mergeseq_pieces(ORD, BS, sizeof(T));
    char *mine = (char *)smem +
                 (threadIdx.x >> 5) * mergeseq_warp_bytes(cap, capb, BS, sizeof(V), PIECES);
    V *prod = (V *)mine;
    int *rp = (int *)(prod + (size_t)capb * BS);
    int *cs = rp + cap + 1; /* PIECES: the unit's col_idx */
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    V *pieces = (V *)sc.pieces;

    for (int64_t u = warp; u < sc.nunits; u += nwarps) {
        const int64_t r0 = sc.unit_row[u], j = sc.unit_blk[u];
        const int64_t re = sc.end_row[u];
        const int nr = (int)((re < a.mb ? re : a.mb - 1) - r0 + 1); /* rows r0..re */
        const int na = (int)(re - r0);                              /* rows ending here */
        const int nb = (int)(sc.end_blk[u] - j);
        const int64_t slot = sc.slot[u];
        /* row_ptr relative to the unit's first block, clamped to [-1, nb]:
         * the walk compares it only with offsets in [0, nb] */
        for (int i = lane; i <= nr; i += 32) {
            const int64_t o = ld(a.row_ptr + r0 + i) - j;
            rp[i] = (int)(o < 0 ? -1 : o > nb ? nb : o);
        }
        /* with pieces, the x loads wait for an LDS, not a col_idx load
         * (H100 power-law bs 2: 1716 -> 1869 GB/s with both, 1611 with the
         * pieces alone; bs 4: 1741 -> 1868, 1888 with the pieces alone) */
        if constexpr (PIECES) {
            /* 4 loads per lane in flight (H200, power-law bs 2-4:
             * 1.01-1.10x one at a time) */
            for (int i0 = 0; i0 < nb; i0 += 4 * 32) {
                int32_t c4[4];
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int i = i0 + q * 32 + lane;
                    c4[q] = i < nb ? ldc(a.col_idx + j + i) : 0;
                }
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int i = i0 + q * 32 + lane;
                    if (i < nb)
                        cs[i] = c4[q];
                }
            }
            __syncwarp();
            unit_products<T, ORD, BS>(a, nb, a.val + j * BS2,
                                      [&](int k) { return a.x + (int64_t)cs[k] * BS; }, prod, lane);
        } else {
            unit_products<T, ORD, BS>(
                a, nb, a.val + j * BS2,
                [&](int k) { return a.x + (int64_t)ldc(a.col_idx + j + k) * BS; }, prod, lane);
        }
        __syncwarp();
        unit_merge<T, BS>(a, pieces, r0, slot, nr, na, nb, rp, prod, lane);
        __syncwarp(); /* the shared arrays are reused by the next unit */
    }
}

/* launch(std::true_type) -- the wide lane layout -- where it is built
 * (WIDE) and val and x are 16-byte aligned, else launch(std::false_type);
 * then the fix-up */
template <bool WIDE, typename T, typename L>
static cudaError_t launch_wide_or_not(const Args<T> &a, const Launch &l, cudaStream_t s, L launch)
{
    if (WIDE && wide_aligned(a))
        launch(std::integral_constant<bool, WIDE>{});
    else
        launch(std::false_type{});
    return fixup(a, l, s);
}

template <typename T, int ORD, int BS, int G>
static cudaError_t run_walk(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    const unsigned grid = bsrmv_grid(sc.nunits * G, l.threads);
    return launch_wide_or_not<BS >= 16 && G == 32>(a, l, s, [&](auto wide) {
        k_balanced<T, ORD, BS, G, decltype(wide)::value><<<grid, l.threads, 0, s>>>(a, sc);
    });
}

/* Merge-path kernels: per-warp shared memory for the largest unit; fewer
 * warps per thread block when units span many rows (the merge path bounds
 * them by the unit size). */
template <typename T, typename V, typename K>
static cudaError_t run_merge(K kernel, size_t per_warp, const Args<T, V> &a, const Launch &l,
                             cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    int wpb = l.threads / 32;
    while (wpb > 1 && (size_t)wpb * per_warp > 160 * 1024)
        --wpb;
    const size_t shm = (size_t)wpb * per_warp;
    if (shm > 200 * 1024)
        return cudaErrorInvalidConfiguration;
    if (shm > 48 * 1024 &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm) !=
            cudaSuccess)
        return cudaGetLastError();
    kernel<<<bsrmv_grid(sc.nunits, wpb), wpb * 32, shm, s>>>(a, sc);
    return fixup(a, l, s);
}

/* Where the stream takes the wide lane layout, whole lines of a block per
 * step: double bs 8 (H200, power-law: 1.09-1.12x the value-per-lane
 * stream in row-major blocks, 1.01-1.09x in column-major ones) and bs 12
 * (16-byte loads in double, 8-byte in float, 4 lines of 12 per step; H100,
 * orani678, rajat01, sts4098 and ca-GrQc promoted: 1.2-1.65x the
 * value-per-lane stream compiled for bs 12 in float, 1.05-1.25x in
 * double, which was itself 1.2-1.7x the runtime-bs stream).  Float bs 8
 * would put two blocks in a step; at bs 16 the wide walk is ahead
 * (0.94-1.02x). */
template <typename T, int BS> constexpr bool stream_wide()
{
    if constexpr (BS == 8)
        return WideGeom<T, BS, 32, true>::NL <= BS;
    return BS == 12;
}

template <typename T, int ORD, int BS>
static cudaError_t run_stream(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    /* the stream counts a unit's values in int (fewer registers); units of
     * 2^31 values or more (a unit size far above the tuned ones) take the
     * walk, which counts in int64 */
    if ((int64_t)sc.max_blocks * a.bs * a.bs >= INT32_MAX)
        return run_walk<T, ORD, 0, 32>(a, l, s);
    const unsigned grid = bsrmv_grid(sc.nunits * 32, l.threads);
    return launch_wide_or_not<stream_wide<T, BS>()>(a, l, s, [&](auto wide) {
        k_fragstream<T, ORD, BS, decltype(wide)::value><<<grid, l.threads, 0, s>>>(a, sc);
    });
}

template <typename T, int ORD, int BS>
static cudaError_t run_flat(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    const size_t per_warp = (size_t)(sc.max_rows + 1) * sizeof(int64_t) +
                            (size_t)sc.max_rows * a.bs * sizeof(T);
    return run_merge(k_mergeflat<T, ORD, BS>, per_warp, a, l, s);
}

template <typename T, int ORD, int BS, typename V>
static cudaError_t run_seq(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    return run_merge(k_mergeseq<T, ORD, BS, V>,
                     mergeseq_warp_bytes(sc.max_rows, sc.max_blocks, BS, sizeof(V),
                                         mergeseq_pieces(ORD, BS, sizeof(T))),
                     a, l, s);
}

/* rows > 1: the units' col_idx and row_ptr copied into shared memory
 * ahead, rows buffers per warp (k_mergestaged.cu), where both arrays are
 * 16-byte aligned as the copies need; wrapped arrays may not be: then
 * k_mergeseq, with its own thread-block size */
template <typename T, int ORD, int BS>
static cudaError_t run_seq_staged(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    if (((uintptr_t)a.col_idx | (uintptr_t)a.row_ptr) & 15) {
        Launch c = l;
        c.threads = 256;
        return run_seq<T, ORD, BS>(a, c, s);
    }
    const cudaError_t e = run_mergestaged<T, ORD, BS>(a, l, s);
    return e != cudaSuccess ? e : fixup(a, l, s);
}

/* Segmented and fragment units: the row walk, group = G lanes per unit
 * (group 32 at 6 <= bs < 16: the stream).
 * Merge-path units: group 32 the flat stream, group 1 the lane-sequential
 * walk (a warp per unit both; rows > 1 staged). */
template <typename T>
static int launch_real(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.merge && l.group == 32) {
        const int bsk = BSRMV_COMPILED_BS(BSRMV_MERGEFLAT_LIST, a.bs);
#define X(BS, P) BSRMV_LAUNCH_IF(bsk == BS, run_flat, BS)
        BSRMV_MERGEFLAT_LIST(X)
#undef X
        return LAUNCH_NOT_BUILT;
    }
    if (l.merge && l.group == 1 && l.rows > 1) {
        if (!mergestaged_fits(l, a.bs, sizeof(T)))
            return LAUNCH_NOT_BUILT;
#define X(BS, P) BSRMV_LAUNCH_IF(a.bs == BS, run_seq_staged, BS)
        BSRMV_MERGESTAGED_LIST(X)
#undef X
        return LAUNCH_NOT_BUILT;
    }
    if (l.merge && l.group == 1) {
#define X(BS, P) BSRMV_LAUNCH_IF(a.bs == BS, run_seq, BS)
        BSRMV_MERGESEQ_LIST(X)
#undef X
        return LAUNCH_NOT_BUILT;
    }
    if (l.merge)
        return LAUNCH_NOT_BUILT;
    if (l.group == 32 && a.bs >= 6 && a.bs < 16) {
        const int bsk = BSRMV_COMPILED_BS(BSRMV_FRAGSTREAM_LIST, a.bs);
#define X(BS, P) BSRMV_LAUNCH_IF(bsk == BS, run_stream, BS)
        BSRMV_FRAGSTREAM_LIST(X)
#undef X
        return LAUNCH_NOT_BUILT;
    }
    const int bsk = BSRMV_COMPILED_BS(BSRMV_BALANCED_LIST, a.bs);
#define X(BS, G) BSRMV_LAUNCH_IF(bsk == BS && l.group == G, run_walk, BS, G)
    BSRMV_BALANCED_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

/* The schedule must have been built (l.sched).  Float values with double
 * vectors: the lane-sequential merge path alone (rows 1), the float
 * matrices' pick on rows of very uneven length within the L2. */
template <typename T, typename V>
int launch_balanced(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.threads % 32 || l.threads > 256 || l.threads < 32 || a.bs > 32)
        return LAUNCH_NOT_BUILT;
    if (!l.dry && !l.sched)
        return LAUNCH_NOT_BUILT;
    if constexpr (std::is_same<T, V>::value) {
        return launch_real(a, order, l, s, err);
    } else {
        if (l.merge && l.group == 1 && l.rows == 1) {
#define X(BS, P) BSRMV_LAUNCH_IF(a.bs == BS, run_seq, BS)
            BSRMV_MERGESEQ_LIST(X)
#undef X
        }
        return LAUNCH_NOT_BUILT;
    }
}

BSRMV_INSTANTIATE_LAUNCHER_MIXED(launch_balanced)

} // namespace bsrmv_cuda
