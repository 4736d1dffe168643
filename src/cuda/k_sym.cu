/* SpMV of a matrix in symmetric storage (diagonal and upper blocks):
 * y = alpha*(U + D + U^T)*x + beta*y, every stored block read once.
 *
 * A thread block owns a window of consecutive block rows, a warp per row
 * at a time (at a compile-time bs a group of lanes per row, its mapping in
 * k_sym; what follows is the runtime-bs one).  Lane t of a warp covers
 * (block, index l) pairs of its row,
 * t = block*bs + l, stepping by G = 32 - 32 % bs pairs so that its l stays
 * fixed (bs <= 32): it adds row l of the block times x_j to its running
 * sum of row l and, off the diagonal, column l of the block times x_i (the
 * mirrored block's row l) to y_j.  At the row's end the lanes of each l
 * add their sums through a per-warp scratch and one shared atomic per
 * row entry (a shared atomic per block and l, as the mirror needs, made
 * the row part cost as much as the mirror).  With WIN, the mirrored
 * contributions to rows inside the window go to the window's slice of y
 * in shared memory (shared atomics); the rest go to y with global
 * atomics.  The window is then added to y, one global atomic per entry,
 * since rows of the window also receive mirrored blocks from earlier
 * windows.  Without WIN every mirrored contribution is a global atomic
 * (the version the window is measured against).  y must hold beta*y
 * before the launch.  Atomics make the last bits depend on timing.
 *
 * Complex values: the stored block B_ij (j >= i) stands for B_ij^T at
 * (j, i) in complex symmetric storage and for B_ij^H in Hermitian storage,
 * so the mirror's line is conjugated there (CMIR).  conj(A) -- op C of
 * complex symmetric storage, op T of Hermitian storage -- conjugates every
 * stored block as read (CROW), diagonal blocks included, and flips CMIR:
 * conj(B^T) = conj(B)^T, conj(B^H) = B^T.  The other ops are A itself
 * (A^T = A, resp. A^H = A).  The caller picks the pair by the op
 * (SYM_CONJ_ROW, SYM_CONJ_MIRROR in Launch::param). */
#include "common.cuh"

namespace bsrmv_cuda {

/* The compile-time block sizes; others run the runtime-bs kernel (0). */
#define BSRMV_SYM_LIST(X) X(2, 0) X(3, 0) X(4, 0) X(6, 0) X(8, 0) X(0, 0)

/* sum over k < bs of v[k * step] * x[k] (CONJ: conj(v[k * step])): a
 * line (row or column) of a block times a piece of x; bs is a
 * compile-time constant where the caller's BS is */
template <bool CONJ, typename T>
__device__ __forceinline__ T line_dot(const T *v, int step, const T *x, int bs)
{
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < bs; ++k)
        madd(sum, conj_if(ld(v + (int64_t)k * step), CONJ), ld(x + k));
    return sum;
}

/* Whether ldv_vec loads a column of BS values whole: 16-byte loads (8 for
 * two floats) that tile it, each column starting on their alignment. */
template <typename T, int BS> constexpr bool col_loads()
{
    if constexpr (is_cplx<T>::value) /* a complex double is one 16-byte load anyway */
        return sizeof(T) == 8 && BS % 2 == 0;
    else
        return sizeof(T) == 8 ? BS % 2 == 0 : BS == 2 || BS % 4 == 0;
}

/* Values of a warp's scratch in shared memory, for the kernel of block
 * order ord and compile-time bs (0: the runtime-bs kernel): the row sums of
 * the runtime-bs mapping (32), or the mirror's partial products of
 * row-major blocks at a bs that is not a power of two (bs rows of 33:
 * reading a block's column across its lanes then hits distinct banks). */
constexpr int SYM_SCR_ROW = 33;
__host__ __device__ constexpr int sym_scratch(int ord, int bs)
{
    return ord == ROW && bs > 0 && (bs & (bs - 1)) != 0 ? SYM_SCR_ROW * bs : 32;
}

