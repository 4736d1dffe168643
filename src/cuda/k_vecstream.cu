/* Vector-stream kernel: a slot of lanes per block row (param `rows`: block
 * rows per warp) reads the row's values -- one contiguous run of n*bs*bs in
 * val, whatever the block order -- in 16-byte pieces (4 floats or 2
 * doubles), the slot's working lanes consecutive pieces, also where a
 * block's rows or columns are not a multiple of 16 bytes (the wide
 * kernel's condition).
 *
 * Why: on the H100 the small-bs float kernels that read a value per lane
 * were bound by instruction issue, not by memory (ncu: by-column
 * at float bs 6, 3.1 instructions per cycle per SM, ~50 warp instructions
 * per step of one value per lane, 57-64% of the read bandwidth).  Here a
 * lane's step is one 16-byte load, one or two col_idx loads, its x values
 * and P FMAs.  Several rows per warp: the 27-block rows of a grid are
 * a few steps for a whole warp, too little work per reduction.
 *
 * Geometry: the pieces are aligned to val (P values each), and the pattern
 * of (block, row, column) of a piece's values repeats every UNIT =
 * lcm(bs*bs, P) values, UP = UNIT / P pieces.  Lane l takes phase q = l % UP
 * of copy l / UP of the unit, so its P values always sit at the same rows
 * and columns of the same blocks of a unit: a lane keeps P partial sums with
 * fixed rows and needs no index arithmetic per value.  A slot of W = 32/rows
 * lanes covers W / UP units a step (at most C = 32 / UP, so rows <= C);
 * the row's first and last units reach into the neighbouring rows, whose
 * values are masked.  The end: the
 * copies are summed by shuffles, the unit's UNIT partial sums go through
 * shared memory to the bs row sums.  Sizes with UP > 32 (bs 7; float bs 12)
 * are not built. */
#include "common.cuh"

