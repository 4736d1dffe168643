/* SpMM kernels: Y = alpha*op(A)*X + beta*Y for a chunk of vectors, as
 * templates; k_spmm.cu instantiates them for the real type pairs and
 * k_spmm_cplx.cu for the complex types, so that the two compile side by
 * side.  Not installed.
 *
 * OP_N, bs 1-8 (k_spmm_staged): a warp per block row.  The row's blocks
 * are consecutive in val, so the warp copies a run of S = 32/P of them to
 * shared memory (A read from DRAM once per chunk, in whole lines), then
 * lane (slot, p) multiplies block `slot` of the run by piece p of the rows
 * of X it needs (NV vectors, one 16-byte load per block column serving all
 * bs rows, held as bs*NV accumulators).  The slots are summed with
 * shuffles; slot 0 writes Y.  A lane per scalar row instead (the
 * runtime-bs kernel's layout) read each block's A with bs times the load
 * instructions and X pieces of a few bytes per warp load: 1.04-3.4x slower
 * at k 4-16 on 27-point grids, bs 3, 6 and 8 (H100).
 *   Where k_spmm.cuh says so (staged_async) the run is
 * copied asynchronously (cp.async), a lane loads its block's column index
 * a run ahead and its X before it waits for the values, and where two runs
 * fit the next run's copy is issued before this one is computed: a warp's
 * loads overlap instead of following one another (values, then the
 * column, then X).  On the 400 MB bs-3 grid at k 8 the SpMM went from
 * 0.374 to 0.330 ms (H100).  16-byte copies that bypass L1 for the
 * aligned part of a run ran 0.62-0.93x as fast as synchronous copies at
 * bs 4 and 8 (H200).
 *
 * OP_N, other bs (k_spmm_n): a group of G lanes per block row.  Lane
 * (cslot, jp, r) owns scalar row r of the block row, vectors jp*NV ..
 * jp*NV+NV-1 of the chunk (NV accumulators in registers) and every ncol-th
 * block of the row (ncol = G / (P*R) block columns side by side, R = the
 * rows of a block per pass).  A(r, c) is loaded by the P lanes of row r at
 * once (one broadcast) and multiplied by NV values of row c of the block's
 * rows of X, which the P lanes read as one contiguous piece of kc values.
 * The group sums its column slots with shuffles; lanes of slot 0 write
 * their row and vectors of Y.  A block taller than G / P lanes goes in
 * passes of G / P rows.
 *
 * Both read X through its two strides (MmArgs): a row-major X in place, a
 * column-major one in place or from a row-major copy of the chunk
 * (spmm.cu, mm_copy_x).
 *
 * Mixed precision (MmArgs<float, double>): A is read as float (the
 * staged kernel's runs stay float in shared memory, half the bytes) and
 * each value is widened to double as it is used; X, Y and the sums are
 * double.  With T == V the widening is no instruction, so the (double,
 * double) and (float, float) kernels are the same code.
 *
 * Complex values (cplx<R>, complex.cuh) run the same code: madd is the
 * complex multiply-add, the shuffles and atomics move both parts.
 *
 * OP_T: a warp per block row scatters alpha * A(:, c)^T X(row, j) into
 * Y(col*bs + c, j) with atomic adds (the SpMV transpose kernel's scheme),
 * all vectors of the call in one pass; OP_C conjugates each value as it
 * is loaded (MmArgs::conj, which the OP_N kernels honour too).
 *
 * Symmetric storage (diagonal and upper blocks, spmm.cu) is two passes
 * over the stored blocks: the OP_N kernels for (D + U) X, then the
 * transpose kernel without the diagonal blocks for U^T X (U^H X:
 * Hermitian storage).  The matrix is read twice, its half each time: the
 * bytes of the full storage's SpMM without its memory. */
#ifndef BSRMV_CUDA_K_SPMM_IMPL_CUH
#define BSRMV_CUDA_K_SPMM_IMPL_CUH

#include "k_spmm.cuh"

