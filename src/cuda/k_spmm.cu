/* SpMM kernels: Y = alpha*op(A)*X + beta*Y for a chunk of vectors.
 *
 * OP_N: a group of G lanes per block row.  Lane (cslot, jp, r) owns scalar
 * row r of the block row, vectors jp*V .. jp*V+V-1 of the chunk (V
 * accumulators in registers) and every ncol-th block of the row (ncol =
 * G / (P*bs) block columns side by side).  A(r, c) is loaded by the P
 * lanes of row r at once (one broadcast) and multiplied by V values of row
 * c of the block's rows of X, which the P lanes read as one contiguous
 * piece of kc values (a 16-byte load each): the matrix streams once per
 * chunk, and every load instruction reads whole pieces of lines of X, not
 * the same 16 bytes in bs lanes (a lane per row holding all kc vectors
 * would load each piece bs times, and the L1 serves the distinct lines of
 * a warp load one per cycle).  Each lane walks its blocks in batches
 * (block_batches).  X is read row-major: the driver copies a
 * column-major chunk first.  The group sums its column slots with
 * shuffles; lanes of slot 0 write their row and vectors of Y.  A block
 * taller than G / P lanes (runtime bs) goes in passes of G / P rows.
 *
 * OP_T: a warp per block row scatters alpha * A(:, c)^T X(row, j) into
 * Y(col*bs + c, j) with atomic adds (the SpMV transpose kernel's scheme),
 * all vectors of the call in one pass. */
#include "k_spmm.cuh"

namespace bsrmv_cuda {

/* Blocks b0, b0 + step, ... below e of a lane's block row: acc[v] +=
 * sum_c A(r, c) X(col*bs + c, j0 + v).  U blocks per batch: first their
 * col_idx, then their values of A (the DRAM stream), then block by block
 * the rows of X (mostly cache hits) and the FMAs, so that a batch waits
 * for DRAM once and a warp keeps U times the matrix bytes in flight (a
 * lane's blocks are few, 2-14 on a 27-point grid); steps past e are
 * predicated off.  Holding X for the whole batch as well would cost
 * U*bs*V more registers (158 at bs 8, fewer warps per SM).  U shrinks with
 * bs to bound the registers.  BS = 0 (runtime bs): one block at a time.
 * val and col_idx are read once, with the L2 priority evict-first: X, k
 * times the SpMV's x and gathered at every block, is what must stay in L2
 * while the matrix streams past (common.cuh, "Loads"). */
template <typename T, int ORD, int BS, int V>
__device__ __forceinline__ void block_batches(const MmArgs<T> &a, int64_t b0, int64_t e, int step,
                                              int r, int j0, bool whole, T (&acc)[V])
{
    constexpr int U = BS == 0 ? 1 : BS == 1 ? 8 : BS <= 4 ? 4 : 2;
    constexpr int NB = BS == 0 ? 1 : BS;
    const int bs = BS ? BS : a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    for (int64_t b = b0; b < e; b += (int64_t)U * step) {
        const T *xb[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t bu = b + (int64_t)u * step;
            xb[u] = bu < e ? a.x + (int64_t)ldc<L2h::first>(a.col_idx + bu) * bs * a.xs + j0 : nullptr;
        }
        for (int c0 = 0; c0 < bs; c0 += NB) { /* one trip at compile-time bs */
            T av[U][NB];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const T *vb = a.val + (b + (int64_t)u * step) * bs2;
#pragma unroll
                for (int q = 0; q < NB; ++q) {
                    const int c = c0 + q;
                    av[u][q] = xb[u] != nullptr && c < bs
                                   ? ldv<true, L2h::first>(vb + (ORD == COL ? (int64_t)c * bs + r
                                                                            : (int64_t)r * bs + c))
                                   : T(0);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int q = 0; q < NB; ++q) {
                    const int c = c0 + q;
                    const bool in = xb[u] != nullptr && c < bs;
                    T xv[V];
                    if (whole) {
                        ldv_vec<true>(xb[u] + (int64_t)c * a.xs, xv, in);
                    } else {
#pragma unroll
                        for (int v = 0; v < V; ++v)
                            xv[v] = in && j0 + v < a.kc ? ld(xb[u] + (int64_t)c * a.xs + v) : T(0);
                    }
#pragma unroll
                    for (int v = 0; v < V; ++v)
                        acc[v] += av[u][q] * xv[v];
                }
        }
    }
}

template <typename T, int ORD, int BS, int V>
__global__ void __launch_bounds__(256) k_spmm_n(const MmArgs<T> a, int G, int P)
{
    const int bs = BS ? BS : a.bs;
    const int R = bs < G / P ? bs : G / P; /* rows of a block per pass */
    const int PR = P * R;
    const int ncol = G / PR;
    const int lane = threadIdx.x & (G - 1);
    const int cslot = lane / PR;
    const int jp = (lane - cslot * PR) / R, rl = lane - cslot * PR - jp * R;
    const int j0 = jp * V;
    const bool whole = a.xvec && j0 + V <= a.kc; /* V values in one load */
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
            T acc[V];
#pragma unroll
            for (int v = 0; v < V; ++v)
                acc[v] = T(0);
            if (mine)
                block_batches<T, ORD, BS, V>(a, s + cslot, e, ncol, r, j0, whole, acc);
            for (int sh = top; sh >= 1; sh >>= 1) {
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    const T o = __shfl_down_sync(BSRMV_FULL_MASK, acc[v], sh * PR, G);
                    if (cslot + sh < ncol)
                        acc[v] += o;
                }
            }
            if (mine && cslot == 0) {
                T *py = a.y + (row * bs + r) * a.ys + j0 * a.yj;
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (j0 + v < a.kc) {
                        T out = a.alpha * acc[v];
                        if (a.beta != T(0))
                            out += a.beta * py[v * a.yj];
                        py[v * a.yj] = out;
                    }
            }
        }
    }
}