namespace bsrmv_cuda {

__host__ __device__ constexpr int vs_gcd(int a, int b) { return b == 0 ? a : vs_gcd(b, a % b); }

template <typename T, int BS> struct VsGeom {
    static constexpr int P = 16 / (int)sizeof(T);              /* values per piece */
    static constexpr int BS2 = BS * BS;
    static constexpr int UNIT = BS2 / vs_gcd(BS2, P) * P;      /* lcm(bs*bs, P)    */
    static constexpr int UP = UNIT / P;                        /* pieces per unit  */
    static constexpr bool BUILT = UP <= 32;
    static constexpr int C = BUILT ? 32 / UP : 1;              /* units per step   */
    static constexpr int BPU = UNIT / BS2;                     /* blocks per unit  */
    /* steps per batch: 64 bytes of val in flight per lane (H100: 2 steps 0.89-1.01x at the best rows per warp, 8 steps
     * 0.84-1.02x; col_idx software-pipelined a batch ahead, or staged in
     * shared memory, lost up to 47% and 42%) */
    static constexpr int U = 4;
};

/* Column-major pieces meet at most two (block, column) pairs -- a column's
 * tail and the next one's head -- so a step makes two x loads: true where
 * P <= bs + 1 or a piece is a whole block (float bs 2). */
template <typename T, int BS> constexpr bool vs_two_columns()
{
    using Geo = VsGeom<T, BS>;
    for (int e = 0; e < Geo::UNIT; e += Geo::P) {
        int pairs = 1;
        for (int i = 1; i < Geo::P; ++i)
            pairs += (e + i) / BS != (e + i - 1) / BS; /* value index / bs: (block, column) */
        if (pairs > 2)
            return false;
    }
    return true;
}

/* A lane's fixed part of the unit: value i of its piece lies in block
 * db[i] of the unit, at row r[i] and column c[i] of that block. */
template <typename T, int ORD, int BS> struct VsLane {
    using Geo = VsGeom<T, BS>;
    static constexpr int P = Geo::P;
    int q, blk0; /* phase; first block of the piece, relative to a step */
    bool two;    /* the piece reaches into the next block */
    int db[P], r[P], c[P];

    __device__ VsLane(int lane)
    {
        q = lane % Geo::UP;
#pragma unroll
        for (int i = 0; i < P; ++i) {
            const int e = q * P + i, w = e % Geo::BS2;
            db[i] = e / Geo::BS2;
            r[i] = ORD == COL ? w % BS : w / BS;
            c[i] = ORD == COL ? w / BS : w % BS;
        }
        blk0 = lane / Geo::UP * Geo::BPU + db[0];
        two = db[P - 1] != db[0];
    }
};

/* P values at p: one 16-byte load, or P single loads where val is not
 * 16-byte aligned (a wrapped sub-array) or the piece runs past the end of
 * val; values of blocks outside the row are zeroed by the caller. */
template <typename T, int P, bool VECTOR>
__device__ __forceinline__ void vs_piece(const T *p, T (&v)[P], bool any, int64_t left)
{
    if (VECTOR && left >= P) {
        ldv_vec(p, v, any);
    } else {
#pragma unroll
        for (int i = 0; i < P; ++i) {
            T one[1];
            ldv_vec(p + i, one, any && i < left);
            v[i] = one[0];
        }
    }
}

/* Sum of the lane's values of block row [s, e) into acc[P].  MASK: the batch
 * reaches outside the row (its first and last units).  The pieces are of
 * val's type T (4 floats for the mixed pair); x and the sums are of V. */
template <typename T, int ORD, int BS, bool VECTOR, bool MASK, typename V>
__device__ __forceinline__ void vs_batch(const Args<T, V> &a, const VsLane<T, ORD, BS> &ln, int copies,
                                         int64_t kb, int64_t s, int64_t e, int64_t nval,
                                         V (&acc)[VsGeom<T, BS>::P])
{
    using Geo = VsGeom<T, BS>;
    constexpr int P = Geo::P, U = Geo::U;
    int64_t blk[U]; /* the piece's first block */
    int32_t ca[U], cb[U];
    bool va[U], vb[U];
    T v[U][P];
#pragma unroll
    for (int u = 0; u < U; ++u) { /* col_idx first: x waits on it */
        const int64_t b = blk[u] = kb + (int64_t)u * copies * Geo::BPU + ln.blk0;
        va[u] = !MASK || (b >= s && b < e);
        vb[u] = ln.two && (!MASK || (b + 1 >= s && b + 1 < e));
        ca[u] = va[u] ? ldc(a.col_idx + b) : 0;
        cb[u] = vb[u] ? ldc(a.col_idx + b + 1) : ca[u];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int64_t g = (blk[u] - ln.db[0]) * Geo::BS2 + ln.q * P; /* the unit's start + phase */
        vs_piece<T, P, VECTOR>(a.val + g, v[u], va[u] || vb[u], MASK ? nval - g : P);
    }
    V xv[U][P];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        if constexpr (ORD == COL) {
            static_assert(vs_two_columns<T, BS>(), "a piece meets at most two columns");
            const bool second = ln.two || ln.c[P - 1] != ln.c[0];
            const V x0 = va[u] ? ld(a.x + (int64_t)ca[u] * BS + ln.c[0]) : V(0);
            const V x1 = !second              ? x0
                         : (ln.two ? vb[u] : va[u]) ? ld(a.x + (int64_t)(ln.two ? cb[u] : ca[u]) * BS + ln.c[P - 1])
                                                    : V(0);
#pragma unroll
            for (int i = 0; i < P; ++i)
                xv[u][i] = ln.db[i] == ln.db[0] && ln.c[i] == ln.c[0] ? x0 : x1;
        } else {
#pragma unroll
            for (int i = 0; i < P; ++i) {
                const bool first = ln.db[i] == ln.db[0];
                xv[u][i] = (first ? va[u] : vb[u]) ? ld(a.x + (int64_t)(first ? ca[u] : cb[u]) * BS + ln.c[i])
                                                   : V(0);
            }
        }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int i = 0; i < P; ++i) {
            /* a masked value of a neighbouring row may be Inf or NaN */
            const V vi = !MASK || (ln.db[i] == ln.db[0] ? va[u] : vb[u]) ? V(v[u][i]) : V(0);
            madd(acc[i], vi, xv[u][i]);
        }
}

