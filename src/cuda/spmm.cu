/* bsrmv_gpu_spmm: the checks, the split of the k vectors into chunks that
 * each stream A once, and the policy that gives each chunk its kernel
 * geometry by (bs, vectors, layout).  The kernels: k_spmm_impl.cuh. */
#include "k_spmm.cuh"
#include "errors.cuh"
#include "handle.cuh"
#include "scalar.cuh"

#include <stdio.h>

using namespace bsrmv_cuda;

/* The geometry of a chunk of kc vectors: the first row whose bs_max and
 * kt_max cover the matrix's bs and the chunk width KT (kc rounded up to a
 * power of two), for the layout (-1: either).
 *   vec:   bytes of a row of X a lane multiplies (16: one 16-byte load; V =
 *          vec / sizeof value, at most KT), so that the P = KT / V lanes of
 *          a row read the chunk's piece of a row of X together;
 *   group: lanes per block row; group / (P*bs) block columns side by side.
 * A warp per block row keeps 1-10 column slots on rows of ~27 blocks (a
 * 27-point grid) at bs <= 8; the reduction over them is V values per
 * halving.  Row-major X and the copy of a column-major one are read the
 * same way, so the layout does not change the choice yet. */
struct MmPolicyRow {
    int bs_max, kt_max, layout, vec, group, threads;
};
static const MmPolicyRow mm_policy[] = {
    {1 << 30, SPMM_MAX_KT, -1, 16, 32, 256},
};

static MmLaunch mm_choose(int bs, int kt, bsrmv_layout layout, size_t vs)
{
    MmLaunch l = {1, kt, 32, 256};
    if (bs <= 8) /* the staged kernel (k_spmm.cuh) */
        return staged_geometry(bs, kt);
    for (const MmPolicyRow &p : mm_policy)
        if (bs <= p.bs_max && kt <= p.kt_max && (p.layout < 0 || p.layout == (int)layout)) {
            l.v = (int)(p.vec / vs) < kt ? (int)(p.vec / vs) : kt;
            l.v = l.v > 4 ? 4 : l.v < 1 ? 1 : l.v;
            l.p = kt / l.v;
            l.group = p.group;
            l.threads = p.threads;
            break;
        }
    /* all rows of a block in one pass where the group can hold them: a
     * second pass would read the row's X again with half its lanes idle
     * (bs 5-8 at 16 doubles: V 4, P 4) */
    while (l.p * bs > l.group && l.v < 4 && l.p > 1) {
        l.v *= 2;
        l.p /= 2;
    }
    return l;
}

/* Whether a column-major X is read from a row-major copy of each chunk
 * of KT vectors (one pass over the chunk, then 16-byte loads of a row's
 * vectors in the kernels) rather than in place (a load per value, the
 * values of a row in KT columns).  In place was faster up to 4 vectors
 * per chunk (bs 2-8, 27-point grids, H100: 1.02-1.14x at KT 2 and 4) but
 * at bs 8, KT 4 (0.89x), and slower from 8 vectors on (0.55-0.99x). */
static bool mm_copy_x(int bs, int kt)
{
    return kt >= 8 || bs * kt >= 32;
}

/* The transpose kernel over all k vectors, X and Y in place (Y already
 * holds beta*Y, or the first pass of symmetric storage). */
template <typename T, typename V>
static bsrmv_status spmm_scatter(MmArgs<T, V> a, const bsrmv_gpu_matrix *m, int k, const void *X,
                                 int64_t ldx, void *Y, bool row, const char *what, cudaStream_t s)
{
    a.x = (const V *)X;
    a.xs = row ? ldx : 1;
    a.xj = row ? 1 : ldx;
    a.y = (V *)Y;
    a.kc = k;
    const cudaError_t e = launch_spmm_t<T, V>(a, m->order == BSRMV_COL_MAJOR ? COL : ROW, s);
    if (e != cudaSuccess) {
        char msg[128];
        snprintf(msg, sizeof msg, "launching %s (bs=%d, k=%d)", what, m->bs, k);
        return cuda_fail(e, msg);
    }
    return BSRMV_SUCCESS;
}

/* T: the values, V: X, Y and the sums (the handle's vtype).  op is OP_N,
 * OP_T or (complex values) OP_C.  Symmetric storage's op(A) is A or
 * conj(A) (sym_conj_a): its stored blocks as OP_N, conjugated for conj(A),
 * then the mirror pass (k_spmm_impl.cuh). */
