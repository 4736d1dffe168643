/* The lane-sequential merge path's steps (CUB's merge-based CSR SpMV at
 * warp scale, a block as the item), shared by k_mergeseq (k_balanced.cu)
 * and k_mergestaged (k_mergestaged.cu), which finds a unit's col_idx and
 * row_ptr copied into shared memory ahead. */
#ifndef BSRMV_CUDA_MERGE_CUH
#define BSRMV_CUDA_MERGE_CUH

#include "units.cuh"

namespace bsrmv_cuda {

/* k_mergeseq reads blocks a line (column or row) per lane (unit_products)
 * and stages the unit's col_idx in shared memory for it: column-major
 * blocks of bs 2 and 4 (a power of two that divides the warp, for the
 * lanes' sum), and row-major ones whose rows are 16 bytes or more in whole
 * 8- or 16-byte loads (float bs 2, 8-byte rows: 0.78-0.98x the by-block
 * gather, H200) */
__host__ __device__ __forceinline__ constexpr bool mergeseq_pieces(int order, int bs, int ts)
{
    return order == COL ? bs == 2 || bs == 4 : bs <= 8 && bs % 2 == 0 && bs * ts >= 16;
}

/* A merge-path unit's block products A_k x_col(k) into prod[] (prod[t] is
 * row t % bs of block t / bs), U steps of loads in flight per lane.  val is
 * the unit's first block.
 *  - pieces (mergeseq_pieces), val (row-major: and x) 16-byte aligned:
 *    lane = line of a block (a column of a column-major block, a row of a
 *    row-major one), read by vector loads (ldv_vec), so that every load of
 *    the warp covers whole 32-byte sectors (ncu, bs 2: a lane per row of a
 *    column-major block reads half a sector per load, each sector twice,
 *    and the warp's L2 requests for val double; a row-major block read so
 *    strides bs values between lanes).  Column-major: one x value per
 *    lane, lanes_to_rows adds the columns; row-major: the lane's row of
 *    the block against bs values of x, no reduction (H200, power-law,
 *    against the by-block gather at the default units: double bs 4
 *    1.27x, float bs 4 1.55x, double bs 2 1.06x).  Half a line per lane
 *    (16-byte loads, twice the steps) ran at 0.65-1.0x a whole one at
 *    double bs 4 in both orders, the lower the longer the unit.  Row-major
 *    bs 6 and 8 read so (a row per lane, t % bs, as 32 is no multiple of
 *    6): 1.11-1.41x the by-block gather at double, 1.10-2.41x at float
 *    (H200, the merge path's best configuration on ten real matrices
 *    promoted, solver-like);
 *  - otherwise lane = row of a block (by-block): consecutive lanes read
 *    consecutive values of a column-major block, one value per load.
 * A row-major block's values are kept in L1: its lanes' loads are not
 * whole sectors (a row per lane, or one value of a row per lane by-block),
 * and the next load reads the same sectors again.  Against loads past L1,
 * same matrices: bs 6 1.04-1.42x, bs 8 0.98-1.18x, double bs 4
 * 1.03-1.14x, bs 2 and float bs 4 0.97-1.03x; by-block at bs 3 1.01-1.20x,
 * bs 5 1.14-1.65x, bs 7 1.28-2.25x (six of the matrices).
 * xline(k) points to block k's bs values of x. */
template <typename T, int ORD, int BS, L2h HM = L2h::normal, typename V, typename XL>
__device__ __forceinline__ void unit_products(const Args<T, V> &a, int nb, const T *val, XL xline,
                                              V *prod, int lane)
{
    constexpr int BS2 = BS * BS, U = 4;
    const int nt = nb * BS;
    if constexpr (mergeseq_pieces(ORD, BS, sizeof(T))) {
        if ((((uintptr_t)a.val | (ORD == COL ? 0 : (uintptr_t)a.x)) & 15) == 0) {
            const int cl = lane % BS; /* column-major: the lane's line */
            for (int t0 = 0; t0 < nt; t0 += U * 32) {
                V p[U][ORD == COL ? BS : 1];
#pragma unroll
                for (int q = 0; q < U; ++q) {
                    const int t = t0 + q * 32 + lane;
                    const int c = ORD == COL ? cl : t % BS; /* the lane's line */
#pragma unroll
                    for (int r = 0; r < (ORD == COL ? BS : 1); ++r)
                        p[q][r] = V(0);
                    if (t < nt) {
                        const int k = t / BS;
                        T v[BS];
                        ldv_vec<ORD == ROW, HM>(val + (int64_t)k * BS2 + c * BS, v);
                        if constexpr (ORD == COL) {
                            const V xc = ld(xline(k) + c);
#pragma unroll
                            for (int r = 0; r < BS; ++r)
                                p[q][r] = V(v[r]) * xc;
                        } else {
                            V xv[BS];
                            ldv_vec<true>(xline(k), xv);
#pragma unroll
                            for (int i = 0; i < BS; ++i)
                                p[q][0] += V(v[i]) * xv[i];
                        }
                    }
                }
#pragma unroll
                for (int q = 0; q < U; ++q) {
                    const int t = t0 + q * 32 + lane;
                    V sum;
                    if constexpr (ORD == COL)
                        sum = lanes_to_rows<V, BS, BS>(p[q], cl);
                    else
                        sum = p[q][0];
                    if (t < nt)
                        prod[t] = sum;
                }
            }
            return;
        }
    }
    constexpr int G = 32 - 32 % BS;
    const int br = lane % BS;
    for (int t0 = 0; t0 < nt; t0 += U * G) {
        V p[U];
#pragma unroll
        for (int q = 0; q < U; ++q) {
            const int t = t0 + q * G + lane;
            p[q] = V(0);
            if (lane < G && t < nt) {
                const int k = t / BS;
                const T *v = val + (int64_t)k * BS2;
                const V *xp = xline(k);
#pragma unroll
                for (int c = 0; c < BS; ++c)
                    p[q] += V(ldv<ORD == ROW, HM>(v + (ORD == COL ? c * BS + br : br * BS + c))) * ld(xp + c);
            }
        }
#pragma unroll
        for (int q = 0; q < U; ++q) {
            const int t = t0 + q * G + lane;
            if (lane < G && t < nt)
                prod[t] = p[q];
        }
    }
}

/* Steps 2-3 of k_mergeseq for unit rows r0.. (nr rows touched, na of them
 * ending here, nb blocks; rp = row_ptr offsets, prod = block products). */
template <typename T, int BS, typename V>
__device__ __forceinline__ void unit_merge(const Args<T, V> &a, V *pieces, int64_t r0, int64_t slot,
                                           int nr, int na, int nb, const int *rp, const V *prod,
                                           int lane)
{
    /* row i of the unit is done: a head (row 0 begun in an earlier unit)
     * goes to the unit's first slot, any other row to y */
    const bool head = na > 0 && rp[0] < 0;
    auto finish = [&](int i, const V (&v)[BS]) {
#pragma unroll
        for (int r = 0; r < BS; ++r) {
            if (i == 0 && head)
                pieces[slot * BS + r] = v[r];
            else
                store_y(a, (r0 + i) * BS + r, v[r]);
        }
    };
    /* the lane's stretch of the unit's path: row end i comes before
     * block k when row i's blocks all lie before k */
    const int len = na + nb, per = (len + 31) / 32;
    auto search = [&](int d, int &i, int &k) {
        int lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
        while (lo < hi) {
            const int mid = (lo + hi) >> 1;
            if (rp[mid + 1] <= d - mid - 1)
                lo = mid + 1;
            else
                hi = mid;
        }
        i = lo;
        k = d - lo;
    };
    int i, k;
    search(min(len, lane * per), i, k);
    /* the stretch ends where the next lane's begins */
    int ie = __shfl_down_sync(BSRMV_FULL_MASK, i, 1), ke = __shfl_down_sync(BSRMV_FULL_MASK, k, 1);
    if (lane == 31) {
        ie = na;
        ke = nb;
    }
    const int first = i;
    int nxt = i < ie ? rp[i + 1] : 0; /* the end of row i */
    bool headed = false; /* finished its first row (which may be cut) */
    V acc[BS], own[BS];
#pragma unroll
    for (int r = 0; r < BS; ++r)
        acc[r] = own[r] = V(0);
    while (i < ie || k < ke) {
        if (i < ie && (k >= ke || nxt <= k)) {
            if (i == first) {
#pragma unroll
                for (int r = 0; r < BS; ++r)
                    own[r] = acc[r];
                headed = true;
            } else { /* began in this stretch, so not the unit's head */
#pragma unroll
                for (int r = 0; r < BS; ++r)
                    store_y(a, (r0 + i) * BS + r, acc[r]);
            }
#pragma unroll
            for (int r = 0; r < BS; ++r)
                acc[r] = V(0);
            if (++i < ie)
                nxt = rp[i + 1];
        } else {
#pragma unroll
            for (int r = 0; r < BS; ++r)
                acc[r] += prod[k * BS + r];
            ++k;
        }
    }
    /* acc is the lane's tail, of row ie (unfinished here); the lanes'
     * tails of one row are neighbours (ie never decreases), so a
     * segmented inclusive scan over the lanes gives each lane the sum of
     * its row's tails up to it, in a fixed order */
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const bool same = __shfl_up_sync(BSRMV_FULL_MASK, ie, d) == ie && lane >= d;
#pragma unroll
        for (int r = 0; r < BS; ++r) {
            const V o = __shfl_up_sync(BSRMV_FULL_MASK, acc[r], d);
            if (same)
                acc[r] += o;
        }
    }
    /* a headed lane's first row is the previous lane's tail row */
    V prev[BS];
#pragma unroll
    for (int r = 0; r < BS; ++r)
        prev[r] = __shfl_up_sync(BSRMV_FULL_MASK, acc[r], 1);
    if (headed) {
        if (lane > 0)
#pragma unroll
            for (int r = 0; r < BS; ++r)
                own[r] += prev[r];
        finish(first, own);
    }
    /* the carry (row na, unfinished) has no finisher here: lane 31 holds
     * it if some of its blocks lie in this unit */
    if (lane == 31 && carries(na, nr, rp[nr - 1], 0, nb)) { /* unit-relative */
#pragma unroll
        for (int r = 0; r < BS; ++r)
            pieces[(slot + head) * BS + r] = acc[r];
    }
}

/* k_mergestaged.cu: the lane-sequential merge path with each unit's
 * col_idx and row_ptr copied into shared memory ahead (sm_90).  l.rows is
 * the number of unit buffers per warp (2 to 4). */
template <typename T, int ORD, int BS>
cudaError_t run_mergestaged(const Args<T> &a, const Launch &l, cudaStream_t s);
/* Whether configuration l of the staged merge path exists for block size
 * bs and value size ts on l's device, its units bounded by l.param items. */
bool mergestaged_fits(const Launch &l, int bs, size_t ts);

} // namespace bsrmv_cuda

#endif