template <typename T, int ORD, int BS, bool VECTOR, typename V>
__global__ void __launch_bounds__(256) k_vecstream(const Args<T, V> a, int rows)
{
    using Geo = VsGeom<T, BS>;
    constexpr int P = Geo::P;
    __shared__ V red[256 / 32][32 * P];
    /* `rows` block rows per warp, one per slot of W lanes, G of them working */
    const int lane = threadIdx.x & 31, W = 32 / rows, slot = lane / W, sl = lane % W;
    const int G = W / Geo::UP * Geo::UP;
    const VsLane<T, ORD, BS> ln(sl);
    const bool on = slot < rows && sl < G;
    V *unit = red[threadIdx.x >> 5] + slot * Geo::UNIT;
    const int64_t nval = a.row_ptr[a.mb] * Geo::BS2;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;

    for (int64_t w = warp; w * rows < a.mb; w += nwarps) { /* uniform per warp */
        const int64_t row = w * rows + slot;
        const bool valid = slot < rows && row < a.mb;
        int64_t s = 0, e = 0;
        if (valid) {
            s = a.row_ptr[row];
            e = a.row_ptr[row + 1];
        }
        const bool mine = valid && !long_row(a, s, e);
        V acc[P];
#pragma unroll
        for (int i = 0; i < P; ++i)
            acc[i] = V(0);
        if (mine && on) {
            const int64_t batch = (int64_t)Geo::U * (G / Geo::UP) * Geo::BPU; /* blocks */
            for (int64_t kb = s / Geo::BPU * Geo::BPU; kb < e; kb += batch)
                if (kb >= s && kb + batch <= e)
                    vs_batch<T, ORD, BS, VECTOR, false>(a, ln, G / Geo::UP, kb, s, e, nval, acc);
                else
                    vs_batch<T, ORD, BS, VECTOR, true>(a, ln, G / Geo::UP, kb, s, e, nval, acc);
        }
        /* the slot's copies of the unit, then its values to the rows */
        for (int st = pow2ceil(G / Geo::UP) / 2; st >= 1; st >>= 1)
#pragma unroll
            for (int i = 0; i < P; ++i) {
                const V o = __shfl_down_sync(BSRMV_FULL_MASK, acc[i], st * Geo::UP);
                if (sl + st * Geo::UP < G)
                    acc[i] += o;
            }
        if (valid && sl < Geo::UP)
#pragma unroll
            for (int i = 0; i < P; ++i)
                unit[sl * P + i] = acc[i];
        __syncwarp();
        for (int t = sl; mine && t < BS; t += W) { /* W < bs at 16 or 32 rows */
            V sum = V(0);
#pragma unroll
            for (int b = 0; b < Geo::BPU; ++b)
#pragma unroll
                for (int j = 0; j < BS; ++j)
                    sum += unit[b * Geo::BS2 + (ORD == COL ? j * BS + t : t * BS + j)];
            store_y(a, row * BS + t, sum);
        }
        __syncwarp();
    }
}

template <typename T, int ORD, int BS, typename V>
static cudaError_t run(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    const unsigned grid = bsrmv_grid((a.mb + l.rows - 1) / l.rows * 32, l.threads);
    if ((((uintptr_t)a.val) & 15) == 0)
        k_vecstream<T, ORD, BS, true, V><<<grid, l.threads, 0, s>>>(a, l.rows);
    else
        k_vecstream<T, ORD, BS, false, V><<<grid, l.threads, 0, s>>>(a, l.rows);
    return cudaGetLastError();
}

template <typename T, typename V>
int launch_vecstream(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.rows < 1 || l.threads % 32 || l.threads < 32 || l.threads > 256)
        return LAUNCH_NOT_BUILT;
#define X(BS, P_)                                                              \
    if constexpr (VsGeom<T, BS>::BUILT) {                                      \
        constexpr int units = VsGeom<T, BS>::C;                                \
        BSRMV_LAUNCH_IF(a.bs == BS && l.rows <= units, run, BS)                \
    }
    if constexpr (std::is_same<T, cplx<float>>::value) {
        BSRMV_VECSTREAM_C_LIST(X)
    } else if constexpr (!is_cplx<T>::value) {
        BSRMV_VECSTREAM_LIST(X)
    }
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER_MIXED(launch_vecstream)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_vecstream)

} // namespace bsrmv_cuda