template <typename T, typename V>
static bsrmv_status spmm_t(bsrmv_op op, Scalar alpha, bsrmv_gpu_matrix *m, int k,
                           const void *X, int64_t ldx, Scalar beta, void *Y, int64_t ldy,
                           bsrmv_layout layout, int64_t nx, int64_t ny, cudaStream_t s)
{
    const bool row = layout == BSRMV_LAYOUT_ROW;
    MmArgs<T, V> a;
    a.mb = m->mb;
    a.bs = m->bs;
    a.row_ptr = m->row_ptr;
    a.col_idx = m->col_idx;
    a.val = (const T *)m->val;
    a.ys = row ? ldy : 1;
    a.yj = row ? 1 : ldy;
    a.alpha = to_vector_type<V>(alpha);
    a.beta = to_vector_type<V>(beta);
    a.xvec = false;
    a.skip_diag = false;
    const bool conj_a = m->sym && sym_conj_a(m, op);
    a.conj = m->sym ? conj_a : op == BSRMV_OP_C;
    if (m->sym)
        op = BSRMV_OP_N;
    cudaError_t e;
    if (a.alpha == V(0) || op != BSRMV_OP_N) {
        if ((e = launch_spmm_scale<V>((V *)Y, ny, k, a.ys, a.yj, a.beta, s)) != cudaSuccess)
            return cuda_fail(e, "launching the Y = beta*Y kernel");
        if (a.alpha == V(0) || m->nnzb == 0)
            return BSRMV_SUCCESS;
    }
    const int order = m->order == BSRMV_COL_MAJOR ? COL : ROW;
    char what[128];
    if (op != BSRMV_OP_N)
        return spmm_scatter<T, V>(a, m, k, X, ldx, Y, row, "the transpose SpMM", s);
    /* A column-major X, where mm_copy_x says so: each chunk is copied
     * row-major into the handle's scratch, ld rounded up to 4 values so
     * that the kernels' vector loads stay aligned (the widest chunk is
     * copied if any is: mm_copy_x grows with KT).  The scratch is kept:
     * a stream-ordered allocation per call would be returned to the
     * device at every synchronisation and mapped again by the next call. */
    const int wmax = k < SPMM_MAX_KT ? k : SPMM_MAX_KT;
    const int64_t ldp = (wmax + 3) / 4 * 4;
    const size_t need = (size_t)(nx > 0 ? nx : 1) * (size_t)ldp * sizeof(V);
    if (!row && mm_copy_x(m->bs, pow2ceil(wmax)) && m->mm_scratch_bytes < need) {
        cudaFree(m->mm_scratch); /* waits for the calls still using it */
        m->mm_scratch = nullptr;
        m->mm_scratch_bytes = 0;
        if ((e = cudaMalloc(&m->mm_scratch, need)) != cudaSuccess) {
            snprintf(what, sizeof what, "cudaMalloc (%zu bytes of scratch for a column-major X)",
                     need);
            return cuda_fail(e, what);
        }
        m->mm_scratch_bytes = need;
    }
    V *xp = (V *)m->mm_scratch;
    bsrmv_status st = BSRMV_SUCCESS;
    for (int j0 = 0; j0 < k && !st; j0 += a.kc) {
        a.kc = k - j0 < SPMM_MAX_KT ? k - j0 : SPMM_MAX_KT;
        const int kt = pow2ceil(a.kc);
        const MmLaunch l = mm_choose(m->bs, kt, layout, sizeof(V));
        const bool copy = !row && mm_copy_x(m->bs, kt);
        a.y = (V *)Y + j0 * a.yj;
        a.xj = 1;
        if (row) {
            a.x = (const V *)X + j0;
            a.xs = ldx;
        } else if (!copy) {
            a.x = (const V *)X + j0 * ldx;
            a.xs = 1;
            a.xj = ldx;
        } else {
            a.x = xp;
            a.xs = ldp;
            if ((e = launch_spmm_pack<V>((const V *)X + j0 * ldx, ldx, nx, a.kc, xp, ldp, s)) !=
                cudaSuccess) {
                st = cuda_fail(e, "launching the copy of X");
                break;
            }
        }
        const size_t align = l.v * sizeof(V) < 16 ? l.v * sizeof(V) : 16;
        a.xvec = a.xj == 1 && (uintptr_t)a.x % align == 0 && (a.xs * sizeof(V)) % align == 0;
        if ((e = launch_spmm_n<T, V>(a, order, l, s)) != cudaSuccess) {
            snprintf(what, sizeof what, "launching the SpMM kernel (bs=%d, v%d p%d g%d)", m->bs, l.v,
                     l.p, l.group);
            st = cuda_fail(e, what);
        }
    }
    if (!st && m->sym) {
        /* U^T X (Hermitian storage: U^H X); conj(A) conjugates every
         * stored block and so flips the mirror's conjugation, as the
         * SpMV's SYM_CONJ_* bits do */
        a.conj = conj_a != m->herm;
        a.skip_diag = true;
        st = spmm_scatter<T, V>(a, m, k, X, ldx, Y, row, "the symmetric storage's mirror pass", s);
    }
    return st;
}

