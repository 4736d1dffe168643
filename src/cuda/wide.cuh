/* The wide inner loop: a group of G lanes reads one block row's blocks in
 * 16-byte pieces of their contiguous direction (Evtushenko's "warp per
 * non-block row" for row-major blocks, generalised to both orders, to a
 * group per block row and to small blocks).  Used by the plain wide kernel
 * (k_wide.cu) and by the balanced kernels (k_balanced.cu): the row walk's
 * loop at bs 16, the stream's lane layout and reduction at double bs 8.
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
#ifndef BSRMV_CUDA_WIDE_CUH
#define BSRMV_CUDA_WIDE_CUH

#include "common.cuh"

namespace bsrmv_cuda {

/* Lane geometry for (T, BS, G), VEC values per load (1: unaligned arrays),
 * about VALS values of val in flight per lane. */
template <typename T, int BS, int G, bool VECTOR, int VALS = VECTOR ? 64 : 32, bool LINES = false>
struct WideGeom {
    /* LINES: a group load must cover whole lines that tile the block (the
     * stream of k_balanced.cu steps a block at a time), so a narrower
     * vector where the widest one would not (float bs 12: 8-byte loads,
     * 4 lines of 12 per load) */
    static constexpr int widest()
    {
        int v = 16 / (int)sizeof(T);
        while (v > 1 && (BS % v || (LINES && G / pow2ceil(BS / v) <= BS && BS % (G / pow2ceil(BS / v)))))
            v /= 2;
        return v;
    }
    static constexpr int VEC = VECTOR ? widest() : 1;
    static constexpr int W = pow2ceil(BS / VEC);         /* lanes per line (pow2) */
    static constexpr int NL = G / W;                     /* lines per group load  */
    static constexpr int LPL = NL >= BS ? 1 : (BS + NL - 1) / NL; /* lines per lane */
    static constexpr int LP2 = pow2ceil(LPL);            /* padded for the reduction */
    static constexpr int BPS = NL >= BS ? NL / BS : 1;   /* blocks per group load */
    /* steps per batch, at most 8.  VALS: 16 in the balanced walk; 64 in
     * the plain kernel (H200: 32 values cost 37% at column-major bs 32 and
     * 8% at row-major bs 32, one block per batch; other sizes within
     * 1-4%), 32 in its one-value-per-load variant, whose column-major x
     * takes as many registers as val */
    static constexpr int U = VALS / (LPL * VEC) < 1   ? 1
                             : VALS / (LPL * VEC) > 8 ? 8
                                                      : VALS / (LPL * VEC);
    static_assert(W <= G && LP2 <= W && VEC <= NL, "bs up to 32, G >= W");
    /* several blocks per load: the block's lanes must tile the group */
    static_assert(NL <= BS || (NL % BS == 0 && (BS & (BS - 1)) == 0), "BS a power of two");
};

/* The 16-byte loads of val and x need both aligned: where they are not (x
 * comes with each call, val may be wrapped), callers take a
 * value-per-load loop. */
template <typename T, typename V> __host__ __forceinline__ bool wide_aligned(const Args<T, V> &a)
{
    return (((uintptr_t)a.val | (uintptr_t)a.x) & 15) == 0;
}

/* One lane of a wide group: its place in the geometry, the loop over a
 * block row's blocks and the group's reduction.  The geometry is val's
 * (T); x and the sums are of V (double for float values: mixed precision,
 * whose row-major x loads are then two 16-byte loads for a lane's 4
 * columns). */
template <typename T, int ORD, int BS, int G, bool VECTOR, int VALS = VECTOR ? 64 : 32,
          bool LINES = false, typename V = T>
struct WideLane {
    using Geo = WideGeom<T, BS, G, VECTOR, VALS, LINES>;
    static constexpr int VEC = Geo::VEC, W = Geo::W, NL = Geo::NL, LPL = Geo::LPL, U = Geo::U,
                         BPS = Geo::BPS;
    static constexpr int NACC = ORD == ROW ? Geo::LP2 : VEC; /* partial sums per lane */
    int cv, sl, lj, lb;
    bool on; /* W is padded to a power of two */

    __device__ __forceinline__ explicit WideLane(int lane)
        : cv(lane % W), sl(lane / W), lj(sl % BS), lb(sl / BS), on(cv * VEC < BS)
    {
    }

    /* adds the lane's products of blocks [s, e) of one block row to acc
     * (call only where on) */
    __device__ __forceinline__ void sum(const Args<T, V> &a, int64_t s, int64_t e,
                                        V (&acc)[NACC]) const
    {
        constexpr int64_t BS2 = (int64_t)BS * BS;
        /* L2 priority (common.cuh): at bs 2 the matrix streams evict-first
         * (1.05-1.16x, H100); at bs 4 and above that lost up to 3% */
        constexpr L2h HM = BS == 2 ? L2h::first : L2h::normal;
        for (int64_t b = s + lb; b - lb < e; b += U * BPS) {
            int32_t col[U];
            T v[U][LPL][VEC];
            V xv[U][ORD == ROW ? VEC : LPL];
            int n = 0; /* steps of this batch inside the row */
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const bool in = b + u * BPS < e;
                n += in;
                col[u] = in ? ldc<HM>(a.col_idx + b + u * BPS) : 0;
            }
            /* val, then x: predicated loads (ldv_vec) */
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int i = 0; i < LPL; ++i) {
                    const int line = lj + NL * i;
                    ldv_vec<false, HM>(a.val + (b + u * BPS) * BS2 + line * BS + cv * VEC,
                                       v[u][i], u < n && line < BS);
                }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const V *xb = a.x + (int64_t)col[u] * BS;
                if constexpr (ORD == ROW) {
                    ldv_vec<true>(xb + cv * VEC, xv[u], u < n);
                } else {
#pragma unroll
                    for (int i = 0; i < LPL; ++i) {
                        V x1[1];
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
                            madd(acc[i], V(v[u][i][q]), xv[u][q]);
                        else
                            madd(acc[q], V(v[u][i][q]), xv[u][i]);
                    }
        }
    }

    /* The group's row sums (every lane of the warp calls it): this lane's
     * sum, of row out_row() of the block row where stores(). */
    __device__ __forceinline__ V reduce(V (&acc)[NACC]) const
    {
        if constexpr (ORD == ROW) {
            V sum = lanes_to_rows<V, NACC, W>(acc, cv); /* row lj + NL*(cv % LP2) */
#pragma unroll
            for (int k = 1; k < BPS; k *= 2) /* the same row of the other blocks */
                sum += __shfl_xor_sync(BSRMV_FULL_MASK, sum, k * BS * W);
            return sum;
        } else {
            return lanes_to_rows<V, NACC, NL, W>(acc, sl); /* row cv*VEC + sl % VEC */
        }
    }
    __device__ __forceinline__ int out_row() const
    {
        return ORD == ROW ? lj + NL * cv : cv * VEC + sl;
    }
    __device__ __forceinline__ bool stores() const
    {
        return ORD == ROW ? lb == 0 && cv < LPL && out_row() < BS : on && sl < VEC;
    }
    /* out_row() where stores(), else none */
    __device__ __forceinline__ int held_row(int none) const { return stores() ? out_row() : none; }
};

} // namespace bsrmv_cuda

#endif
