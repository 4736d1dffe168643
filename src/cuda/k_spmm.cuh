/* GPU SpMM (several vectors at once): what the kernels (k_spmm.cu) and the
 * C API with its policy (spmm.cu) share.  Not installed. */
#ifndef BSRMV_CUDA_K_SPMM_CUH
#define BSRMV_CUDA_K_SPMM_CUH

#include "common.cuh"

namespace bsrmv_cuda {

/* One chunk of vectors.  Row i of X's chunk is the kc values at
 * x + i*xs (row-major: the kernels read a column-major X from a row-major
 * copy); entry (i, j) of Y is y[i*ys + j*yj] (row-major: ys = ld, yj = 1;
 * column-major: ys = 1, yj = ld).  x and y point at the chunk's first
 * vector.  alpha/beta already rounded to T. */
template <typename T> struct MmArgs {
    int64_t mb;
    int bs;
    const int64_t *__restrict__ row_ptr;
    const int32_t *__restrict__ col_idx;
    const T *__restrict__ val;
    const T *__restrict__ x;
    T *__restrict__ y;
    int64_t xs, ys, yj;
    int kc;    /* vectors of the chunk                                     */
    bool xvec; /* x and xs allow loads of V values at once (V*sizeof(T)
                * aligned)                                                 */
    T alpha, beta;
};

/* The geometry of one OP_N launch: V vectors in registers per lane (1, 2,
 * 4), P lanes side by side over the chunk's vectors (P*V >= kc); the
 * runtime-bs kernel also takes G lanes per block row (8, 16, 32; P <= G)
 * and threads per thread block (the staged kernel: a warp per block row,
 * 32/P blocks of a run side by side). */
struct MmLaunch {
    int v, p, group, threads;
};

/* Block sizes of the staged kernel (compile-time bs), X(BS, 0); other
 * block sizes run the runtime-bs kernel. */
#define BSRMV_SPMM_LIST(X) X(1, 0) X(2, 0) X(3, 0) X(4, 0) X(5, 0) X(6, 0) X(7, 0) X(8, 0)

/* Y = alpha*A*X + beta*Y for the chunk (kc <= l.p*l.v vectors). */
template <typename T>
cudaError_t launch_spmm_n(const MmArgs<T> &a, int order, const MmLaunch &l, cudaStream_t s);
/* Y += alpha*A^T*X for all kc vectors (atomic scatter; Y already
 * scaled); X in the layout of Y (xj: its vector stride). */
template <typename T>
cudaError_t launch_spmm_t(const MmArgs<T> &a, int64_t xj, int order, cudaStream_t s);
/* xp (row-major, ld ldp) = the kc columns of x (column-major, ld ldx),
 * n rows. */
template <typename T>
cudaError_t launch_spmm_pack(const T *x, int64_t ldx, int64_t n, int kc, T *xp, int64_t ldp,
                             cudaStream_t s);
/* Y = beta*Y over n rows and the kc vectors (beta == 0 writes zeros). */
template <typename T>
cudaError_t launch_spmm_scale(T *y, int64_t n, int k, int64_t ys, int64_t yj, T beta,
                              cudaStream_t s);

} // namespace bsrmv_cuda

#endif