/* Whether symmetric storage on its own arrays multiplies column-major
 * vectors with one SpMV each rather than with the two passes: at few
 * vectors the passes' scatter costs more than it saves (H100, SPD 27-point
 * grids, docs/SYMMETRIC.md "Several vectors on the GPU"): below 4 vectors,
 * below 8 at bs <= 2. */
static bool sym_by_columns(const bsrmv_gpu_matrix *m, int k)
{
    return m->sym && !m->use_full && k < (m->bs <= 2 ? 8 : 4);
}

/* k SpMVs on the columns of column-major X and Y (alpha, beta: values of
 * the vector type); X may be NULL where alpha is 0. */
static bsrmv_status spmv_columns(bsrmv_op op, const void *alpha, const bsrmv_gpu_matrix *dA, int k,
                                 const void *d_X, int64_t ldx, const void *beta, void *d_Y,
                                 int64_t ldy, int64_t nx, int64_t ny, void *stream)
{
    const size_t vs = bsrmv_type_size(dA->vtype);
    for (int j = 0; j < k; j++) {
        const void *xj = d_X ? (const char *)d_X + (size_t)j * (size_t)ldx * vs : nullptr;
        bsrmv_status st = bsrmv_gpu_spmv_scalars(op, alpha, dA, xj, nx, beta,
                                                 (char *)d_Y + (size_t)j * (size_t)ldy * vs, ny,
                                                 stream);
        if (st)
            return st;
    }
    return BSRMV_SUCCESS;
}

/* The kernels of the handle's (value, vector) type pair. */
static bsrmv_status spmm_pair(bsrmv_op op, Scalar alpha, bsrmv_gpu_matrix *m, int k,
                              const void *X, int64_t ldx, Scalar beta, void *Y, int64_t ldy,
                              bsrmv_layout layout, int64_t nx, int64_t ny, cudaStream_t s)
{
    switch (m->type) {
    case BSRMV_COMPLEX_DOUBLE:
        return spmm_t<cplx<double>, cplx<double>>(op, alpha, m, k, X, ldx, beta, Y, ldy, layout, nx, ny, s);
    case BSRMV_COMPLEX_FLOAT:
        return spmm_t<cplx<float>, cplx<float>>(op, alpha, m, k, X, ldx, beta, Y, ldy, layout, nx, ny, s);
    case BSRMV_DOUBLE:
        return spmm_t<double, double>(op, alpha, m, k, X, ldx, beta, Y, ldy, layout, nx, ny, s);
    default:
        return m->vtype == BSRMV_DOUBLE
                   ? spmm_t<float, double>(op, alpha, m, k, X, ldx, beta, Y, ldy, layout, nx, ny, s)
                   : spmm_t<float, float>(op, alpha, m, k, X, ldx, beta, Y, ldy, layout, nx, ny, s);
    }
}

