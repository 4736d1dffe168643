/* SpMM kernels: Y = alpha*op(A)*X + beta*Y for a chunk of vectors.
 *
 * OP_N: a group of G lanes per block row.  Lane (r, cslot) owns scalar row
 * r of the block row and every ncol-th block of it (ncol = G / bs block
 * columns side by side), and keeps KT accumulators, one per vector of the
 * chunk.  Each matrix value A(r, c) is loaded once, by one lane, and
 * multiplied by the KT values of row c of the block's rows of X, which the
 * bs lanes of the block read together (one broadcast load; in the
 * row-major layout the KT values are contiguous and go in 16-byte
 * loads).  So the matrix streams once per chunk, its loads coalesce like
 * the by-column SpMV's (the lanes of a block read a column of it), and the
 * FMAs per load of A grow with KT.  The group then sums the KT
 * accumulators over its column slots with shuffles and lanes with cslot 0
 * write their row of Y.  A block larger than the group (runtime bs > G) is
 * done in passes of G rows.
 *
 * OP_T: a warp per block row scatters alpha * A(:, c)^T X(row, j) into
 * Y(col*bs + c, j) with atomic adds (the SpMV transpose kernel's scheme),
 * all vectors of the call in one pass. */
#include "k_spmm.cuh"

namespace bsrmv_cuda {

/* Row i of the chunk of X: KT values (those past kc are zero). */
template <typename T, int KT>
__device__ __forceinline__ void load_x_row(const MmArgs<T> &a, int64_t i, T (&v)[KT])
{
    const T *p = a.x + i * a.xs;
    if (a.xvec) {
        ldv_vec<true>(p, v);
    } else {
#pragma unroll
        for (int j = 0; j < KT; ++j)
            v[j] = j < a.kc ? ld(p + j * a.xj) : T(0);
    }
}

/* val and col_idx are read once and with the L2 priority evict-first: X,
 * k times the SpMV's x and gathered at every block, is what must stay in
 * L2 while the matrix streams past (common.cuh, "Loads"). */
template <typename T, int ORD, int BS, int KT>
__global__ void __launch_bounds__(256) k_spmm_n(const MmArgs<T> a, int G)
{
    const int bs = BS ? BS : a.bs;
    const int R = bs < G ? bs : G; /* rows of a block per pass */
    const int ncol = G / R;
    const int lane = threadIdx.x & (G - 1);
    const int cslot = lane / R, rl = lane - cslot * R;
    const int64_t bs2 = (int64_t)bs * bs;
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
            const bool mine = valid && cslot < ncol && r < bs;
            T acc[KT];
#pragma unroll
            for (int j = 0; j < KT; ++j)
                acc[j] = T(0);
            if (mine) {
                for (int64_t b = s + cslot; b < e; b += ncol) {
                    const int64_t xr = (int64_t)ldc<L2h::first>(a.col_idx + b) * bs;
                    const T *vb = a.val + b * bs2;
#pragma unroll
                    for (int c = 0; c < bs; ++c) {
                        const T av = ldv<true, L2h::first>(
                            vb + (ORD == COL ? (int64_t)c * bs + r : (int64_t)r * bs + c));
                        T xv[KT];
                        load_x_row<T, KT>(a, xr + c, xv);
#pragma unroll
                        for (int j = 0; j < KT; ++j)
                            acc[j] += av * xv[j];
                    }
                }
            }
            for (int sh = top; sh >= 1; sh >>= 1) {
#pragma unroll
                for (int j = 0; j < KT; ++j) {
                    const T o = __shfl_down_sync(BSRMV_FULL_MASK, acc[j], sh * R, G);
                    if (cslot + sh < ncol)
                        acc[j] += o;
                }
            }
            if (mine && cslot == 0) {
                T *py = a.y + (row * bs + r) * a.ys;
#pragma unroll
                for (int j = 0; j < KT; ++j)
                    if (j < a.kc) {
                        T v = a.alpha * acc[j];
                        if (a.beta != T(0))
                            v += a.beta * py[j * a.yj];
                        py[j * a.yj] = v;
                    }
            }
        }
    }
}

template <typename T, int ORD, int BS, int KT>
static cudaError_t run_n(const MmArgs<T> &a, const MmLaunch &l, cudaStream_t s)
{
    const int gpw = 32 / l.group;
    const int64_t warps = (a.mb + gpw - 1) / gpw;
    k_spmm_n<T, ORD, BS, KT><<<bsrmv_grid(warps * 32, l.threads), l.threads, 0, s>>>(a, l.group);
    return cudaGetLastError();
}

template <typename T, int ORD, int BS>
static cudaError_t run_width(const MmArgs<T> &a, const MmLaunch &l, cudaStream_t s)
{
    switch (l.kt) {
    case 2: return run_n<T, ORD, BS, 2>(a, l, s);
    case 4: return run_n<T, ORD, BS, 4>(a, l, s);
    case 8: return run_n<T, ORD, BS, 8>(a, l, s);
    case 16: return run_n<T, ORD, BS, 16>(a, l, s);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T>
cudaError_t launch_spmm_n(const MmArgs<T> &a, int order, const MmLaunch &l, cudaStream_t s)
{
    if (l.group < 1 || l.group > 32 || (l.group & (l.group - 1)) || l.threads % 32 ||
        l.threads < 32 || l.threads > 256 || a.kc < 1 || a.kc > l.kt)
        return cudaErrorInvalidValue;
    const int bsk = BSRMV_COMPILED_BS(BSRMV_SPMM_LIST, a.bs);
#define X(BS, P)                                                                                   \
    if (bsk == BS)                                                                                 \
        return order == COL ? run_width<T, COL, BS>(a, l, s) : run_width<T, ROW, BS>(a, l, s);
    BSRMV_SPMM_LIST(X)
#undef X
    return cudaErrorInvalidValue;
}

template <typename T, int ORD> __global__ void __launch_bounds__(256) k_spmm_t(const MmArgs<T> a)
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
                           ld(xr + r * a.xs + j * a.xj);
                atomicAdd(py + j * a.yj, a.alpha * sum);
            }
        }
    }
}

template <typename T> cudaError_t launch_spmm_t(const MmArgs<T> &a, int order, cudaStream_t s)
{
    const int threads = 256;
    const unsigned g = bsrmv_grid(a.mb * 32, threads);
    if (order == COL)
        k_spmm_t<T, COL><<<g, threads, 0, s>>>(a);
    else
        k_spmm_t<T, ROW><<<g, threads, 0, s>>>(a);
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
    template cudaError_t launch_spmm_t<T>(const MmArgs<T> &, int, cudaStream_t);                   \
    template cudaError_t launch_spmm_scale<T>(T *, int64_t, int, int64_t, int64_t, T, cudaStream_t);
BSRMV_SPMM_INST_(float)
BSRMV_SPMM_INST_(double)
#undef BSRMV_SPMM_INST_

} // namespace bsrmv_cuda