namespace bsrmv_cuda {

/* xv = the NV values of a row of X's chunk at p (vectors j0..j0+NV-1, xj
 * apart), zero past kc; whole: one vector load (xj == 1, aligned, all NV
 * inside the chunk). */
template <typename T, typename V, int NV>
__device__ __forceinline__ void x_piece(const MmArgs<T, V> &a, const V *p, int j0, bool whole,
                                        V (&xv)[NV])
{
    if (whole) {
        ldv_vec<true>(p, xv);
    } else {
#pragma unroll
        for (int v = 0; v < NV; ++v)
            xv[v] = j0 + v < a.kc ? ld(p + v * a.xj) : V(0);
    }
}

/* Blocks b0, b0 + step, ... below e of a lane's block row: acc[v] +=
 * sum_c A(r, c) X(col*bs + c, j0 + v), a block at a time.  val and
 * col_idx are read once, with the L2 priority evict-first: X, k times the
 * SpMV's x and gathered at every block, is what must stay in L2 while the
 * matrix streams past (common.cuh, "Loads"). */
template <typename T, typename V, int ORD, int NV>
__device__ __forceinline__ void block_batches(const MmArgs<T, V> &a, int64_t b0, int64_t e,
                                              int step, int r, int j0, bool whole, V (&acc)[NV])
{
    const int bs = a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    for (int64_t b = b0; b < e; b += step) {
        const V *xb = a.x + (int64_t)ldc<L2h::first>(a.col_idx + b) * bs * a.xs + j0 * a.xj;
        const T *vb = a.val + b * bs2;
        for (int c = 0; c < bs; ++c) {
            const V av = (V)conj_if(ldv<true, L2h::first>(vb + (ORD == COL ? (int64_t)c * bs + r : (int64_t)r * bs + c)),
                                    a.conj);
            V xv[NV];
            x_piece(a, xb + (int64_t)c * a.xs, j0, whole, xv);
#pragma unroll
            for (int v = 0; v < NV; ++v)
                madd(acc[v], av, xv[v]);
        }
    }
}

template <typename T, typename V, int ORD, int NV>
__global__ void __launch_bounds__(256) k_spmm_n(const MmArgs<T, V> a, int G, int P)
{
    const int bs = a.bs;
    const int R = bs < G / P ? bs : G / P; /* rows of a block per pass */
    const int PR = P * R;
    const int ncol = G / PR;
    const int lane = threadIdx.x & (G - 1);
    const int cslot = lane / PR;
    const int jp = (lane - cslot * PR) / R, rl = lane - cslot * PR - jp * R;
    const int j0 = jp * NV;
    const bool whole = a.xvec && j0 + NV <= a.kc; /* NV values in one load */
    const int gpw = 32 / G; /* groups per warp */
    const int gin = (threadIdx.x & 31) / G;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int top = pow2ceil(ncol) / 2;

    /* uniform trip counts per warp: every lane reaches the shuffles */
    for (int64_t w = warp; w * gpw < a.mb; w += nwarps) {
        const int64_t row = w * gpw + gin;
        const bool valid = row < a.mb;
        int64_t s = 0, e = 0;
        if (valid) {
            s = ld(a.row_ptr + row);
            e = ld(a.row_ptr + row + 1);
        }
        for (int r0 = 0; r0 < bs; r0 += R) {
            const int r = r0 + rl;
            const bool mine = valid && cslot < ncol && r < bs && j0 < a.kc;
            V acc[NV];
#pragma unroll
            for (int v = 0; v < NV; ++v)
                acc[v] = V(0);
            if (mine)
                block_batches<T, V, ORD, NV>(a, s + cslot, e, ncol, r, j0, whole, acc);
            for (int sh = top; sh >= 1; sh >>= 1) {
#pragma unroll
                for (int v = 0; v < NV; ++v) {
                    const V o = __shfl_down_sync(BSRMV_FULL_MASK, acc[v], sh * PR, G);
                    if (cslot + sh < ncol)
                        acc[v] += o;
                }
            }
            if (mine && cslot == 0) {
                V *py = a.y + (row * bs + r) * a.ys + j0 * a.yj;
#pragma unroll
                for (int v = 0; v < NV; ++v)
                    if (j0 + v < a.kc) {
                        V out = a.alpha * acc[v];
                        if (a.beta != V(0))
                            out += a.beta * py[v * a.yj];
                        py[v * a.yj] = out;
                    }
            }
        }
    }
}

/* A run of the staged kernel: S blocks of a block row, S*BS*BS values of T
 * in shared memory.  Copied asynchronously, two buffers per warp where a
 * run takes at most 2304 bytes (double: bs <= 3, bs 5 and 6 from KT 4 on,
 * bs 7 from KT 8 on), so that the next run's copy flies while this one is
 * computed; otherwise one, to keep the warps per SM. */
template <typename T, int BS, int P, bool ASYNC> __host__ __device__ constexpr int staged_buffers()
{
    return ASYNC && (32 / P) * BS * BS * (int)sizeof(T) <= 2304 ? 2 : 1;
}

/* Warps per thread block of the staged kernel: its shared memory holds its
 * runs' buffers, at most 48 KiB per thread block. */
template <typename T, int BS, int P, bool ASYNC> __host__ __device__ constexpr int staged_warps()
{
    constexpr int per_warp = staged_buffers<T, BS, P, ASYNC>() * (32 / P) * BS * BS * (int)sizeof(T);
    return 49152 / per_warp >= 4 ? 4 : 49152 / per_warp < 1 ? 1 : 49152 / per_warp;
}

/* The warp's lanes copy the n values at src (global) to dst (shared).
 * ASYNC (sm_80 and later): cp.async, committed as one group by every lane,
 * copies or not, so that the groups count runs; the loads fly while the
 * lanes go on to col_idx and X.  Else loads and stores, done on return.
 * val is read once, so with the L2 priority evict-first (X must stay in
 * L2, see block_batches). */
template <bool ASYNC, typename T>
__device__ __forceinline__ void copy_run(T *dst, const T *src, int n, int lane)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr bool async = ASYNC;
#else
    constexpr bool async = false;
#endif
    if constexpr (async) {
        const uint64_t pol = l2_evict_first();
        for (int i = lane; i < n; i += 32)
            asm volatile("cp.async.ca.shared.global.L2::cache_hint.L2::256B [%0], [%1], %2, %3;"
                         :: "r"((uint32_t)__cvta_generic_to_shared(dst + i)), "l"(src + i),
                            "n"((int)sizeof(T)), "l"(pol)
                         : "memory");
        cp_async_commit();
    } else {
        for (int i = lane; i < n; i += 32)
            dst[i] = ldv<false, L2h::first>(src + i);
    }
}