/* What bsrmv_gpu_spmm and _scalars share: the checks, then the product. */
static bsrmv_status gpu_spmm(const char *who, bsrmv_op op, Scalar alpha, const bsrmv_gpu_matrix *dA,
                             int k, const void *d_X, int64_t ldx, Scalar beta, void *d_Y,
                             int64_t ldy, bsrmv_layout layout, void *stream)
{
    const bool cx = bsrmv_type_is_complex(dA->type);
    /* The conjugate transpose of a real matrix is its transpose. */
    if (op == BSRMV_OP_C && !cx)
        op = BSRMV_OP_T;
    /* the full storage of a small symmetric matrix: op(A) is A, or conj(A),
     * which is the full storage's op C (complex symmetric) or op T
     * (Hermitian), as for the SpMV */
    if (dA->use_full)
        return gpu_spmm(who, sym_conj_a(dA, op) ? op : BSRMV_OP_N, alpha, dA->full, k, d_X, ldx,
                        beta, d_Y, ldy, layout, stream);
    if (dA->sym && dA->vtype != dA->type)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "%s: symmetric storage is not built for float "
                          "values with double vectors", who);
    int64_t nx, ny;
    /* X and Y in the vector type: double for float values with double
     * vectors (mixed precision) */
    bsrmv_status st = bsrmv_spmm_check(who, op, dA->mb * dA->bs, dA->nb * dA->bs, dA->vtype,
                                       alpha.zero(), k, d_X, ldx, d_Y, ldy, layout, &nx, &ny);
    if (st)
        return st;
    DeviceScope ds;
    cudaError_t e = ds.enter(dA->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    if (ny > 0 && (st = check_device_ptr(d_Y, dA->device, "Y")))
        return st;
    if (!alpha.zero() && nx > 0 && (st = check_device_ptr(d_X, dA->device, "X")))
        return st;
    if (ny == 0)
        return BSRMV_SUCCESS;
    /* One vector stored contiguously is an SpMV: the matrix's plan (op N
     * only for mixed precision: the SpMV has no mixed transpose); so are
     * a few columns of symmetric storage (sym_by_columns). */
    if ((k == 1 && (layout == BSRMV_LAYOUT_COL || (ldx == 1 && ldy == 1)) &&
         (op == BSRMV_OP_N || dA->vtype == dA->type)) ||
        (layout == BSRMV_LAYOUT_COL && sym_by_columns(dA, k))) {
        ScalarBuf a, b;
        return spmv_columns(op, store_scalar(dA->vtype, alpha, &a), dA, k, d_X, ldx,
                            store_scalar(dA->vtype, beta, &b), d_Y, ldy, nx, ny, stream);
    }
    cudaGetLastError(); /* a non-sticky error left by someone else is not ours */
    cudaStream_t s = (cudaStream_t)stream;
    /* the handle's scratch is the only part of it the call changes */
    bsrmv_gpu_matrix *m = (bsrmv_gpu_matrix *)dA;
    return spmm_pair(op, alpha, m, k, d_X, ldx, beta, d_Y, ldy, layout, nx, ny, s);
}

extern "C" bsrmv_status bsrmv_gpu_spmm(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA,
                                       int k, const void *d_X, int64_t ldx, double beta,
                                       void *d_Y, int64_t ldy, bsrmv_layout layout, void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_gpu_spmm: dA is NULL");
    return gpu_spmm("bsrmv_gpu_spmm", op, Scalar{alpha, 0.0}, dA, k, d_X, ldx, Scalar{beta, 0.0},
                    d_Y, ldy, layout, stream);
}

extern "C" bsrmv_status bsrmv_gpu_spmm_scalars(bsrmv_op op, const void *alpha,
                                               const bsrmv_gpu_matrix *dA, int k, const void *d_X,
                                               int64_t ldx, const void *beta, void *d_Y,
                                               int64_t ldy, bsrmv_layout layout, void *stream)
{
    if (!dA || !alpha || !beta)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_gpu_spmm_scalars: NULL matrix or scalar");
    return gpu_spmm("bsrmv_gpu_spmm_scalars", op, load_scalar(dA->vtype, alpha), dA, k, d_X, ldx,
                    load_scalar(dA->vtype, beta), d_Y, ldy, layout, stream);
}

/* Y = A X for the solvers' columns (solve_internal.h), which lie interleaved
 * in one allocation: no overlap check, the caller has checked the rest.
 * Symmetric storage runs its full copy where the plan does, else its two
 * passes or, for few columns, one SpMV each (sym_by_columns). */
extern "C" bsrmv_status bsrmv_gpu_spmm_cols(const bsrmv_gpu_matrix *dA, int k, const void *d_X,
                                           int64_t ldx, void *d_Y, int64_t ldy, void *stream)
{
    const int64_t nx = dA->nb * dA->bs, ny = dA->mb * dA->bs;
    if (k == 1 || sym_by_columns(dA, k)) {
        ScalarBuf a, b;
        return spmv_columns(BSRMV_OP_N, store_scalar(dA->vtype, Scalar{1.0, 0.0}, &a), dA, k,
                            d_X, ldx, store_scalar(dA->vtype, Scalar{0.0, 0.0}, &b), d_Y, ldy, nx,
                            ny, stream);
    }
    if (dA->use_full)
        dA = dA->full;
    cudaGetLastError(); /* a non-sticky error left by someone else is not ours */
    cudaStream_t s = (cudaStream_t)stream;
    bsrmv_gpu_matrix *m = (bsrmv_gpu_matrix *)dA;
    const bsrmv_layout col = BSRMV_LAYOUT_COL;
    return spmm_pair(BSRMV_OP_N, Scalar{1.0, 0.0}, m, k, d_X, ldx, Scalar{0.0, 0.0}, d_Y, ldy, col,
                     nx, ny, s);
}