template <typename T, int ORD, int BS, int V>
static cudaError_t run_n(const MmArgs<T> &a, const MmLaunch &l, cudaStream_t s)
{
    const int gpw = 32 / l.group;
    const int64_t warps = (a.mb + gpw - 1) / gpw;
    k_spmm_n<T, ORD, BS, V><<<bsrmv_grid(warps * 32, l.threads), l.threads, 0, s>>>(a, l.group, l.p);
    return cudaGetLastError();
}

template <typename T, int ORD, int BS>
static cudaError_t run_width(const MmArgs<T> &a, const MmLaunch &l, cudaStream_t s)
{
    switch (l.v) {
    case 1: return run_n<T, ORD, BS, 1>(a, l, s);
    case 2: return run_n<T, ORD, BS, 2>(a, l, s);
    case 4: return run_n<T, ORD, BS, 4>(a, l, s);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T>
cudaError_t launch_spmm_n(const MmArgs<T> &a, int order, const MmLaunch &l, cudaStream_t s)
{
    const bool pow2 = l.group > 0 && !(l.group & (l.group - 1)) && l.p > 0 && !(l.p & (l.p - 1));
    if (!pow2 || l.group > 32 || l.p > l.group || l.threads % 32 || l.threads < 32 ||
        l.threads > 256 || a.kc < 1 || a.kc > l.p * l.v)
        return cudaErrorInvalidValue;
    const int bsk = BSRMV_COMPILED_BS(BSRMV_SPMM_LIST, a.bs);
#define X(BS, P)                                                                                   \
    if (bsk == BS)                                                                                 \
        return order == COL ? run_width<T, COL, BS>(a, l, s) : run_width<T, ROW, BS>(a, l, s);
    BSRMV_SPMM_LIST(X)
#undef X
    return cudaErrorInvalidValue;
}

/* Consecutive threads read consecutive rows of a column of x. */
template <typename T>
__global__ void k_spmm_pack(const T *__restrict__ x, int64_t ldx, int64_t n, int kc,
                            T *__restrict__ xp, int64_t ldp)
{
    const int64_t total = n * kc;
    for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < total;
         q += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = q / n, i = q - j * n;
        xp[i * ldp + j] = x[i + j * ldx];
    }
}

template <typename T>
cudaError_t launch_spmm_pack(const T *x, int64_t ldx, int64_t n, int kc, T *xp, int64_t ldp,
                             cudaStream_t s)
{
    if (n <= 0)
        return cudaSuccess;
    unsigned g = bsrmv_grid(n * kc, 256);
    if (g > 65536)
        g = 65536;
    k_spmm_pack<T><<<g, 256, 0, s>>>(x, ldx, n, kc, xp, ldp);
    return cudaGetLastError();
}

template <typename T, int ORD>
__global__ void __launch_bounds__(256) k_spmm_t(const MmArgs<T> a, int64_t xj)
{
    const int bs = a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int lane = threadIdx.x & 31;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t row = warp; row < a.mb; row += nwarps) {
        const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
        const T *xr = a.x + row * bs * a.xs;
        for (int64_t t = s * bs + lane; t < e * bs; t += 32) {
            const int64_t b = t / bs;
            const int c = (int)(t - b * bs);
            const T *v = a.val + b * bs2;
            T *py = a.y + ((int64_t)ldc(a.col_idx + b) * bs + c) * a.ys;
            for (int j = 0; j < a.kc; ++j) {
                T sum = T(0);
                for (int r = 0; r < bs; ++r)
                    sum += ld(v + (ORD == COL ? (int64_t)c * bs + r : (int64_t)r * bs + c)) *
                           ld(xr + r * a.xs + j * xj);
                atomicAdd(py + j * a.yj, a.alpha * sum);
            }
        }
    }
}

template <typename T>
cudaError_t launch_spmm_t(const MmArgs<T> &a, int64_t xj, int order, cudaStream_t s)
{
    const int threads = 256;
    const unsigned g = bsrmv_grid(a.mb * 32, threads);
    if (order == COL)
        k_spmm_t<T, COL><<<g, threads, 0, s>>>(a, xj);
    else
        k_spmm_t<T, ROW><<<g, threads, 0, s>>>(a, xj);
    return cudaGetLastError();
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

#define BSRMV_SPMM_INST_(T)                                                                        \
    template cudaError_t launch_spmm_n<T>(const MmArgs<T> &, int, const MmLaunch &, cudaStream_t); \
    template cudaError_t launch_spmm_t<T>(const MmArgs<T> &, int64_t, int, cudaStream_t);          \
    template cudaError_t launch_spmm_pack<T>(const T *, int64_t, int64_t, int, T *, int64_t,       \
                                             cudaStream_t);                                        \
    template cudaError_t launch_spmm_scale<T>(T *, int64_t, int, int64_t, int64_t, T, cudaStream_t);
BSRMV_SPMM_INST_(float)
BSRMV_SPMM_INST_(double)
#undef BSRMV_SPMM_INST_

} // namespace bsrmv_cuda