/* The runs copied before the last LATER groups are in (this lane's);
 * the caller's __syncwarp shows them to the other lanes. */
template <int LATER> __device__ __forceinline__ void wait_runs()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    cp_async_wait<LATER>();
#endif
}

template <typename T, typename V, int ORD, int BS, int NV, int P, bool ASYNC>
__global__ void __launch_bounds__(128) k_spmm_staged(const MmArgs<T, V> a)
{
    constexpr int S = 32 / P, B2 = BS * BS, W = staged_warps<T, BS, P, ASYNC>();
    constexpr int NB = staged_buffers<T, BS, P, ASYNC>();
    __shared__ __align__(16) T stage[W][NB][S * B2];
    const int lane = threadIdx.x & 31;
    const int slot = lane / P, j0 = (lane - slot * P) * NV;
    const bool jin = j0 < a.kc;
    const bool whole = a.xvec && j0 + NV <= a.kc; /* NV values in one load */
    T(*buf)[S * B2] = stage[threadIdx.x >> 5];
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t row = warp; row < a.mb; row += nwarps) {
        const int64_t s0 = ld(a.row_ptr + row), e = ld(a.row_ptr + row + 1);
        const int nrun = (int)((e - s0 + S - 1) / S);
        /* the run's blocks (contiguous in val: whole lines, read once) */
        auto issue = [&](int r) {
            const int64_t b0 = s0 + (int64_t)r * S;
            const int nb = e - b0 < S ? (int)(e - b0) : S;
            copy_run<ASYNC>(buf[r % NB], a.val + b0 * B2, nb * B2, lane);
        };
        /* this lane's block of run r (slot), its column an iteration ahead */
        auto col_of = [&](int r) {
            const int64_t b = s0 + (int64_t)r * S + slot;
            return r < nrun && b < e ? ldc<L2h::first>(a.col_idx + b) : 0;
        };
        V acc[BS][NV];
#pragma unroll
        for (int r = 0; r < BS; ++r)
#pragma unroll
            for (int v = 0; v < NV; ++v)
                acc[r][v] = V(0);
        if (NB == 2 && nrun > 0)
            issue(0);
        /* acc += column c of the block at ab times row c of its X (xc) */
        auto fma_col = [&](const T *ab, int c, const V(&xc)[NV]) {
#pragma unroll
            for (int rr = 0; rr < BS; ++rr) {
                /* mixed precision: widened here, by the P lanes of the block */
                const V av = (V)conj_if(ab[ORD == COL ? c * BS + rr : rr * BS + c], a.conj);
#pragma unroll
                for (int v = 0; v < NV; ++v)
                    madd(acc[rr][v], av, xc[v]);
            }
        };
        int32_t col = ASYNC ? col_of(0) : 0;
        for (int r = 0; r < nrun; ++r) {
            /* the run NB - 1 ahead into the buffer the previous run freed
             * (its last reader is past the __syncwarp ending that run) */
            if (r + NB - 1 < nrun)
                issue(r + NB - 1);
            const bool mine = slot < e - (s0 + (int64_t)r * S) && jin;
            const T *ab = buf[r % NB] + slot * B2;
            if constexpr (ASYNC) {
                const int32_t next = col_of(r + 1);
                /* X for this lane's block while the copy is in flight */
                V xv[BS][NV];
                const V *xb = a.x + (int64_t)col * BS * a.xs + j0 * a.xj;
#pragma unroll
                for (int c = 0; c < BS; ++c) {
                    if (mine) {
                        x_piece(a, xb + (int64_t)c * a.xs, j0, whole, xv[c]);
                    } else {
#pragma unroll
                        for (int v = 0; v < NV; ++v)
                            xv[c][v] = V(0);
                    }
                }
                if (NB == 2 && r + 1 < nrun)
                    wait_runs<1>();
                else
                    wait_runs<0>();
                __syncwarp();
                if (mine)
#pragma unroll
                    for (int c = 0; c < BS; ++c)
                        fma_col(ab, c, xv[c]);
                col = next;
            } else { /* the run is in: its column, then X a block column at a time */
                __syncwarp();
                if (mine) {
                    const V *xb = a.x + (int64_t)col_of(r) * BS * a.xs + j0 * a.xj;
#pragma unroll
                    for (int c = 0; c < BS; ++c) {
                        V xc[NV];
                        x_piece(a, xb + (int64_t)c * a.xs, j0, whole, xc);
                        fma_col(ab, c, xc);
                    }
                }
            }
            __syncwarp();
        }
#pragma unroll
        for (int sh = S / 2; sh >= 1; sh >>= 1)
#pragma unroll
            for (int r = 0; r < BS; ++r)
#pragma unroll
                for (int v = 0; v < NV; ++v)
                    acc[r][v] += __shfl_down_sync(BSRMV_FULL_MASK, acc[r][v], sh * P);
        if (slot == 0 && jin) {
#pragma unroll
            for (int r = 0; r < BS; ++r) {
                V *py = a.y + (row * BS + r) * a.ys + j0 * a.yj;
#pragma unroll
                for (int v = 0; v < NV; ++v)
                    if (j0 + v < a.kc) {
                        V out = a.alpha * acc[r][v];
                        if (a.beta != V(0))
                            out += a.beta * py[v * a.yj];
                        py[v * a.yj] = out;
                    }
            }
        }
    }
}

