/* GPU SpMM (several vectors at once): what the kernels (k_spmm_impl.cuh)
 * and the C API with its policy (spmm.cu) share.  Not installed. */
#ifndef BSRMV_CUDA_K_SPMM_CUH
#define BSRMV_CUDA_K_SPMM_CUH

#include "common.cuh"

namespace bsrmv_cuda {

/* Vectors per pass over A.  Wider chunks would read A less often but need
 * more lanes (or registers) per block row; at 16 the matrix is already
 * a small part of the traffic against X and Y. */
#define SPMM_MAX_KT 16

/* One chunk of vectors.  Values of type T, X, Y and the sums of type V (T,
 * or double for float values: mixed precision, as Args<T, V>).  Entry
 * (i, j) of X's chunk is x[i*xs + j*xj] and of Y y[i*ys + j*yj]
 * (row-major: xs = ld, xj = 1; column-major: xs = 1, xj = ld, or a
 * row-major copy of the chunk, spmm.cu).  x and y point at the chunk's
 * first vector.  alpha/beta already rounded to V. */
template <typename T, typename V = T> struct MmArgs {
    int64_t mb;
    int bs;
    const int64_t *__restrict__ row_ptr;
    const int32_t *__restrict__ col_idx;
    const T *__restrict__ val;
    const V *__restrict__ x;
    V *__restrict__ y;
    int64_t xs, xj, ys, yj;
    int kc;    /* vectors of the chunk                                     */
    bool xvec; /* xj == 1, and x and xs allow loads of NV values at once
                * (NV*sizeof(V) aligned)                                   */
    bool conj; /* complex values conjugated as loaded: OP_C, and the
                * passes of conj(A) of symmetric storage (spmm.cu)        */
    bool skip_diag; /* the transpose kernel leaves out blocks on the
                     * diagonal: the mirror pass of symmetric storage    */
    V alpha, beta;
};

/* The geometry of one OP_N launch: v (NV in the kernels) vectors in
 * registers per lane (1, 2, 4), P lanes side by side over the chunk's
 * vectors (P*v >= kc); the
 * runtime-bs kernel also takes G lanes per block row (8, 16, 32; P <= G)
 * and threads per thread block (the staged kernel: a warp per block row,
 * 32/P blocks of a run side by side). */
struct MmLaunch {
    int v, p, group, threads;
};

/* Block sizes of the staged kernel (compile-time bs), X(BS, 0); other
 * block sizes run the runtime-bs kernel. */
#define BSRMV_SPMM_LIST(X) X(1, 0) X(2, 0) X(3, 0) X(4, 0) X(5, 0) X(6, 0) X(7, 0) X(8, 0)

/* The staged kernel's geometry (v vectors per lane, P lanes per block)
 * for a chunk of KT vectors (1, 2, 4, 8, 16: kc rounded up to a power of
 * two), by bs; the kernel is built for these pairs only.  Measured on
 * 27-point grids (H100, row-major X, vectors per second against KT SpMVs,
 * with the runs copied synchronously):
 *   - bs 3, KT 4: (2, 2) 2.48x, (4, 1) 2.09x, (1, 4) 2.20x.
 *   - bs 2 and 3, KT 8, the runs copied asynchronously: bs 3 (2, 4) 4.54x,
 *     (4, 2) 4.04x, (1, 8) 3.62x; bs 2 (2, 4) 1.18x faster than (4, 2).
 *     The X loads set the time: a warp load reaches a line per block of
 *     the run, so P lanes per block take 12/P loads of L1 per block at bs
 *     3 (the L1 at 85% of its peak with (4, 2), 67% with (2, 4); ncu).
 *     At KT 16 (4, 4) stays: 1.07x faster than (2, 8).
 *   - bs 6: a vector per lane wins from KT 2 on, (1, 4) 3.48x against (4, 1)
 *     2.54x, (1, 8) 5.59x against (4, 2) 4.07x; bs 5, 7 and 8 the same
 *     way (KT 16 at bs 8: (1, 16) 1.9x faster than (4, 4)).
 *   - bs 4 lies between: (1, 2), (2, 2), (2, 4), (1, 16).
 * v*bs accumulators per lane; more lanes per block (P) means fewer blocks
 * side by side (32/P) and fewer sums to reduce over the slots. */
__host__ __device__ constexpr MmLaunch staged_geometry(int bs, int kt)
{
    return kt <= 1   ? MmLaunch{1, 1, 32, 0}
           : bs <= 3 ? (kt == 2   ? MmLaunch{2, 1, 32, 0}
                        : kt == 4 ? (bs == 3 ? MmLaunch{2, 2, 32, 0} : MmLaunch{4, 1, 32, 0})
                        : kt == 8 ? (bs == 1 ? MmLaunch{4, 2, 32, 0} : MmLaunch{2, 4, 32, 0})
                                  : MmLaunch{4, 4, 32, 0})
           : bs == 4 ? (kt == 2   ? MmLaunch{1, 2, 32, 0}
                        : kt == 4 ? MmLaunch{2, 2, 32, 0}
                        : kt == 8 ? MmLaunch{2, 4, 32, 0}
                                  : MmLaunch{1, 16, 32, 0})
                     : MmLaunch{1, kt, 32, 0};
}

/* Whether the staged kernel copies its runs asynchronously (k_spmm_impl.cuh), a
 * compile-time choice per (bs, KT) like the geometry.  The
 * same grids (H100, double, 50 MB at bs 2, 4, 5, 7 and 8, 400 MB at bs 3
 * and 6), row-major X, asynchronous against synchronous copies: bs 2, 3,
 * 5, 6 and 7 at KT 2-8 1.02-1.26x faster, bs 8 at KT 2 1.23x; slower
 * where the asynchronous kernel needs more registers and loses warps per
 * SM (bs 8 at KT 4 and 8: 80 against 61 registers, 0.86-0.91x), with runs
 * of 2 blocks (P = 16, KT 16 from bs 4 on: 0.88-0.93x at bs 4 and 8) and
 * at bs 4 (0.92-0.98x at KT 2 and 4). */
__host__ __device__ constexpr bool staged_async(int bs, int kt)
{
    const int p = staged_geometry(bs, kt).p;
    return p < 16 && bs != 4 && !(bs == 8 && p >= 4);
}

/* Y = alpha*A*X + beta*Y for the chunk (kc <= l.p*l.v vectors).  Built
 * for (double, double), (float, float), (float, double) and the complex
 * types (cplx<R>, cplx<R>). */
template <typename T, typename V>
cudaError_t launch_spmm_n(const MmArgs<T, V> &a, int order, const MmLaunch &l, cudaStream_t s);
/* Y += alpha*A^T*X (conj: A^H) for all kc vectors (atomic scatter; Y
 * already scaled); skip_diag: the blocks off the diagonal only. */
template <typename T, typename V>
cudaError_t launch_spmm_t(const MmArgs<T, V> &a, int order, cudaStream_t s);
/* xp (row-major, ld ldp) = the kc columns of x (column-major, ld ldx),
 * n rows; kc <= ldp <= SPMM_MAX_KT.  This and the scale: vectors only,
 * built for double, float and their complex types. */
template <typename T>
cudaError_t launch_spmm_pack(const T *x, int64_t ldx, int64_t n, int kc, T *xp, int64_t ldp,
                             cudaStream_t s);
/* Y = beta*Y over n rows and the kc vectors (beta == 0 writes zeros). */
template <typename T>
cudaError_t launch_spmm_scale(T *y, int64_t n, int k, int64_t ys, int64_t yj, T beta,
                              cudaStream_t s);

} // namespace bsrmv_cuda

#endif