/* Entry l of the mirrored product B^T x_i (CMIR: B^H x_i) in lane l of a
 * block, from the line c the lane loaded (compile-time bs).  Column-major:
 * c is column l, xi all of x_i, one dot.  Row-major: c is row l, xi[0] is
 * x_i[l], and lane l holds the shares c[k]*x_i[l] of every entry k; the
 * block's BS lanes exchange them.  Every lane of the warp must call the
 * row-major one (`on` false: a lane with no block this step, whose shares
 * no lane reads).  A power-of-two BS sits on an aligned group of BS lanes: a
 * reduce-scatter butterfly of BS - 1 shuffles (lanes_to_rows).  At bs 3
 * and 6 xor partners would leave the block; shuffles from the block's
 * other lanes would have to send each lane a different k, a lane-dependent
 * choice among BS registers (or loads rotated by l, which splits the
 * 16-byte loads), so the shares go through the warp's scratch instead: BS
 * stores and BS loads a lane, without bank conflicts (rows of 33). */
template <typename T, int ORD, int BS, bool CMIR, int NX>
__device__ __forceinline__ T mirror_entry(const T (&c)[BS], const T (&xi)[NX], T *scr, int lane, int l,
                                          bool on)
{
    if constexpr (ORD == COL) {
        T sum = T(0);
#pragma unroll
        for (int k = 0; k < BS; ++k)
            madd(sum, conj_if(c[k], CMIR), xi[k]);
        return sum;
    } else {
        T p[BS];
#pragma unroll
        for (int k = 0; k < BS; ++k)
            p[k] = conj_if(c[k], CMIR) * xi[0];
        if constexpr ((BS & (BS - 1)) == 0) {
            return lanes_to_rows<T, BS, BS>(p, l);
        } else {
#pragma unroll
            for (int k = 0; k < BS; ++k)
                scr[k * SYM_SCR_ROW + lane] = p[k];
            __syncwarp();
            T sum = T(0);
            if (on) {
#pragma unroll
                for (int k = 0; k < BS; ++k) /* lane - l + k: the block's lane k */
                    sum += scr[l * SYM_SCR_ROW + lane - l + k];
            }
            __syncwarp(); /* before the next step's stores */
            return sum;
        }
    }
}

/* How the walk at a compile-time bs runs (the runtime-bs kernel and
 * complex values take {1, 1, false}):
 *   u       blocks a lane loads before it multiplies any, so that a warp
 *           has u blocks' loads in flight;
 *   blocks  thread blocks of 256 an SM that the registers must allow
 *           (__launch_bounds__): more warps in flight;
 *   first   val and col_idx read with L2 evict-first, which keeps x and
 *           the y the atomics add to in L2 while the matrix streams by.
 * The walk is latency bound (most of a warp's stalls wait on its loads), so
 * each bs takes what measured fastest without spilling registers, H200,
 * SPD 27-point grids of 280-560 MB (docs/SYMMETRIC.md has the times). */
struct SymTune {
    int u, blocks;
    bool first;
};
/* The tuned cases, real values only: value bytes, order, bs, then the
 * tuning; anything else takes {1, 1, false}. */
struct SymTuneRow {
    int vbytes, ord, bs;
    SymTune t;
};
constexpr SymTuneRow sym_tune_rows[] = {
    {8, COL, 2, {1, 6, false}}, {8, COL, 3, {1, 6, false}}, {8, COL, 4, {2, 1, false}},
    {8, COL, 6, {1, 4, false}}, {8, COL, 8, {2, 1, false}}, {8, ROW, 3, {1, 6, false}},
    {8, ROW, 6, {1, 5, false}}, {4, COL, 2, {1, 6, false}}, {4, COL, 3, {2, 6, true}},
    {4, COL, 4, {2, 1, false}}, {4, COL, 6, {1, 6, true}},  {4, COL, 8, {2, 3, false}},
    {4, ROW, 3, {1, 6, true}},  {4, ROW, 4, {1, 6, false}}, {4, ROW, 6, {1, 6, true}},
    {4, ROW, 8, {1, 6, false}},
};
template <typename T> constexpr SymTune sym_tune(int ord, int bs)
{
    if (!is_cplx<T>::value)
        for (const SymTuneRow &r : sym_tune_rows)
            if (r.vbytes == (int)sizeof(T) && r.ord == ord && r.bs == bs)
                return r.t;
    return {1, 1, false};
}

