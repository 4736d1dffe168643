/* bsrmv_gpu_spmm: the checks, the split of the k vectors into chunks that
 * each stream A once, and the policy that gives each chunk its kernel
 * geometry by (bs, vectors, layout).  The kernels: k_spmm.cu. */
#include "k_spmm.cuh"
#include "errors.cuh"
#include "handle.cuh"

#include <stdio.h>

using namespace bsrmv_cuda;

/* Vectors per pass over A: the accumulators of 16 vectors (and the 16
 * values of X they multiply) are what fits the registers of 256-thread
 * blocks without spilling much at bs <= 8. */
#define SPMM_MAX_KT 16

/* The geometry of a chunk: the first row whose bs_max and kt_max cover
 * the matrix's bs and the chunk's KT, for the layout (-1: either).
 * group: lanes per block row; the block columns side by side are
 * group / bs, each lane sums a KT-wide row over its share of the row's
 * blocks, then the group reduces KT values per column slot.  Narrower
 * groups for wide chunks of small blocks keep the reduction (KT shuffles
 * per halving) small against the FMAs on rows of ~27 blocks (a 27-point
 * grid); bs 5-8 need the whole warp to get 4-6 slots. */
struct MmPolicyRow {
    int bs_max, kt_max, layout, group, threads;
};
static const MmPolicyRow mm_policy[] = {
    {1, 16, -1, 8, 256},
    {2, 4, -1, 16, 256},
    {2, 16, -1, 8, 256},
    {4, 4, -1, 32, 256},
    {4, 16, -1, 16, 256},
    {1 << 30, 16, -1, 32, 256},
};

static MmLaunch mm_choose(int bs, int kt, bsrmv_layout layout)
{
    for (const MmPolicyRow &p : mm_policy)
        if (bs <= p.bs_max && kt <= p.kt_max && (p.layout < 0 || p.layout == (int)layout))
            return MmLaunch{kt, p.group, p.threads};
    return MmLaunch{kt, 32, 256};
}

template <typename T>
static bsrmv_status spmm_t(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *m, int k,
                           const void *X, int64_t ldx, double beta, void *Y, int64_t ldy,
                           bsrmv_layout layout, int64_t ny, cudaStream_t s)
{
    const bool row = layout == BSRMV_LAYOUT_ROW;
    MmArgs<T> a;
    a.mb = m->mb;
    a.bs = m->bs;
    a.row_ptr = m->row_ptr;
    a.col_idx = m->col_idx;
    a.val = (const T *)m->val;
    a.xs = row ? ldx : 1;
    a.xj = row ? 1 : ldx;
    a.ys = row ? ldy : 1;
    a.yj = row ? 1 : ldy;
    a.alpha = (T)alpha;
    a.beta = (T)beta;
    a.xvec = false;
    cudaError_t e;
    if (a.alpha == T(0) || op == BSRMV_OP_T) {
        if ((e = launch_spmm_scale<T>((T *)Y, ny, k, a.ys, a.yj, a.beta, s)) != cudaSuccess)
            return cuda_fail(e, "launching the Y = beta*Y kernel");
        if (a.alpha == T(0) || m->nnzb == 0)
            return BSRMV_SUCCESS;
    }
    char what[96];
    if (op == BSRMV_OP_T) {
        a.x = (const T *)X;
        a.y = (T *)Y;
        a.kc = k;
        if ((e = launch_spmm_t<T>(a, m->order == BSRMV_COL_MAJOR ? COL : ROW, s)) != cudaSuccess) {
            snprintf(what, sizeof what, "launching the transpose SpMM (bs=%d, k=%d)", m->bs, k);
            return cuda_fail(e, what);
        }
        return BSRMV_SUCCESS;
    }
    const size_t vs = sizeof(T);
    for (int j0 = 0; j0 < k; j0 += a.kc) {
        a.kc = k - j0 < SPMM_MAX_KT ? k - j0 : SPMM_MAX_KT;
        const int kt = pow2ceil(a.kc) < 2 ? 2 : pow2ceil(a.kc);
        a.x = (const T *)X + j0 * a.xj;
        a.y = (T *)Y + j0 * a.yj;
        /* 16-byte loads of a row of X (8 bytes for two floats) */
        const size_t align = kt * vs < 16 ? kt * vs : 16;
        a.xvec = row && a.kc == kt && (uintptr_t)a.x % align == 0 && (ldx * vs) % align == 0;
        const MmLaunch l = mm_choose(m->bs, kt, layout);
        if ((e = launch_spmm_n<T>(a, m->order == BSRMV_COL_MAJOR ? COL : ROW, l, s)) !=
            cudaSuccess) {
            snprintf(what, sizeof what, "launching the SpMM kernel (bs=%d, %d vectors, g%d)",
                     m->bs, kt, l.group);
            return cuda_fail(e, what);
        }
    }
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_spmm(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA,
                                       int k, const void *d_X, int64_t ldx, double beta,
                                       void *d_Y, int64_t ldy, bsrmv_layout layout, void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_gpu_spmm: dA is NULL");
    int64_t nx, ny;
    bsrmv_status st = bsrmv_spmm_check("bsrmv_gpu_spmm", op, dA->mb * dA->bs, dA->nb * dA->bs,
                                       dA->type, alpha, k, d_X, ldx, d_Y, ldy, layout, &nx, &ny);
    if (st)
        return st;
    DeviceScope ds;
    cudaError_t e = ds.enter(dA->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    if (ny > 0 && (st = check_device_ptr(d_Y, dA->device, "Y")))
        return st;
    if (alpha != 0.0 && nx > 0 && (st = check_device_ptr(d_X, dA->device, "X")))
        return st;
    if (ny == 0)
        return BSRMV_SUCCESS;
    /* One vector stored contiguously is an SpMV: the matrix's plan. */
    if (k == 1 && (layout == BSRMV_LAYOUT_COL || (ldx == 1 && ldy == 1)))
        return bsrmv_gpu_spmv(op, alpha, dA, d_X, nx, beta, d_Y, ny, stream);
    cudaGetLastError(); /* a non-sticky error left by someone else is not ours */
    cudaStream_t s = (cudaStream_t)stream;
    return dA->type == BSRMV_DOUBLE
               ? spmm_t<double>(op, alpha, dA, k, d_X, ldx, beta, d_Y, ldy, layout, ny, s)
               : spmm_t<float>(op, alpha, dA, k, d_X, ldx, beta, d_Y, ldy, layout, ny, s);
}