template <typename T, typename V, int ORD, int BS, int NV, int P, bool ASYNC>
static cudaError_t run_staged(const MmArgs<T, V> &a, cudaStream_t s)
{
    constexpr int threads = 32 * staged_warps<T, BS, P, ASYNC>();
    k_spmm_staged<T, V, ORD, BS, NV, P, ASYNC><<<bsrmv_grid(a.mb * 32, threads), threads, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T, typename V, int ORD, int BS, int KT>
static cudaError_t run_staged_kt(const MmArgs<T, V> &a, cudaStream_t s)
{
    constexpr MmLaunch g = staged_geometry(BS, KT);
    return run_staged<T, V, ORD, BS, g.v, g.p, staged_async(BS, KT)>(a, s);
}

/* The staged kernel of the geometry for the launch's chunk width. */
template <typename T, typename V, int ORD, int BS>
static cudaError_t run_staged_vp(const MmArgs<T, V> &a, const MmLaunch &l, cudaStream_t s)
{
    switch (l.v * l.p) {
    case 1: return run_staged_kt<T, V, ORD, BS, 1>(a, s);
    case 2: return run_staged_kt<T, V, ORD, BS, 2>(a, s);
    case 4: return run_staged_kt<T, V, ORD, BS, 4>(a, s);
    case 8: return run_staged_kt<T, V, ORD, BS, 8>(a, s);
    case 16: return run_staged_kt<T, V, ORD, BS, 16>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T, typename V, int ORD, int NV>
static cudaError_t run_n(const MmArgs<T, V> &a, const MmLaunch &l, cudaStream_t s)
{
    const int gpw = 32 / l.group;
    const int64_t warps = (a.mb + gpw - 1) / gpw;
    k_spmm_n<T, V, ORD, NV><<<bsrmv_grid(warps * 32, l.threads), l.threads, 0, s>>>(a, l.group, l.p);
    return cudaGetLastError();
}

template <typename T, typename V, int ORD>
static cudaError_t run_width(const MmArgs<T, V> &a, const MmLaunch &l, cudaStream_t s)
{
    switch (l.v) {
    case 1: return run_n<T, V, ORD, 1>(a, l, s);
    case 2: return run_n<T, V, ORD, 2>(a, l, s);
    case 4: return run_n<T, V, ORD, 4>(a, l, s);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T, typename V>
cudaError_t launch_spmm_n(const MmArgs<T, V> &a, int order, const MmLaunch &l, cudaStream_t s)
{
    if (a.kc < 1 || l.v < 1 || l.p < 1 || a.kc > l.p * l.v)
        return cudaErrorInvalidValue;
    const int bsk = BSRMV_COMPILED_BS(BSRMV_SPMM_LIST, a.bs);
#define X(BS, P_)                                                                                  \
    if (bsk == BS)                                                                                 \
        return order == COL ? run_staged_vp<T, V, COL, BS>(a, l, s)                              \
                            : run_staged_vp<T, V, ROW, BS>(a, l, s);
    BSRMV_SPMM_LIST(X)
#undef X
    const bool pow2 = l.group > 0 && !(l.group & (l.group - 1)) && !(l.p & (l.p - 1));
    if (!pow2 || l.group > 32 || l.p > l.group || l.threads % 32 || l.threads < 32 ||
        l.threads > 256)
        return cudaErrorInvalidValue;
    return order == COL ? run_width<T, V, COL>(a, l, s) : run_width<T, V, ROW>(a, l, s);
}

/* A thread block per pack_rows rows of the chunk, through shared memory:
 * each thread reads its row's kc values, a column at a time (a warp reads
 * 32 consecutive values of a column, whole lines; the kc loads in flight
 * together), then the block writes the rows' ldp values (past kc: zeros)
 * with consecutive threads on consecutive values of xp.  A row of the tile
 * takes an odd number of slots, so that a warp's stores into the tile hit
 * distinct banks.  A thread per value of xp needed a 64-bit division to
 * find its row and column. */
template <typename T> constexpr int pack_rows()
{
    return sizeof(T) > 8 ? 128 : 256; /* the tile within 48 KiB */
}

template <typename T>
__global__ void __launch_bounds__(pack_rows<T>())
k_spmm_pack(const T *__restrict__ x, int64_t ldx, int64_t n, int kc, T *__restrict__ xp, int ldp)
{
    constexpr int PACK_ROWS = pack_rows<T>();
    __shared__ T tile[PACK_ROWS * (SPMM_MAX_KT + 1)];
    const int S = kc | 1;
    const int t = threadIdx.x;
    for (int64_t base = (int64_t)blockIdx.x * PACK_ROWS; base < n;
         base += (int64_t)gridDim.x * PACK_ROWS) {
        const int rows = n - base < PACK_ROWS ? (int)(n - base) : PACK_ROWS;
        if (t < rows) {
            T v[SPMM_MAX_KT];
#pragma unroll
            for (int j = 0; j < SPMM_MAX_KT; ++j)
                if (j < kc)
                    v[j] = x[base + t + (int64_t)j * ldx];
#pragma unroll
            for (int j = 0; j < SPMM_MAX_KT; ++j)
                if (j < kc)
                    tile[t * S + j] = v[j];
        }
        __syncthreads();
        T *out = xp + base * ldp;
        for (int e = t; e < rows * ldp; e += PACK_ROWS) {
            const int r = e / ldp, j = e - r * ldp;
            out[e] = j < kc ? tile[r * S + j] : T(0);
        }
        __syncthreads(); /* the tile is refilled by the next rows */
    }
}

template <typename T>
cudaError_t launch_spmm_pack(const T *x, int64_t ldx, int64_t n, int kc, T *xp, int64_t ldp,
                             cudaStream_t s)
{
    if (n <= 0)
        return cudaSuccess;
    if (kc < 1 || ldp < kc || ldp > SPMM_MAX_KT)
        return cudaErrorInvalidValue;
    unsigned g = bsrmv_grid(n, pack_rows<T>());
    if (g > 65536)
        g = 65536;
    k_spmm_pack<T><<<g, pack_rows<T>(), 0, s>>>(x, ldx, n, kc, xp, (int)ldp);
    return cudaGetLastError();
}

/* 2^lp lanes per (block, column c) pair, over the vectors: with a row-major
 * Y (spmm_t_lanes) the lanes of a pair add into consecutive values of a
 * row of Y, so that one atomic instruction of the warp touches a few
 * lines instead of 32; 1 lane per pair with a column-major Y, where a
 * block's bs columns land on consecutive values.  At a compile-time BS
 * the column's values are loaded once, into registers, for all of the
 * lane's vectors; at the runtime bs (BS == 0) they are loaded again per
 * vector (from L1). */
template <typename T, typename V, int ORD, int BS>
__global__ void __launch_bounds__(256) k_spmm_t(const MmArgs<T, V> a, int lp)
{
    const int bs = BS > 0 ? BS : a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int lane = threadIdx.x & 31;
    const int j0 = lane & ((1 << lp) - 1), pair = lane >> lp, npairs = 32 >> lp;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t row = warp; row < a.mb; row += nwarps) {
        const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
        const V *xr = a.x + row * bs * a.xs;
        for (int64_t t = s * bs + pair; t < e * bs; t += npairs) {
            const int64_t b = t / bs;
            const int c = (int)(t - b * bs);
            const int64_t cb = ldc(a.col_idx + b);
            if (a.skip_diag && cb == row)
                continue;
            const T *v = a.val + b * bs2;
            auto load = [&](int r) {
                return (V)conj_if(ld(v + (ORD == COL ? (int64_t)c * bs + r : (int64_t)r * bs + c)), a.conj);
            };
            V line[BS > 0 ? BS : 1];
            if constexpr (BS > 0)
#pragma unroll
                for (int r = 0; r < BS; ++r)
                    line[r] = load(r);
            V *py = a.y + (cb * bs + c) * a.ys;
            for (int j = j0; j < a.kc; j += 1 << lp) {
                V sum = V(0);
#pragma unroll
                for (int r = 0; r < bs; ++r) {
                    V coef;
                    if constexpr (BS > 0)
                        coef = line[r];
                    else
                        coef = load(r);
                    madd(sum, coef, ld(xr + r * a.xs + j * a.xj));
                }
                atomicAdd(py + j * a.yj, a.alpha * sum);
            }
        }
    }
}

/* log2 of the lanes per (block, column) pair of k_spmm_t: the chunk's
 * vectors rounded up to a power of two, at most a warp, where Y is
 * row-major; else 0. */
template <typename T, typename V> static int spmm_t_lanes(const MmArgs<T, V> &a)
{
    if (a.yj != 1)
        return 0;
    int lp = 0;
    while (lp < 5 && (1 << lp) < a.kc)
        ++lp;
    return lp;
}

template <typename T, typename V, int BS>
static cudaError_t run_t(const MmArgs<T, V> &a, int order, unsigned g, int threads, cudaStream_t s)
{
    const int lp = spmm_t_lanes(a);
    if (order == COL)
        k_spmm_t<T, V, COL, BS><<<g, threads, 0, s>>>(a, lp);
    else
        k_spmm_t<T, V, ROW, BS><<<g, threads, 0, s>>>(a, lp);
    return cudaGetLastError();
}

template <typename T, typename V>
cudaError_t launch_spmm_t(const MmArgs<T, V> &a, int order, cudaStream_t s)
{
    const int threads = 256;
    const unsigned g = bsrmv_grid(a.mb * 32, threads);
    const int bsk = BSRMV_COMPILED_BS(BSRMV_SPMM_LIST, a.bs);
#define X(BS, P_)                                                                                  \
    if (bsk == BS)                                                                                 \
        return run_t<T, V, BS>(a, order, g, threads, s);
    BSRMV_SPMM_LIST(X)
#undef X
    return run_t<T, V, 0>(a, order, g, threads, s);
}

template <typename T>
__global__ void k_spmm_scale(T *y, int64_t n, int k, int64_t ys, int64_t yj, T beta)
{
    const int64_t total = n * k;
    for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < total;
         q += (int64_t)gridDim.x * blockDim.x) {
        /* consecutive threads on consecutive addresses in either layout */
        int64_t i, j;
        if (yj == 1) {
            i = q / k;
            j = q - i * k;
        } else {
            j = q / n;
            i = q - j * n;
        }
        T *p = y + i * ys + j * yj;
        *p = beta == T(0) ? T(0) : beta * *p;
    }
}

template <typename T>
cudaError_t launch_spmm_scale(T *y, int64_t n, int k, int64_t ys, int64_t yj, T beta,
                              cudaStream_t s)
{
    if (n <= 0 || k <= 0)
        return cudaSuccess;
    unsigned g = bsrmv_grid(n * k, 256);
    if (g > 65536)
        g = 65536;
    k_spmm_scale<T><<<g, 256, 0, s>>>(y, n, k, ys, yj, beta);
    return cudaGetLastError();
}

/* the products of a (value, vector) type pair; the vector kernels of a type */
#define BSRMV_SPMM_PAIR(T, V)                                                                      \
    template cudaError_t launch_spmm_n<T, V>(const MmArgs<T, V> &, int, const MmLaunch &,          \
                                             cudaStream_t);                                        \
    template cudaError_t launch_spmm_t<T, V>(const MmArgs<T, V> &, int, cudaStream_t);
#define BSRMV_SPMM_VEC(V)                                                                          \
    template cudaError_t launch_spmm_pack<V>(const V *, int64_t, int64_t, int, V *, int64_t,       \
                                             cudaStream_t);                                        \
    template cudaError_t launch_spmm_scale<V>(V *, int64_t, int, int64_t, int64_t, V, cudaStream_t);

} // namespace bsrmv_cuda

#endif