template <typename T, int ORD, int BS, bool WIN, bool CROW, bool CMIR>
__global__ void __launch_bounds__(256, sym_tune<T>(ORD, BS).blocks) k_sym(const Args<T> a, int64_t win)
{
    extern __shared__ unsigned char sym_smem[];
    T *sy = reinterpret_cast<T *>(sym_smem);
    const int bs = BS ? BS : a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int64_t r0 = (int64_t)blockIdx.x * win;
    const int64_t r1 = r0 + win < a.mb ? r0 + win : a.mb;
    for (int64_t q = threadIdx.x; q < (r1 - r0) * bs; q += blockDim.x)
        sy[q] = T(0);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const int nwarps = blockDim.x >> 5;
    /* bs > 32 (runtime bs only): a lane's l changes from step to step, so
     * its row sums go to the window one by one */
    const bool fixed = bs <= 32;
    const int G = fixed ? 32 - 32 % bs : 32;
    T *scratch = sy + win * bs + (threadIdx.x >> 5) * sym_scratch(ORD, BS);
    if constexpr (BS > 0) {
        /* Compile-time bs: lane l of a block loads its line l once -- column
         * l of a column-major block, row l of a row-major one: BS contiguous
         * values either way -- and serves both products from registers.
         * Column-major: the column times x_j[l] adds to all BS row sums, the
         * column times x_i (loaded once per row) is the mirror's entry l.
         * Row-major: the row times x_j is row l's sum, one running value;
         * the row times x_i[l] is lane l's share of every mirror entry, and
         * the block's BS lanes exchange the shares so that lane l ends with
         * entry l (mirror_entry).  Either way one atomic per lane and block.
         * The runtime-bs mapping below reads the block twice (row l, then
         * column l) and x_j whole in every lane.  Small blocks take groups
         * of fewer lanes, several rows a warp: at bs 2-3 16 lanes, at bs 4 8
         * (column-major, H100, the 27-point grid of docs/SYMMETRIC.md:
         * 0.0813 ms against 0.0878 with 16 lanes, both with 16-byte loads;
         * with value loads 0.0922 with 16 lanes, 0.0957 with 32), so that a
         * 27-point row of 14 stored blocks fills the steps.  A power-of-two
         * BS divides GS: a block's lanes are an aligned group of BS, as the
         * row-major butterfly needs. */
        constexpr int GS = BS == 4 ? 8 : BS <= 4 ? 16 : 32, NG = 32 / GS, GC = GS - GS % BS;
        /* Row-major blocks exchange shares between lanes at every step, so
         * every lane of the warp walks the steps of the longest row of its
         * groups (the others load nothing). */
        constexpr bool XCH = ORD == ROW;
        constexpr int U = sym_tune<T>(ORD, BS).u;
        constexpr L2h H = sym_tune<T>(ORD, BS).first ? L2h::first : L2h::normal;
        /* the line in 16-byte loads where they tile it (ldv_vec) and val is
         * aligned (a wrapped array may not be); row-major: x_j too */
        const bool vec = col_loads<T, BS>() && ((uintptr_t)a.val & 15) == 0;
        const bool xvec = XCH && col_loads<T, BS>() && ((uintptr_t)a.x & 15) == 0;
        const int gl = lane % GS;
        const int l = gl % BS;
        for (int64_t rb = r0 + (int64_t)(threadIdx.x >> 5) * NG; rb < r1; rb += (int64_t)nwarps * NG) {
            const int64_t row = rb + lane / GS;
            const bool live = row < r1 && (!XCH || gl < GC); /* row-major: lanes past GC walk no blocks */
            const int64_t s = live ? a.row_ptr[row] : 0, e = live ? a.row_ptr[row + 1] : 0;
            /* x_i: whole (column-major), entry l (row-major) */
            constexpr int NXI = XCH ? 1 : BS;
            T xi[NXI], racc[NXI];
#pragma unroll
            for (int k = 0; k < NXI; ++k) {
                xi[k] = live ? ld(a.x + row * BS + (XCH ? l : k)) : T(0);
                racc[k] = T(0);
            }
            for (int64_t b = s + gl / BS; XCH ? __any_sync(BSRMV_FULL_MASK, b < e) : gl < GC && b < e;
                 b += U * (GC / BS)) {
                /* the step's U blocks: every load first, then the products */
                bool on[U];
                int64_t j[U];
                constexpr int NXJ = XCH ? BS : 1; /* x_j: entry l (column-major), whole (row-major) */
                T c[U][BS], xj[U][NXJ];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int64_t bu = b + u * (GC / BS);
                    on[u] = bu < e;
                    j[u] = row;
#pragma unroll
                    for (int k = 0; k < BS; ++k)
                        c[u][k] = T(0);
#pragma unroll
                    for (int k = 0; k < NXJ; ++k)
                        xj[u][k] = T(0);
                    if (on[u]) {
                        j[u] = ldc<H>(a.col_idx + bu);
                        const T *v = a.val + bu * (BS * BS) + l * BS;
                        if (XCH && xvec) {
                            ldv_vec<true>(a.x + j[u] * BS, xj[u]);
                        } else {
#pragma unroll
                            for (int k = 0; k < NXJ; ++k)
                                xj[u][k] = ld(a.x + j[u] * BS + (XCH ? k : l));
                        }
                        if (vec) {
                            ldv_vec<false, H>(v, c[u]);
                        } else {
#pragma unroll
                            for (int k = 0; k < BS; ++k)
                                c[u][k] = ld<H>(v + k);
                        }
                    }
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (on[u]) {
#pragma unroll
                        for (int k = 0; k < BS; ++k) /* row-major: row l's sum; column-major: row k's */
                            madd(racc[XCH ? 0 : k], conj_if(c[u][k], CROW), xj[u][XCH ? k : 0]);
                    }
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (!XCH && (!on[u] || j[u] == row))
                        continue;
                    /* every lane, on or not: the row-major exchange is the warp's */
                    const T m = mirror_entry<T, ORD, BS, CMIR>(c[u], xi, scratch, lane, l, on[u]);
                    if (XCH && (!on[u] || j[u] == row)) /* the diagonal block: its row product only */
                        continue;
                    if (WIN && j[u] < r1)
                        atomicAdd(sy + (j[u] - r0) * BS + l, a.alpha * m);
                    else
                        atomicAdd(a.y + j[u] * BS + l, a.alpha * m);
                }
            }
            T out = T(0);
            if constexpr (XCH) {
                /* one sum per lane: row gl % BS, added over the group's block slots */
                out = group_reduce<T, GS>(racc[0], gl, BS, GC / BS);
            } else {
#pragma unroll
                for (int k = 0; k < BS; ++k) {
                    T sum = racc[k];
#pragma unroll
                    for (int m = GS / 2; m >= 1; m >>= 1) /* within the row's lanes */
                        sum += __shfl_xor_sync(BSRMV_FULL_MASK, sum, m);
                    if (gl == k)
                        out = sum;
                }
            }
            if (live && gl < BS)
                atomicAdd(sy + (row - r0) * BS + gl, a.alpha * out);
        }
    } else
    for (int64_t row = r0 + (threadIdx.x >> 5); row < r1; row += nwarps) {
        const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
        const T *xi = a.x + row * bs;
        T racc = T(0);
        for (int64_t t = s * bs + lane; lane < G && t < e * bs; t += G) {
            const int64_t b = t / bs;
            const int l = (int)(t - b * bs);
            const int64_t j = ldc(a.col_idx + b);
            const T *v = a.val + b * bs2;
            const T *xj = a.x + j * bs;
            /* row l of the block (its values bs apart in a column-major
             * block) times x_j; column l (the mirror's row l) times x_i */
            const T rsum = line_dot<CROW>(v + (ORD == COL ? l : (int64_t)l * bs), ORD == COL ? bs : 1, xj, bs);
            if (fixed)
                racc += rsum;
            else
                atomicAdd(sy + (row - r0) * bs + l, a.alpha * rsum);
            if (j == row)
                continue;
            const T tsum = line_dot<CMIR>(v + (ORD == COL ? (int64_t)l * bs : l), ORD == COL ? 1 : bs, xi, bs);
            if (WIN && j < r1)
                atomicAdd(sy + (j - r0) * bs + l, a.alpha * tsum);
            else
                atomicAdd(a.y + j * bs + l, a.alpha * tsum);
        }
        if (fixed) { /* lane l sums lanes l, l + bs, ... (G / bs of them) */
            scratch[lane] = racc;
            __syncwarp();
            if (lane < bs) {
                T sum = T(0);
                for (int k = lane; k < G; k += bs)
                    sum += scratch[k];
                atomicAdd(sy + (row - r0) * bs + lane, a.alpha * sum);
            }
            __syncwarp();
        }
    }
    __syncthreads();
    for (int64_t q = threadIdx.x; q < (r1 - r0) * bs; q += blockDim.x)
        atomicAdd(a.y + r0 * bs + q, sy[q]);
}

/* Shared memory of a window: rows per warp x warps x bs values, and a
 * warp's scratch (sym_scratch) for the kernel of the block order that the
 * matrix's bs runs. */
template <typename T>
static size_t window_bytes(int bs, int order, const Launch &l)
{
    const int scr = sym_scratch(order, BSRMV_COMPILED_BS(BSRMV_SYM_LIST, bs));
    return ((size_t)l.rows * bs + scr) * (size_t)(l.threads / 32) * sizeof(T);
}

template <typename T, int ORD, int BS, bool WIN, bool CROW, bool CMIR>
static cudaError_t run_sym(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const int64_t win = (int64_t)l.rows * (l.threads / 32);
    k_sym<T, ORD, BS, WIN, CROW, CMIR><<<bsrmv_grid(a.mb, win), l.threads, window_bytes<T>(a.bs, ORD, l), s>>>(a, win);
    return cudaGetLastError();
}

/* Windows beyond the default 48 KiB of shared memory, and grids beyond
 * what a 1-D grid holds, are not built. */
template <typename T>
static bool sym_launchable(const Args<T> &a, int order, const Launch &l)
{
    if (l.threads % 32 || l.threads < 32 || l.threads > 256 || l.rows < 1 || l.rows > 1024)
        return false;
    const int64_t win = (int64_t)l.rows * (l.threads / 32);
    return window_bytes<T>(a.bs, order, l) <= 48 * 1024 && (a.mb + win - 1) / win <= 2147483647;
}

template <bool WIN, bool CROW, bool CMIR, typename T>
static int launch_sym_bs(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    const int bs = BSRMV_COMPILED_BS(BSRMV_SYM_LIST, a.bs);
#define X(BS, P) BSRMV_LAUNCH_IF(bs == BS, run_sym, BS, WIN, CROW, CMIR)
    BSRMV_SYM_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

/* l.param: the SYM_CONJ_* bits of the op; real values take none. */
template <bool WIN, typename T>
static int launch_sym(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (!sym_launchable(a, order, l))
        return LAUNCH_NOT_BUILT;
    if constexpr (is_cplx<T>::value) {
        switch (l.param) {
        case SYM_CONJ_ROW: return launch_sym_bs<WIN, true, false>(a, order, l, s, err);
        case SYM_CONJ_MIRROR: return launch_sym_bs<WIN, false, true>(a, order, l, s, err);
        case SYM_CONJ_ROW | SYM_CONJ_MIRROR: return launch_sym_bs<WIN, true, true>(a, order, l, s, err);
        default: break;
        }
    }
    return l.param == 0 ? launch_sym_bs<WIN, false, false>(a, order, l, s, err) : LAUNCH_NOT_BUILT;
}

template <typename T>
int launch_sym_atomic(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    return launch_sym<false>(a, order, l, s, err);
}

template <typename T>
int launch_sym_window(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    return launch_sym<true>(a, order, l, s, err);
}

BSRMV_INSTANTIATE_LAUNCHER(launch_sym_atomic)
BSRMV_INSTANTIATE_LAUNCHER(launch_sym_window)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_sym_atomic)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_sym_window)

} // namespace bsrmv_cuda
